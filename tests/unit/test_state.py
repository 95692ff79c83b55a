"""The per-turn state: what a turn starts from, what carries over from the turn before."""

from __future__ import annotations

from typing import Any, get_type_hints

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.nodes.input_assembly import input_assembly
from docgemma.agent.state import NEW_TURN, AgentState
from docgemma.llm.fake import FakeLLM
from docgemma.tools.outcome import success
from tests.conftest import Tools

#: Fields input_assembly leaves alone: the turn's input it does not rewrite, the conversation and the active patient
#: (a pick from a list is proposed in `patient_change`; COMMIT_PATIENT writes `active_patient`).
NOT_SET_BY_INPUT_ASSEMBLY = {"conversation", "active_patient", "image_ref", "turn_id", "transcript", "thread_update"}

DIRTY: dict[str, Any] = {  # what a previous turn may leave behind
    "intent": "TOOL_NEEDED", "scope": "off_topic", "task_summary": "old", "suggested_tool": "search_patient",
    "current_tool": "search_patient", "current_args": {"name": "x"}, "step_count": 3, "retry_count": 1,
    "total_retries": 2, "retry_mode": "same", "skipped_tools": ["x"], "last_result_classification": "error",
    "last_result_summary": "old", "route": "SYNTHESIZE", "error_action": "ASK_USER",
    "clarification_request": "which?", "final_response": "old answer", "confidence": "low",
    "sources": [{"title": "t"}], "follow_ups": ["f"], "history": "old", "input_notes": ["old"],
    "image_findings": {"modality": "x", "findings": [], "confidence": "low"}, "patient_context": "old",
    "selected_patient": {"id": "p1", "name": "A"}, "patient_at_turn_start": {"id": "p0", "name": "B"},
    "patient_options": [{"id": "p9", "name": "Z"}], "pending_request": "old request",
}


def test_input_assembly_sets_every_per_turn_field() -> None:
    """Pins the behaviour: a new turn sets every field but the conversation and its own input."""
    state = AgentState(user_query="hello", conversation=[], **DIRTY)  # type: ignore[typeddict-item]
    out = input_assembly(state, llm=FakeLLM(), max_message_chars=1000, max_image_bytes=1000)
    assert set(out) == set(get_type_hints(AgentState)) - NOT_SET_BY_INPUT_ASSEMBLY
    for key in ("tool_results", "qualities", "router_actions", "error_messages"):
        assert out[key] == [NEW_TURN]
    assert out["timeline"][0] == NEW_TURN and out["timeline"][1]["node"] == "input_assembly"
    fresh = {k: out[k] for k in DIRTY}
    assert fresh == {
        "intent": "DIRECT", "scope": "clinical", "task_summary": "", "suggested_tool": None, "current_tool": None,
        "current_args": None, "step_count": 0, "retry_count": 0, "total_retries": 0, "retry_mode": None,
        "skipped_tools": [], "last_result_classification": None, "last_result_summary": None, "route": None,
        "error_action": None, "clarification_request": None, "final_response": None, "confidence": None,
        "sources": [], "follow_ups": [], "history": "", "input_notes": [], "image_findings": None,
        "patient_context": None, "selected_patient": None, "patient_at_turn_start": None,
        "patient_options": None, "pending_request": None,
    }


def test_a_second_turn_starts_afresh_and_keeps_the_conversation(fake: FakeLLM, tools: Tools) -> None:
    """Pins the behaviour across two real turns: the first asks to pick a patient, the second is unrelated."""
    assistant = Assistant(fake, tools.registry())
    matches = [{"id": f"jw-00{i}", "name": "James Wilson", "birth_date": f"19{60 + i}-01-01"} for i in range(1, 3)]
    tools.queue("search_patient", success({"matches": matches}))
    first = assistant.run_turn("t", "Search for patient James Wilson")
    assert isinstance(first, TurnResult) and first.clarification
    after_first = assistant.state("t")
    assert after_first["patient_options"] and after_first["pending_request"] and after_first["tool_results"]

    second = assistant.run_turn("t", "What is the mechanism of action of metformin?")
    assert isinstance(second, TurnResult)
    state = assistant.state("t")
    assert state["patient_options"] is None and state["pending_request"] is None
    assert state["tool_results"] == [] and state["clarification_request"] is None and state["skipped_tools"] == []
    assert state["router_actions"] == second.router_actions and [e["node"] for e in state["timeline"]] == second.path
    assert [m["role"] for m in state["conversation"]] == ["user", "assistant", "user", "assistant"]


def test_every_field_is_input_carried_over_or_reset_each_turn() -> None:
    """A new AgentState field must be declared in one place: otherwise it would silently carry over."""
    from docgemma.agent.state import CARRIED_OVER, TURN_DEFAULTS, InputState

    fields = set(get_type_hints(AgentState))
    inputs, defaults = set(get_type_hints(InputState)), set(TURN_DEFAULTS)
    assert not (inputs & CARRIED_OVER) and not (inputs & defaults) and not (CARRIED_OVER & defaults)
    assert inputs | CARRIED_OVER | defaults == fields, sorted(fields ^ (inputs | CARRIED_OVER | defaults))


def test_turn_defaults_are_fresh_copies() -> None:
    from docgemma.agent.state import TURN_DEFAULTS, turn_defaults

    first = turn_defaults()
    first["skipped_tools"].append("x")
    first["extracted_entities"]["drug_mentions"].append("y")
    assert TURN_DEFAULTS["skipped_tools"] == [] and turn_defaults()["extracted_entities"]["drug_mentions"] == []


def test_the_graph_takes_only_the_declared_input() -> None:
    from docgemma.agent.state import InputState, turn_input

    assert set(turn_input("q", None, turn_id="t1")) == set(get_type_hints(InputState))
