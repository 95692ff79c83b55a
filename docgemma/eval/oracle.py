"""The golden oracle: a model that answers every call with the turn's expected labels, and mock tools that answer
from the turn's mocks, so a golden run measures the deterministic machinery (entity extraction, validation, tool
execution, routing, error handling, clarification, loop termination)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from docgemma.agent.assistant import Assistant
from docgemma.agent.schemas import ImageFindingsOutput
from docgemma.eval.matching import PREVIOUS_SEARCH
from docgemma.llm.base import LLM
from docgemma.llm.fake import Call, FakeLLM
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.registry import ToolContext, ToolRegistry, installed_registry


def expected_tools(turn: dict[str, Any]) -> list[str]:
    """The tools the turn should call, in order."""
    if turn.get("expected_tools") or turn.get("oracle_tools"):
        return list(turn.get("expected_tools") or turn["oracle_tools"])
    return [turn["expected_tool"]] if turn.get("expected_tool") else []


@dataclass
class TurnContext:
    """What the oracle and the mock tools know about the turn being run."""

    turn: dict[str, Any] = field(default_factory=dict)
    tool_index: int = 0
    current_tool: str | None = None
    mock_index: int = 0
    last_search_id: str | None = None


class Oracle:
    """Answers every model call with the turn's expected labels (see module docstring)."""

    def __init__(self, registry: ToolRegistry, ctx: TurnContext) -> None:
        self.registry = registry
        self.ctx = ctx

    def __call__(self, call: Call) -> BaseModel | dict[str, Any] | str:
        turn = self.ctx.turn
        if call.schema is None:
            return f"Oracle answer to: {turn.get('user_input', '')}"
        name = call.schema.__name__
        if name == "IntentClassification":
            tools = expected_tools(turn)
            return {"intent": turn.get("expected_intent", "DIRECT"), "task_summary": turn.get("user_input", "")[:140],
                    "suggested_tool": tools[0] if tools else None}
        if name == "ToolSelection":
            tools = expected_tools(turn)
            if self.ctx.tool_index < len(tools):
                tool = tools[self.ctx.tool_index]
                self.ctx.tool_index += 1
            else:
                tool = tools[-1] if tools else self.registry.names[0]
            self.ctx.current_tool = tool
            return {"tool_name": tool}
        if name == "ResultAssessment":
            return {"quality": turn.get("expected_result_classification", "success_rich")}
        if name == "RetryStrategy":
            return {"strategy": turn.get("oracle_retry_strategy", "retry_same")}
        if call.schema is ImageFindingsOutput:
            return {"modality": "ct", "findings": ["Oracle finding: image received"], "confidence": "high"}
        return self._args(call.schema)

    def _args(self, schema: type[BaseModel]) -> dict[str, Any]:
        # Stage 1 may have been decided by rule (no ToolSelection call): the schema names the tool.
        by_schema = [s.name for s in self.registry if s.args_model.__name__ == schema.__name__]
        tool = self.ctx.current_tool if self.ctx.current_tool in by_schema else next(iter(by_schema), None)
        expected = self.ctx.turn.get("expected_args", {}) if tool == self.ctx.turn.get("expected_tool") else {}
        expected = {**expected, **self.ctx.turn.get("expected_args_by_tool", {}).get(tool, {})}
        args: dict[str, Any] = {}
        for fname, info in schema.model_fields.items():
            if fname in expected:
                args[fname] = self._concrete(expected[fname])
            elif info.is_required():
                args[fname] = ["not specified", "not specified"] if "list" in str(info.annotation) else "not specified"
        return args

    def _concrete(self, value: Any) -> Any:
        if value == PREVIOUS_SEARCH:
            return self.ctx.last_search_id or "unknown-000"
        if isinstance(value, str):
            return value.split("|")[0]
        return value


def mock_executors(registry: ToolRegistry, ctx: TurnContext) -> dict[str, Any]:
    """Executors that answer from the turn's mocks, or run the real tool when the turn has none."""

    def make(tool: str) -> Any:
        real = registry[tool]

        def run(args: BaseModel, context: ToolContext) -> ToolOutcome:
            turn = ctx.turn
            mocks = turn.get("mock_tool_results")
            if mocks:
                outcome: ToolOutcome = mocks[min(ctx.mock_index, len(mocks) - 1)]
                ctx.mock_index += 1
            elif "mock_tool_result" in turn:
                outcome = turn["mock_tool_result"]
            else:
                outcome = real.run(args, context) if real.executor else failure("not_configured")
            data = outcome.get("data")
            if real.patient_search and outcome.get("status") == "success" and isinstance(data, dict):
                matches = data.get("matches", [])
                if matches:
                    ctx.last_search_id = str(matches[0]["id"])
            return outcome

        return run

    return {name: make(name) for name in registry.names}


def golden_assistant(llm: LLM | None = None) -> tuple[Assistant, TurnContext, ToolRegistry]:
    """An assistant whose tools answer from each turn's mocks; ``llm=None`` answers with the oracle."""
    ctx = TurnContext()
    base = installed_registry()  # the installed tools answer from their mocks too
    registry = base.with_executors(mock_executors(base, ctx))
    model: LLM = FakeLLM(responder=Oracle(registry, ctx), name="oracle") if llm is None else llm
    return Assistant(model, registry), ctx, registry
