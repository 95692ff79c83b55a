"""Deterministic argument prefill for TOOL_SELECT stage 2: the agent's state handed to the tool's own extractor
(``ToolSpec.extract``, in ``tools/extract.py``) as the ground-floor inputs it may read."""

from __future__ import annotations

from typing import Any

from docgemma.agent.state import AgentState
from docgemma.tools.registry import ToolSpec
from docgemma.tools.routing import Request


def request_of(state: AgentState) -> Request:
    """The message, its entities and the active patient's id."""
    active = state.get("active_patient")
    return Request(state.get("user_query", ""), state["extracted_entities"], active["id"] if active else None)


def prefill(spec: ToolSpec, state: AgentState) -> dict[str, Any]:
    """The arguments of ``spec`` that code can read off the message (possibly none)."""
    return spec.prefill(request_of(state))
