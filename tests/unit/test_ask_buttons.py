"""The buttons of an unsure turn on the embedded default (issue 26): filled with every drug named (spelt right, a
class by its clinical name), a lower-case name asked about (never the active patient in its place), a connection
question from what it asks about, an allergy's substance as the allergy's reader takes it."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent import ask, decision
from docgemma.agent.button_fill import drugs_named, possible_name
from docgemma.agent.state import PatientRef
from docgemma.clinical.drug_spelling import spelt_right
from docgemma.eval.train_router import demo_roster, turn_state
from docgemma.tools.registry import default_registry

REG = default_registry()
ROSTER = demo_roster()
GRACE = PatientRef(id=ROSTER.patients[2].id, name=ROSTER.patients[2].name)


def _offered(message: str, active: PatientRef = GRACE, image: bool = False) -> list[tuple[str, str, str]]:
    state: dict[str, Any] = dict(turn_state(message, active=active, roster=ROSTER, image=image))
    # The buttons the turn would get were it unsure: what they are filled with is tested whatever the router of
    # the day decides (a retrained router is sure of some of these messages).
    state["route_decision"] = {**decision.decide(state, REG), "sure": False}  # type: ignore[arg-type]
    return ask.offered(state, REG)  # type: ignore[arg-type]


@pytest.mark.parametrize(("word", "drug"), [("tiootropium", "tiotropium"), ("fuosemide", "furosemide"),
                                            ("fulclox", "flucloxacillin"),
                                            ("empagiflozin", "empagliflozin")])
def test_a_drug_one_slip_away_is_read_spelt_right(word: str, drug: str) -> None:
    assert spelt_right(word) == drug


@pytest.mark.parametrize("word", ["trimester", "patinet", "recently", "counselled", "admisions", "whether"])
def test_an_ordinary_word_is_no_drug(word: str) -> None:
    """The dictionary's own fuzzy search read "trimester" as methyltestosterone: one edit, or nothing."""
    assert spelt_right(word) is None


def test_a_class_is_named_as_clinicians_name_it() -> None:
    """A button read "What are the FDA safety warnings for hydroxymethylglutaryl-coa reductase inhibitors?"."""
    state = turn_state("in general, should I be prescribing a statin for a 38 year old?", active=GRACE, roster=ROSTER)
    assert drugs_named(state) == ["statins"]
    assert drugs_named(turn_state("are ACE inhibitors ok here", active=GRACE, roster=ROSTER)) == ["ACE inhibitors"]


@pytest.mark.parametrize(("message", "name"), [("does ines duarte have any allergies", "Ines Duarte"),
                                               ("what's mei chen's latest blood pressure?", "Mei Chen"),
                                               ("ok, switch to thomas banda. how are her kidneys doing?", "Thomas Banda"),
                                               ("does Reyes, Daniel have any allergies?", "Daniel Reyes")])
def test_a_lower_case_name_is_asked_about_never_the_active_patient(message: str, name: str) -> None:
    assert possible_name(message) == name
    offered = _offered(message)
    assert offered, message
    for text, _label, action in offered:
        assert "this patient" not in text and GRACE["name"] not in text, text
        assert action == "search_patient", text


@pytest.mark.parametrize("message", ["please write a note - chest infection, plan vanc 1 g bd",
                                     "how are her kidneys doing?", "what came out of her last admission",
                                     # found by review: an eponym's possessive and a verb read as names
                                     "explain cushing's syndrome", "managing crohn's flare in clinic",
                                     "diagnose hashimoto's thyroiditis", "check tom's bp"])
def test_ordinary_words_are_no_name(message: str) -> None:
    assert possible_name(message) is None


@pytest.mark.parametrize(("message", "action", "fill"), [
    ("what led to his asthma diagnosis?", "explore_connections", "asthma"),
    ("start him on tiootropium 625 mg once daily x7d", "prescribe_medication", "tiotropium 625 mg"),
    ("He's been dizzy. add an alelrgy to shellfish for him", "add_allergy", "shellfish"),
    ("ok to use empagiflozin in a patient on mebendazole?", "check_drug_interactions", "empagliflozin"),
])
def test_the_right_action_is_a_button_filled_with_what_was_named(message: str, action: str, fill: str) -> None:
    offered = _offered(message)
    assert any(label == action and fill in text for text, label, _a in offered), offered


@pytest.mark.parametrize("word", ["lactate", "phosphate", "amylase", "chloride"])
def test_a_lab_word_is_not_read_as_a_misspelt_drug(word: str) -> None:
    """Found by review: the dictionary's fuzzy match offered the plural salts ("lactates") for lab words."""
    from docgemma.clinical.drug_spelling import spelt_right

    assert spelt_right(word) is None


@pytest.mark.parametrize(("message", "name"), [("what is wei jing's latest bp", "Wei Jing"),
                                              ("is ian fleming's bp ok", "Ian Fleming")])
def test_a_name_that_ends_like_a_verb_is_still_a_name(message: str, name: str) -> None:
    """A name is never dropped for its ending: the turn would be answered for the active patient."""
    assert possible_name(message) == name


def test_a_button_is_decided_as_the_page_will_read_it_with_the_record_patient_list() -> None:
    """Issue 46: "Show Fatma Bello's blood pressure" was offered (sure when read without the record's patient list)
    and, pressed, "not recognised" (INPUT_ASSEMBLY reads the message against the list: "Fatma" beside "Fatima").
    Each button is now decided as the pressed message will be, against the same list."""
    message = "what is Fatma Bello blood pressure"
    state: dict[str, Any] = dict(turn_state(message, active=GRACE, roster=ROSTER))
    state["route_decision"] = {**decision.decide(state, REG), "sure": False}  # type: ignore[arg-type]
    offered = ask.offered(state, REG, roster=lambda: ROSTER)  # type: ignore[arg-type]
    assert offered
    for text, _label, _action in offered:
        pressed = decision.decide(turn_state(text, active=GRACE, roster=ROSTER), REG)
        assert pressed["sure"], text
