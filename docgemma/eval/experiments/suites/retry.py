"""ERROR_HANDLER's one model decision: retry_same vs retry_different_args (92% on MedGemma 4B). Compared with
the design's schema (an optional reasoning field after the decision) and the trivial "always retry_same"
(what the agent falls back to when the model output is unusable)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from docgemma.agent import prompts
from docgemma.agent.schemas import RetryStrategy
from docgemma.eval.experiments.core import Case, Probe, Suite, Variant, case_state, load_cases, tool_result
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()


class RetryWithReasoning(BaseModel):
    """The design's RetryStrategy (the project dropped ``reasoning``: it may not fit 64 tokens)."""

    strategy: Literal["retry_same", "retry_different_args"]
    reasoning: str | None = Field(default=None, max_length=100)


def model(reasoning: bool = False) -> Any:
    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        result = tool_result(REGISTRY, case["tool"], {"status": "error", "error_type": case["error_type"]},
                             case["args"], case.get("entity", ""))
        messages = prompts.retry_messages(case_state(case), result)
        schema: type[BaseModel] = RetryWithReasoning if reasoning else RetryStrategy
        out: Any = probe.json(messages, schema, "error_retry", max_tokens=96 if reasoning else None)
        return {"output": out.strategy, "correct": out.strategy == case["expected"], "expected": case["expected"]}
    return trial


def always_same(probe: Probe | None, case: Case) -> dict[str, Any]:
    return {"output": "retry_same", "correct": case["expected"] == "retry_same", "expected": case["expected"]}


SUITE = Suite(
    name="retry_strategy",
    node="error_retry",
    description="retry_same for transient failures, retry_different_args when other arguments should work.",
    cases=lambda: load_cases("retry"),
    variants=(
        Variant("project", model(), description="the agent's prompt and schema"),
        Variant("with_reasoning", model(reasoning=True), description="seed 002's schema with a reasoning field"),
        Variant("always_retry_same", always_same, uses_model=False, description="the fallback: always retry_same"),
    ),
)
