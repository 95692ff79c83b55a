"""The decisions code took away from the model, measured both ways on the same cases.

* sufficiency — "is the information gathered enough?"; rule: ``router.decide_route`` (SYNTHESIZE = enough);
* ask_user / skip — what to do after a tool error; rule: ``error_handler.deterministic_action``;
* plan — every tool of the request up front (TaskPlan, five nullable slots); rule:
  ``patterns.remaining_tools`` (the reactive loop asks for one tool at a time).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, create_model

from docgemma.agent import prompts
from docgemma.agent.nodes.error_handler import deterministic_action
from docgemma.agent.nodes.router import decide_route
from docgemma.agent.patterns import remaining_tools
from docgemma.agent.schemas import tool_selection_schema
from docgemma.agent.state import AgentState
from docgemma.eval.experiments.core import Case, Probe, Suite, Variant, case_state, load_cases, tool_result
from docgemma.llm.base import Message
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()
NAMES = REGISTRY.names


class SufficiencyCheck(BaseModel):
    """The rejected LLM sufficiency check."""

    sufficient: bool


class ErrorAction(BaseModel):
    """The rejected LLM error routing."""

    action: Literal["retry", "ask_user", "skip"]


@lru_cache(maxsize=1)
def plan_schema() -> type[BaseModel]:
    """The rejected full-plan schema: five nullable tool slots (the model fills every one)."""
    tool: Any = tool_selection_schema(NAMES).model_fields["tool_name"].annotation
    slots: dict[str, Any] = {f"step_{i}": (tool | None, None) for i in range(1, 6)}
    return create_model("TaskPlan", **slots)


def cases() -> list[Case]:
    out = [{**c, "category": "sufficiency"} for c in load_cases("anti_patterns", "sufficiency")]
    out += load_cases("anti_patterns", "error_action")
    out += [{**c, "category": "plan"} for c in load_cases("anti_patterns", "plan")]
    # Interleave the categories, so a --limit run still sees each of them.
    by_cat: dict[str, list[Case]] = {}
    for c in out:
        by_cat.setdefault(c["category"], []).append(c)
    mixed: list[Case] = []
    for i in range(max(len(v) for v in by_cat.values())):
        mixed += [v[i] for v in by_cat.values() if i < len(v)]
    return mixed


def _done_state(case: Case) -> AgentState:
    results = [tool_result(REGISTRY, d["tool"], {"status": "success", "data": d["data"]}, d["args"])
               for d in case["done"]]
    return case_state(case, tool_results=results, step_count=len(results),
                      last_result_classification="success_rich", skipped_tools=[])


def _error(case: Case) -> Any:
    outcome = {"status": "error", "error_type": case["error_type"], "details": case.get("details", {})}
    return tool_result(REGISTRY, case["tool"], outcome, case["args"], case.get("entity", ""))


def _model_sufficiency(probe: Probe, case: Case) -> str:
    state = _done_state(case)
    gathered = "\n\n".join(prompts.fenced(r["tool_label"], r["formatted_result"]) for r in state["tool_results"])
    system = ("You are a clinical decision-support assistant. Decide whether the information gathered so far is "
              "sufficient to answer the clinician's request completely.")
    user = f"Clinician's request: {case['query']}\n\nInformation gathered:\n{gathered}\n\nIs it sufficient?"
    out = probe.json([Message(role="system", content=system), Message(role="user", content=user)],
                     SufficiencyCheck, "error_retry")
    return "sufficient" if out.sufficient else "insufficient"


def _model_action(probe: Probe, case: Case) -> str:
    result = _error(case)
    system = ("A tool call failed. Choose what to do next: retry the call, ask_user (the clinician must clarify "
              "something), or skip (give up on this tool and continue).")
    user = (f"Clinician's request: {case['query']}\nTool: {result['tool_label']}\nWhat happened: {result['error']}\n"
            f"Retries already made: {case.get('retry_count', 0)}")
    out = probe.json([Message(role="system", content=system), Message(role="user", content=user)],
                     ErrorAction, "error_retry")
    return str(out.action)


def _model_plan(probe: Probe, case: Case) -> list[str]:
    system = ("You are a clinical planner. List, in order, every tool needed to complete the request "
              f"(leave unused steps empty).\n\nAvailable tools:\n{REGISTRY.tool_list()}")
    out = probe.json([Message(role="system", content=system), Message(role="user", content=case["query"])],
                     plan_schema(), "tool_select_stage1", max_tokens=128)
    return [str(v) for v in out.model_dump().values() if v]


def model(probe: Probe | None, case: Case) -> dict[str, Any]:
    assert probe is not None
    category = case["category"]
    produced: Any
    if category == "sufficiency":
        produced = _model_sufficiency(probe, case)
    elif category == "plan":
        produced = _model_plan(probe, case)
    else:
        produced = _model_action(probe, case)
    return {"output": str(produced), "correct": produced == case["expected"], "category": category}


def rule(probe: Probe | None, case: Case) -> dict[str, Any]:
    category = case["category"]
    produced: Any
    if category == "sufficiency":
        action, _, _ = decide_route(_done_state(case), REGISTRY)
        produced = "sufficient" if action == "SYNTHESIZE" else "insufficient"
    elif category == "plan":
        produced = remaining_tools(case_state(case), REGISTRY)
    else:
        fixed = deterministic_action(case_state(case, retry_count=case.get("retry_count", 0)), _error(case))
        produced = {"ASK_USER": "ask_user", "SKIP": "skip"}[fixed[0]] if fixed else "retry"
    return {"output": str(produced), "correct": produced == case["expected"], "category": category}


SUITE = Suite(
    name="anti_patterns",
    node="(decisions code owns)",
    description="Sufficiency, ask_user, skip and full-plan decomposition: the model's answer next to the rule's.",
    cases=cases,
    variants=(
        Variant("model", model, description="the decision asked of the model (the design's rejected one)"),
        Variant("rule", rule, uses_model=False, description="the project's deterministic code"),
    ),
)
