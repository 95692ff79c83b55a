"""INTENT_CLASSIFY: the agent's prompt and schema, a bare prompt without the clinical framing, T=0.3
(more JSON parse errors), and the rule (``rules.decide``) that settles most messages before the model."""

from __future__ import annotations

from typing import Any

from docgemma.agent import prompts, rules
from docgemma.agent.schemas import intent_schema
from docgemma.eval.experiments.core import Case, Probe, Suite, Variant, case_state, load_cases
from docgemma.llm.base import Message
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()
NAMES = REGISTRY.names
BARE_SYSTEM = "Classify the message as DIRECT or TOOL_NEEDED and summarise it."


def _score(case: Case, intent: str, tool: str | None) -> dict[str, Any]:
    expected_tool = case.get("expected_tool")
    return {"output": f"{intent} {tool or ''}".strip(), "correct": intent == case["expected_intent"],
            "tool_hint_correct": expected_tool is None or tool == expected_tool}


def model(bare: bool = False, temperature: float | None = None) -> Any:
    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        messages = prompts.intent_messages(case_state(case))
        if bare:
            messages[0] = Message(role="system", content=BARE_SYSTEM)
        out: Any = probe.json(messages, intent_schema(NAMES), "intent_classify", temperature=temperature)
        return _score(case, str(out.intent), out.suggested_tool)
    return trial


def by_rule(probe: Probe | None, case: Case) -> dict[str, Any]:
    decision = rules.decide(case_state(case), REGISTRY)
    if decision is None:
        return {"output": "(model asked)", "correct": False, "tool_hint_correct": False, "decided": False}
    return {**_score(case, decision.intent, decision.tool), "decided": True}


SUITE = Suite(
    name="intent_classify",
    node="intent_classify",
    description="DIRECT vs TOOL_NEEDED (and whether the non-binding suggested_tool hint is right).",
    cases=lambda: load_cases("intent"),
    variants=(
        Variant("project", model(), description="the agent's prompt, schema and T=0"),
        Variant("bare_prompt", model(bare=True), description="no clinical identity framing"),
        Variant("t0.3", model(temperature=0.3), description="T=0.3 (seed 002: more parse errors)"),
        Variant("rule", by_rule, uses_model=False, description="rules.decide (None = the model is asked)"),
    ),
)
