"""TOOL_SELECT stage 2: argument extraction for the expected tool, with and without the deterministic
entity hints, with the schema order reversed (the null cascade: after a null, all nulls),
and the rule (``extract.prefill``) that fills what the message states before the model is asked."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, create_model

from docgemma.agent import prompts
from docgemma.agent.nodes.tool_select import entity_hints
from docgemma.agent.prefill import prefill
from docgemma.eval.experiments.core import Case, Probe, Suite, Unusable, Variant, case_state, load_cases
from docgemma.eval.matching import args_match
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()


@lru_cache(maxsize=32)
def reversed_schema(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` with optional fields first and required ones last (critical-last)."""
    fields = model.model_fields
    order = [n for n, f in fields.items() if not f.is_required()] + [n for n, f in fields.items() if f.is_required()]
    return create_model(f"{model.__name__}CriticalLast",  # type: ignore[call-overload]
                        **{n: (fields[n].annotation, fields[n]) for n in order})


def model(hints: bool = True, critical_first: bool = True) -> Any:
    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        spec = REGISTRY[case["expected_tool"]]
        state = case_state(case)
        messages = prompts.stage2_messages(state, spec, entity_hints(state) if hints else [])
        schema = spec.args_model if critical_first else reversed_schema(spec.args_model)
        try:
            out = probe.json(messages, schema, "tool_select_stage2", max_tokens=max(128, spec.arg_max_tokens))
        except Unusable:
            return {"output": "(unusable)", "correct": False, "parse_error": True}
        args = out.model_dump(exclude_none=True)
        return {"output": str(args), "correct": args_match(case["expected_args"], args)}
    return trial


def by_rule(probe: Probe | None, case: Case) -> dict[str, Any]:
    args = prefill(REGISTRY[case["expected_tool"]], case_state(case))
    return {"output": str(args), "correct": args_match(case["expected_args"], args),
            "decided": set(case["expected_args"]) <= set(args)}


SUITE = Suite(
    name="stage2_args",
    node="tool_select_stage2",
    description="All expected arguments extracted correctly for the expected tool.",
    cases=lambda: load_cases("tool_select"),
    variants=(
        Variant("with_hints", model(), description="the agent's stage-2 prompt with entity hints, full schema"),
        Variant("without_hints", model(hints=False), description="no entity hints"),
        Variant("critical_last", model(critical_first=False), description="optional fields before required ones"),
        Variant("rule", by_rule, uses_model=False, description="extract.prefill: what code reads off the message"),
    ),
)
