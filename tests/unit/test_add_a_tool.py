"""The extension point "add a tool" (docs/architecture.md): one ToolSpec, with its task keywords, argument
extractor, 1-shot example and follow-up, is all the agent needs. Registered here in the test itself — no other
module changes — the agent's rules route to it, prefill its arguments, order it among other tools, offer it as
the model's example and suggest it, and a whole turn runs it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from docgemma.agent.answer import follow_ups
from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.extract import prefill
from docgemma.agent.nodes.tool_select import example_for
from docgemma.agent.patterns import remaining_tools
from docgemma.agent.rules import decide
from docgemma.clinical.entities import extract_entities
from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.registry import ToolContext, ToolSpec, default_registry
from docgemma.tools.routing import Request, TurnFacts

NAME = "calculate_renal_dose"


class RenalDoseArgs(BaseModel):
    drug_name: str
    creatinine_clearance: str | None = None


def renal_dose_args(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    drugs = request.entities["drug_mentions"]
    if len(drugs) == 1:
        out["drug_name"] = drugs[0]
    clearance = re.search(r"\bcrcl\s*(?:of\s*)?(\d+)", request.query, re.IGNORECASE)
    if clearance:
        out["creatinine_clearance"] = clearance.group(1)
    return out


def renal_dose_follow_up(facts: TurnFacts) -> list[str]:
    return [f"What is the renal dose of {facts.drugs[0]}?"] if facts.drugs else []


def renal_dose(args: BaseModel, context: ToolContext) -> ToolOutcome:
    assert isinstance(args, RenalDoseArgs)
    return success({"drug": args.drug_name, "crcl": args.creatinine_clearance, "dose": "reduce to once daily"})


RENAL_DOSE = ToolSpec(
    NAME,
    "Renal Dose Calculator",
    "Compute a renally adjusted dose of a drug from the creatinine clearance. Use when a clinician asks how to "
    "dose a drug in kidney impairment.",
    RenalDoseArgs,
    "What is the renal dose of enoxaparin for a CrCl of 25?",
    lookup=True,
    keywords=("renal dose", "crcl", "creatinine clearance"),
    extract=renal_dose_args,
    follow_up=renal_dose_follow_up,
    executor=renal_dose,
)
REG = default_registry().with_tools(RENAL_DOSE)
QUERY = "Calculate the renal dose of enoxaparin for CrCl 25"


def state(query: str, **extra: Any) -> Any:
    return {"user_query": query, "extracted_entities": extract_entities(query), "active_patient": None, **extra}


def test_the_rules_route_to_a_registered_tool_by_its_keywords() -> None:
    decision = decide(state(QUERY), REG)
    assert decision is not None and (decision.intent, decision.tool) == ("TOOL_NEEDED", NAME)
    without = decide(state(QUERY), default_registry())
    assert without is None or without.tool != NAME


def test_its_extractor_prefills_its_arguments() -> None:
    assert prefill(REG[NAME], state(QUERY)) == {"drug_name": "enoxaparin", "creatinine_clearance": "25"}


def test_it_runs_in_the_order_the_clinician_asked_for_it() -> None:
    first = "What is the renal dose of enoxaparin for CrCl 25, and check FDA warnings for dofetilide"
    assert remaining_tools(state(first), REG) == [NAME, "check_drug_safety"]
    second = "Check FDA warnings for dofetilide, then the renal dose of enoxaparin"
    assert remaining_tools(state(second), REG) == ["check_drug_safety", NAME]


def test_its_example_and_follow_up_are_offered() -> None:
    assert example_for(state(QUERY, suggested_tool=NAME), REG) is RENAL_DOSE
    other = state("Is warfarin safe in pregnancy?")
    assert "What is the renal dose of warfarin?" in follow_ups(other, REG)
    assert "What is the renal dose of warfarin?" not in follow_ups(other, default_registry())


def test_a_whole_turn_runs_the_registered_tool() -> None:
    result = Assistant(demo_llm(REG), REG).run_turn("renal", QUERY)
    assert isinstance(result, TurnResult)
    assert [(t["tool"], t["status"]) for t in result.tools] == [(NAME, "success")]
    assert result.tools[0]["args"] == {"drug_name": "enoxaparin", "creatinine_clearance": "25"}
    assert "Renal Dose Calculator" in result.answer and "reduce to once daily" in result.answer
    assert NAME not in result.answer  # its name is scrubbed like any other tool's


def test_a_name_is_registered_once() -> None:
    with pytest.raises(KeyError, match=NAME):
        REG.with_tools(RENAL_DOSE)
