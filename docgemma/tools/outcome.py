"""What a tool returns, the error taxonomy, and the clinician-facing error templates.

Raw error text never reaches a prompt (given raw errors, the model answers from memory: 4.8/10 vs 10/10
pre-formatted): executors return an ``error_type`` plus structured ``details``
that are safe to show (missing fields, candidate patients); :func:`format_error` turns those into a
pre-formatted sentence before any model sees them.
"""

from __future__ import annotations

from typing import Any, Literal

# typing_extensions' TypedDict: pydantic (the MCP server's output schema) reads it on Python < 3.12 too.
from typing_extensions import TypedDict

from docgemma.clinical.patient import shown_id

#: Every error a tool (or TOOL_EXECUTE on its behalf) can return; :func:`failure` and :class:`HttpError` take
#: only these, so mypy rejects a new one until it has a template here and a rule in ERROR_HANDLER.
#: (Several matching patients are not an error: search_patient succeeds and the router asks which one.)
ErrorType = Literal[
    "timeout",
    "rate_limit",
    "server_error",
    "service_unavailable",
    "offline",
    "not_found",
    "drug_not_in_database",
    "invalid_args",
    "invalid_response",
    "no_image",
    "not_configured",
    "no_vision",
    "declined",
    "not_requested",
    "unknown_patient",
]

#: Transient failures: RESULT_CLASSIFY files these as ``error_retryable`` without asking the model.
RETRYABLE_ERRORS: frozenset[str] = frozenset({"timeout", "rate_limit", "server_error", "service_unavailable"})


class Source(TypedDict):
    """A citation shown to the clinician (never put in a prompt as a tool name)."""

    title: str
    url: str


class ToolOutcome(TypedDict, total=False):
    """A tool's answer: ``status`` plus either ``data`` (success) or ``error_type`` (error)."""

    status: Literal["success", "error"]
    data: Any
    sources: list[Source]
    error_type: str
    details: dict[str, Any]


ERROR_TEMPLATES: dict[str, str] = {
    "timeout": "The {tool_label} was temporarily unavailable. Please try again shortly.",
    "rate_limit": "The {tool_label} is temporarily busy. The system will retry automatically.",
    "server_error": "The {tool_label} experienced a temporary error. The system will retry automatically.",
    "service_unavailable": "{tool_label}: the service is currently unavailable.",
    "offline": "{tool_label}: cannot be reached from this machine (no connection to the service).",
    "not_found": "No results were found for {entity} in the {tool_label}.",
    "drug_not_in_database": "{entity} was not found in the drug database.",
    "invalid_args": "The request to {tool_label} could not be completed — additional information is needed{fields}.",
    "invalid_response": "The {tool_label} returned data that could not be read.",
    "no_image": "No image is attached, so the {tool_label} could not run.",
    "not_configured": "The {tool_label} is not available in this installation.",
    "no_vision": "The {tool_label} needs a vision model; the current model cannot read images.",
    "declined": "The clinician declined the {tool_label}; nothing was written to the record.",
    "not_requested": "No {tool_label} was proposed: the clinician's message does not ask for a change to the record.",
    "unknown_patient": "No patient with id '{patient}' is on the record; nothing from any other patient's record was "
                       "used.",
    "generic": "The {tool_label} could not be completed.",
}


def success(data: Any, sources: list[Source] | None = None) -> ToolOutcome:
    """A successful outcome."""
    return ToolOutcome(status="success", data=data, sources=sources or [])


def failure(error_type: ErrorType, **details: Any) -> ToolOutcome:
    """An error outcome; ``details`` must be safe to show a clinician (no raw exception text)."""
    return ToolOutcome(status="error", error_type=error_type, details=details)


def is_empty(data: Any) -> bool:
    """True when a successful tool found nothing (RESULT_CLASSIFY then says ``no_results`` in code)."""
    if data is None:
        return True
    if isinstance(data, (list, tuple, set, str)):
        return len(data) == 0
    if isinstance(data, dict):
        if "results" in data and isinstance(data["results"], list):
            return len(data["results"]) == 0
        if "matches" in data and isinstance(data["matches"], list):
            return len(data["matches"]) == 0
        return len(data) == 0
    return False


def format_error(error_type: str, tool_label: str, entity: str, details: dict[str, Any] | None = None) -> str:
    """The pre-formatted, clinician-safe sentence for an error. Unknown types get the generic one."""
    details = details or {}
    missing = details.get("missing_fields") or []
    fields = f": {', '.join(str(f) for f in missing)}" if missing else ""
    template = ERROR_TEMPLATES.get(error_type, ERROR_TEMPLATES["generic"])
    patient = shown_id(details.get("patient_id", entity))
    return template.format(tool_label=tool_label, entity=entity or "the request", fields=fields, patient=patient)
