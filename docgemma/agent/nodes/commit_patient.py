"""COMMIT_PATIENT: the one node that writes the active patient. THREAD_UPDATE (the panel's choice), INPUT_ASSEMBLY
(a pick from a clarification's list) and TOOL_EXECUTE (a tool that resolved a patient) each propose a
:class:`~docgemma.agent.state.PatientChange`; this node makes it the active patient, clears the proposal and
goes on where the proposer's run goes on. Each proposer keeps its own consequences of a switch (a transcript
note, a history cleared): they differ by who proposed, the active patient does not."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.types import Command

from docgemma.agent.state import AgentState

Next = Literal["intent_classify", "result_classify", "__end__"]

#: Where the run goes on after the commit, by who proposed the change (``__end__``: LangGraph's END).
NEXT: dict[str, Next] = {"panel": "__end__", "choice": "intent_classify", "tool": "result_classify"}


def commit_patient(state: AgentState) -> Command[Next]:
    """Make the proposed patient the active one and go on (see the module docstring)."""
    change = state.get("patient_change")
    assert change is not None, "COMMIT_PATIENT runs only after a node proposed a change"
    return Command(update={"active_patient": change["patient"], "patient_change": None}, goto=NEXT[change["by"]])


def proposed(then: str) -> Any:
    """The edge after a proposer: COMMIT_PATIENT when it proposed a change, else ``then``."""
    def route(state: AgentState) -> str:
        return "commit_patient" if state.get("patient_change") is not None else then

    route.__name__ = f"commit_patient_or_{then.strip('_')}"
    return route
