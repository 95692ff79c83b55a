"""RESULT_CLASSIFY (5 classes): the agent's prompt and schema; T=0.3; and the rule
(``result_classify.classify_in_code``) that files errors and empty results without the model."""

from __future__ import annotations

from typing import Any

from docgemma.agent import prompts
from docgemma.agent.nodes.result_classify import classify_in_code
from docgemma.agent.schemas import ResultAssessment
from docgemma.agent.state import ToolResult
from docgemma.eval.experiments.core import Case, Probe, Suite, Variant, case_state, load_cases, tool_result
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()


def _result(case: Case) -> ToolResult:
    return tool_result(REGISTRY, case["tool"], case["outcome"], entity=case.get("entity", ""))


def _ok(case: Case, quality: str) -> bool:
    return quality == case["expected"] or quality in case.get("acceptable", [])


def model(temperature: float | None = None) -> Any:
    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        state = case_state(case, task_summary=case["query"])
        out = probe.json(prompts.result_messages(state, _result(case)), ResultAssessment, "result_classify",
                         temperature=temperature)
        return {"output": out.quality, "correct": _ok(case, out.quality), "expected": case["expected"]}
    return trial


def by_rule(probe: Probe | None, case: Case) -> dict[str, Any]:
    quality = classify_in_code(_result(case))
    return {"output": quality or "(model asked)", "correct": quality is not None and _ok(case, quality),
            "decided": quality is not None, "expected": case["expected"]}


SUITE = Suite(
    name="result_classify",
    node="result_classify",
    description="Quality of a tool result: success_rich, success_partial, no_results, error_retryable, error_fatal.",
    cases=lambda: load_cases("result_classify"),
    variants=(
        Variant("project", model(), description="the agent's prompt and schema at T=0"),
        Variant("t0.3", model(0.3), description="T=0.3"),
        Variant("rule", by_rule, uses_model=False, description="classify_in_code: errors and empty results by code"),
    ),
)
