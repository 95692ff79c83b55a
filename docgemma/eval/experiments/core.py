"""What every suite shares: datasets, the metered model probe, case states (answers are matched with
:mod:`docgemma.eval.matching`, as the golden runner matches them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, TypeVar

from pydantic import BaseModel

from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.agent.state import AgentState, PatientRef, ToolResult
from docgemma.clinical.entities import extract_entities
from docgemma.llm.base import LLM, LLMOutputError, Messages
from docgemma.llm.observed import ModelCall, ObservedLLM
from docgemma.tools.outcome import format_error
from docgemma.tools.registry import ToolRegistry

ModelT = TypeVar("ModelT", bound=BaseModel)
Case = dict[str, Any]


def load_cases(name: str, section: str = "cases") -> list[Case]:
    """The labelled cases of ``data/<name>.json`` (``section`` picks a list inside it)."""
    text = resources.files("docgemma.eval.experiments").joinpath("data", f"{name}.json").read_text(encoding="utf-8")
    cases: list[Case] = json.loads(text)[section]
    return cases


class Unusable(Exception):
    """The model's output did not validate (recorded as a parse error, scored wrong)."""

    def __init__(self, raw: str) -> None:
        super().__init__(raw)
        self.raw = raw


class Probe:
    """One trial's view of a backend: its calls go through the observed model, and this probe, one of its
    observers, counts them (calls, prompt tokens by ``count_tokens``, model time) and keeps each output."""

    def __init__(self, llm: LLM) -> None:
        self.llm = ObservedLLM(llm, [self.observe])
        self.calls = 0
        self.prompt_tokens = 0
        self.seconds = 0.0
        self.outputs: list[str] = []

    def observe(self, call: ModelCall) -> None:
        """Count a call; keep its output (a reply that did not validate: its raw text)."""
        self.calls += 1
        self.prompt_tokens += self.llm.inner.count_tokens(call.messages)
        self.seconds += call.seconds
        if isinstance(call.error, LLMOutputError):
            self.outputs.append(call.error.raw)
        elif isinstance(call.output, str):
            self.outputs.append(call.output)
        elif call.output is not None:
            self.outputs.append(call.output.model_dump_json())

    def json(self, messages: Messages, schema: type[ModelT], node: str, *, temperature: float | None = None,
             max_tokens: int | None = None) -> ModelT:
        """A constrained call with ``node``'s settings (NODE_CONFIG) unless overridden."""
        config = NODE_CONFIG[node]
        try:
            return self.llm.generate_json(
                messages, schema,
                temperature=config.temperature if temperature is None else temperature,
                max_tokens=config.max_tokens if max_tokens is None else max_tokens,
            )
        except LLMOutputError as exc:
            raise Unusable(exc.raw) from exc

    def text(self, messages: Messages, *, temperature: float, max_tokens: int) -> str:
        """A free-text call, joined."""
        return "".join(self.llm.generate_text(messages, temperature=temperature, max_tokens=max_tokens))


#: A trial: the model (None for a rule variant) and a case → the scored outcome (``output``, ``correct``,
#: optional extra score columns).
Trial = Callable[[Probe | None, Case], dict[str, Any]]


@dataclass(frozen=True)
class Variant:
    """One condition of a suite. ``uses_model=False`` marks the deterministic rule it is compared with."""

    name: str
    trial: Trial
    uses_model: bool = True
    description: str = ""


@dataclass(frozen=True)
class Suite:
    """A node experiment: its variants and its labelled cases."""

    name: str
    node: str
    variants: tuple[Variant, ...]
    cases: Callable[[], list[Case]]
    description: str = ""


def case_state(case: Case, **extra: Any) -> AgentState:
    """The state a node sees for ``case``: the query, deterministic entities and the active patient."""
    query = case["query"]
    state = AgentState(user_query=query, extracted_entities=extract_entities(query, bool(case.get("has_image"))),
                       history="", patient_context=None, image_findings=None, task_summary=case.get("task_summary", ""))
    patient = case.get("active_patient")
    if patient:
        state["active_patient"] = PatientRef(id=patient["id"], name=patient["name"])
    state.update(extra)  # type: ignore[typeddict-item]  # suites add node-specific fields
    return state


def tool_result(registry: ToolRegistry, tool: str, outcome: dict[str, Any], args: dict[str, Any] | None = None,
                entity: str = "", raw_error: str | None = None) -> ToolResult:
    """A ToolResult as TOOL_EXECUTE builds it: labelled data, or the pre-formatted error (``raw_error``
    replaces it, for the raw-error variants only)."""
    spec = registry[tool]
    ok = outcome["status"] == "success"
    error = None if ok else raw_error or format_error(outcome["error_type"], spec.label, entity, outcome.get("details"))
    return ToolResult(tool_name=tool, tool_label=spec.label, args=args or {}, status="success" if ok else "error",
                      data=outcome.get("data") if ok else outcome.get("details", {}),
                      formatted_result=spec.format_result(outcome["data"]) if ok else str(error), error=error,
                      error_type=None if ok else outcome["error_type"], sources=[])


def tool_ok(case: Case, tool: str | None) -> bool:
    """The expected tool, or one the case lists as acceptable."""
    return tool == case["expected_tool"] or tool in case.get("acceptable", [])
