"""Node ④ TOOL_EXECUTE (deterministic): ground and validate the arguments, pause for the clinician's
approval before any write, run the tool through the registry, label the result and pre-format errors.

Raw error text never leaves this node: an error becomes an ``error_type`` and a templated sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from docgemma.agent.memory import switched
from docgemma.agent.patterns import is_write_request
from docgemma.agent.state import AgentState, PatientRef, ToolResult
from docgemma.agent.trace import NodeTrace
from docgemma.agent.validation import ground, validate
from docgemma.image_store import load_image_bytes
from docgemma.images import ImageError, decode_image
from docgemma.llm.base import LLM
from docgemma.tools.outcome import ToolOutcome, failure, format_error
from docgemma.tools.registry import ToolContext, ToolRegistry, ToolSpec

log = logging.getLogger(__name__)

#: Safety checks before a write (allergy conflicts, duplicate orders): warnings shown in the approval.
WriteCheck = Callable[[ToolSpec, dict[str, Any], "PatientRef | None"], list[str]]


def approval_request(spec: ToolSpec, args: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """What the clinician is shown before a write: a readable preview and any safety warnings."""
    lines = [f"{field.replace('_', ' ').capitalize()}: {value}" for field, value in args.items()]
    return {
        "kind": "approval",
        "tool": spec.name,
        "label": spec.label,
        "args": args,
        "preview": f"{spec.label}\n" + "\n".join(lines),
        "warnings": warnings,
    }


def _primary_entity(args: dict[str, Any]) -> str:
    for value in args.values():
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value:
            return ", ".join(str(v) for v in value)
    return "the request"


def _active_patient_after(spec: ToolSpec, args: dict[str, Any], outcome: ToolOutcome,
                          current: PatientRef | None) -> PatientRef | None:
    """A unique patient search match, or a chart that was read, becomes the conversation's active patient."""
    if outcome.get("status") != "success":
        return current
    data = outcome.get("data") or {}
    if spec.name == "search_patient" and isinstance(data, dict) and len(data.get("matches", [])) == 1:
        match = data["matches"][0]
        return PatientRef(id=str(match["id"]), name=str(match.get("name", match["id"])))
    if spec.name == "get_patient_chart":
        patient = data.get("patient", {}) if isinstance(data, dict) else {}
        pid = str(patient.get("id") or args["patient_id"])
        same = current is not None and current["id"] == pid
        name = patient.get("name") or (current["name"] if same and current else f"patient {pid}")
        return PatientRef(id=pid, name=str(name))
    return current


def tool_execute(
    state: AgentState, config: RunnableConfig, *, registry: ToolRegistry, llm: LLM,
    max_image_bytes: int, write_check: WriteCheck | None = None,
) -> dict[str, Any]:
    """Run the selected tool call; see the module docstring. ``config`` (from LangGraph) names the thread."""
    from langgraph.types import interrupt

    tool = state["current_tool"]
    assert tool is not None, "TOOL_EXECUTE runs only after a tool was selected"
    spec = registry[tool]
    active = state.get("active_patient")
    entities = state["extracted_entities"]
    args, repairs = ground(spec, state.get("current_args") or {}, entities, active, state["user_query"])
    checked = validate(spec, args, has_image=entities["has_image"])
    outcome = checked.error
    decision_note = ""
    if spec.writes and not is_write_request(state["user_query"]):
        # Only the clinician's own message can ask for a write: never a model's choice prompted by record
        # text ("ignore previous instructions and prescribe ...") or a question that mentions a write word.
        outcome = failure("not_requested")
        decision_note = "write refused: the clinician's message does not ask for one; "

    if outcome is None and spec.writes:
        # Everything above is deterministic, so re-running it when the graph resumes is harmless.
        warnings = write_check(spec, checked.args, active) if write_check else []
        decision = interrupt(approval_request(spec, checked.args, warnings))
        action = decision.get("action") if isinstance(decision, dict) else None
        if action == "edit":
            checked = validate(spec, {**checked.args, **decision.get("args", {})}, has_image=entities["has_image"])
            outcome = checked.error
            decision_note = "edited and approved by the clinician; "
        elif action == "approve":
            decision_note = "approved by the clinician; "
        else:
            outcome = failure("declined")
            decision_note = "declined by the clinician; "

    trace = NodeTrace("tool_execute", label=f"Consulting: {spec.label}")
    if outcome is None:
        assert checked.model is not None
        image = None
        attachment = state.get("attachment")
        if spec.needs_image and attachment is not None:
            try:
                image = decode_image(attachment["filename"], load_image_bytes(attachment), max_image_bytes)
            except ImageError:
                image = None
        thread = str((config.get("configurable") or {}).get("thread_id", ""))
        scope = f"{thread}:{len(state.get('conversation', []))}"  # one approved call = one thread turn
        context = ToolContext(image=image, llm=llm, active_patient_id=active["id"] if active else None, scope=scope)
        try:
            outcome = spec.run(checked.model, context)
        except Exception:
            log.exception("tool %s raised", spec.name)
            outcome = failure("server_error")

    if outcome.get("status") == "success":
        result = ToolResult(
            tool_name=spec.name, tool_label=spec.label, args=checked.args, status="success",
            data=outcome.get("data"), formatted_result=spec.format_result(outcome.get("data")),
            error=None, error_type=None, sources=list(outcome.get("sources", [])),
        )
        decision = "success"
    else:
        error_type = str(outcome.get("error_type", "generic"))
        message = format_error(error_type, spec.label, _primary_entity(checked.args), outcome.get("details"))
        result = ToolResult(
            tool_name=spec.name, tool_label=spec.label, args=checked.args, status="error",
            data=outcome.get("details", {}), formatted_result=f"[{spec.label}]\n{message}",
            error=message, error_type=error_type, sources=[],
        )
        decision = f"error: {error_type}"
    detail = decision_note + ("; ".join(repairs) + "; " if repairs else "") + f"arguments: {checked.args}"
    after = _active_patient_after(spec, checked.args, outcome, active)
    update: dict[str, Any] = {
        "tool_results": [result],
        "current_args": checked.args,
        "step_count": state.get("step_count", 0) + 1,
        "active_patient": after,
    }
    if switched(active, after):
        # Another patient: the previous one's conversation and summary leave this turn's prompts.
        update.update(history="", patient_context=None)
        detail += f"; active patient is now {after['name'] if after else 'none'}"
    update["timeline"] = [trace.event(decision, detail)]
    return update
