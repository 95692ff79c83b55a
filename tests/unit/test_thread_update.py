"""The active patient changes through one graph entry (THREAD_UPDATE), as one type (``PatientRef``) from the
panel's value to the graph's state."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.state import PatientRef
from docgemma.clinical.patient import described, from_list_value, list_label, list_value, listing_of
from docgemma.tools.registry import default_registry
from docgemma.workspace import Workspace

ANN = PatientRef(id="p-ann", name="Ann Lee")
BOB = PatientRef(id="p-bob", name="Bob Kim")


def workspace() -> Workspace:
    return Workspace(Assistant(demo_llm(), default_registry()), None)


def checkpoints(assistant: Assistant, thread: str) -> list[Any]:
    return list(assistant.graph.get_state_history({"configurable": {"thread_id": thread}}))


def test_a_panel_choice_reaches_the_graph_state_as_a_patient_ref() -> None:
    space = workspace()
    value = list_value(ANN)
    assert from_list_value(value) == ANN and from_list_value(None) is None and from_list_value("") is None
    assert space.select_patient("t", from_list_value(value)) is False  # no earlier patient: no switch
    assert space.assistant.state("t")["active_patient"] == ANN


@pytest.mark.parametrize("value", ["no separator", "|a name without an id", " |x"])
def test_a_list_value_that_names_no_patient_is_refused_not_guessed(value: str) -> None:
    with pytest.raises(ValueError, match="not a patient of the list"):
        from_list_value(value)


def test_a_list_shows_a_patient_by_name_and_birth_date() -> None:
    assert list_label({**ANN, "birth_date": "1950-02-01"}) == f"{ANN['name']} (born 1950-02-01)"
    assert list_label({**ANN, "birth_date": None}) == f"{ANN['name']} (born ?)"


def test_a_search_match_is_a_listing_named_one_way_in_the_agent_text() -> None:
    """A search's match (its own birth_date, or a record's birthDate) becomes a PatientListing; the clarification
    and the resumed choice both name it as ``described`` says."""
    listing = listing_of({"id": "p1", "name": "Ann Lee", "birthDate": "1950-02-01", "gender": "female"})
    assert listing == {"id": "p1", "name": "Ann Lee", "birth_date": "1950-02-01"}
    assert described(listing) == "Ann Lee (born 1950-02-01, ID p1)"
    assert described(listing_of({"id": "p2", "name": "Bo"})) == "Bo (born unknown, ID p2)"


def test_a_switch_is_noted_in_the_conversation_and_the_transcript() -> None:
    space = workspace()
    space.select_patient("t", ANN)
    assert space.select_patient("t", BOB) is True
    state = space.assistant.state("t")
    assert state["active_patient"] == BOB
    assert state["conversation"][-1]["role"] == "system" and "Bob Kim (ID p-bob)" in state["conversation"][-1]["content"]
    assert state["transcript"][-1] == {"note": "Active patient is now Bob Kim."}
    assert space.select_patient("t", BOB) is False  # the same patient again: no second note
    assert len(space.assistant.state("t")["transcript"]) == 1
    assert space.select_patient("t", None) is True
    assert space.assistant.state("t")["active_patient"] is None
    assert space.assistant.state("t")["transcript"][-1] == {"note": "Active patient is now none."}


def test_every_write_to_the_thread_is_a_node_run_of_the_graph() -> None:
    """No state is written from outside the graph in another node's name: each checkpoint comes from a run
    (source "input" or "loop"), none from ``update_state`` (source "update")."""
    space = workspace()
    space.select_patient("t", ANN)
    list(space.turn("t", "What is hypertension?"))
    space.select_patient("t", BOB)
    history = checkpoints(space.assistant, "t")
    assert len(history) > 3 and {c.metadata["source"] for c in history} <= {"input", "loop"}


def test_a_turn_after_an_update_is_a_turn() -> None:
    """The update request is cleared by its node: the next message runs the whole turn, with the new patient."""
    space = workspace()
    space.select_patient("t", ANN)
    events = list(space.turn("t", "What is hypertension?"))
    state = space.assistant.state("t")
    assert state.get("thread_update") is None and state["final_response"] and events
    assert state["active_patient"] == ANN
