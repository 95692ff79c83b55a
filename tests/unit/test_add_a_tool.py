"""The extension point "add a tool" (docs/architecture.md): one module shaped like a ``tools/catalog/`` module
(``tests/renal_dose_tool.py``: its arguments, task keywords, extractor, 1-shot example, follow-up, executor and
``SPEC``) and one registration line are all the agent needs. Registered here in the test itself — no other
module changes — the agent's rules route to it, prefill its arguments, order it among other tools, offer it as
the model's example and suggest it, and a whole turn runs it. The package's own tools have the same shape: each
catalog module is self-contained and the registry only lists them."""

from __future__ import annotations

import ast
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from docgemma.agent.answer import follow_ups
from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.nodes.tool_select import example_for
from docgemma.agent.patterns import remaining_tools
from docgemma.agent.prefill import prefill
from docgemma.agent.rules import decide
from docgemma.clinical.entities import extract_entities
from docgemma.tools import catalog
from docgemma.tools.registry import CATALOG, default_registry
from docgemma.tools.spec import ToolSpec
from tests import renal_dose_tool

NAME = renal_dose_tool.SPEC.name
RENAL_DOSE = renal_dose_tool.SPEC
REG = default_registry().with_tools(renal_dose_tool.SPEC)  # the one registration line
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


#: Where a catalog module may take a part from instead of defining it: the helpers the tools share.
SHARED = {"extract": "docgemma.tools.extract", "active_patient_after": "docgemma.tools.active_patient",
          "follow_up": "docgemma.tools.routing"}


def own_parts(module: ModuleType) -> list[str]:
    """The parts of ``module``'s spec defined neither in the module nor in a shared helper module (none, for a
    self-contained tool module)."""
    spec = module.SPEC
    stray = []
    for part in ("args_model", "extract", "follow_up", "pre_write_check", "active_patient_after", "executor"):
        value = getattr(spec, part)
        value = value.func if isinstance(value, partial) else value
        if value is not None and value.__module__ not in (module.__name__, SHARED.get(part)):
            stray.append(f"{part} from {value.__module__}")
    return stray


@pytest.mark.parametrize("module", [*CATALOG, renal_dose_tool], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_a_tool_module_is_self_contained(module: ModuleType) -> None:
    """One ToolSpec per module, named like the module (the catalog's), and every part of it defined there."""
    specs = [v for v in vars(module).values() if isinstance(v, ToolSpec)]
    assert specs == [module.SPEC]
    if module is not renal_dose_tool:
        assert module.__name__.rsplit(".", 1)[-1] == module.SPEC.name
    assert own_parts(module) == []


def test_the_registry_only_lists_the_catalog() -> None:
    """Every catalog module is registered, once, in the registry's order; no catalog module imports another."""
    folder = Path(catalog.__file__).parent
    files = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert {m.__name__.rsplit(".", 1)[-1] for m in CATALOG} == files and len(CATALOG) == len(files)
    assert default_registry().names == tuple(m.SPEC.name for m in CATALOG)
    for path in folder.glob("*.py"):
        imported = {n.module for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in imported if m and m.startswith("docgemma.tools.catalog")}, path.name


def test_the_check_sees_a_part_defined_elsewhere() -> None:
    """The checker itself: a module whose spec takes its parts from another module is not self-contained."""
    borrowing = ModuleType("borrowing")
    borrowing.SPEC = renal_dose_tool.SPEC  # type: ignore[attr-defined]
    assert own_parts(borrowing) == [f"{part} from tests.renal_dose_tool" for part in
                                    ("args_model", "extract", "follow_up", "executor")]
