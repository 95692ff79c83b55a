"""Issue 42 item 6: negation and de-labelling are read on every allergy write (demo model: the rules' path).

A generated set of negation forms × substances never becomes an active allergy, even where a card is approved;
"NKDA" asked to be written reaches the allergy card as the coded "no known drug allergy" entry (SNOMED CT
409137002), and is refused while the patient has an active drug allergy on record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import default_registry
from docgemma.tools.write_checks import active_allergies

#: How a clinician says there is no allergy, or that a label no longer applies.
NEGATION_FORMS = (
    "denies any {s} allergy, please document that",
    "{s} - none known, please record",
    "Record allergy: {s} - none known",
    "Document allergy: {s} - negative",
    "{s} allergy label was removed (delabelled), please document",
    "tolerated {s} challenge, please record that",
    "He is NOT allergic to {s}, please record that",
    "{s} allergy ruled out - document please",
    "no {s} allergy, please record",
    "never had a reaction to {s}, add that to the record",
)
SUBSTANCES = ("penicillin", "amoxicillin", "sulfa", "latex", "codeine", "aspirin", "ibuprofen", "peanuts",
              "shellfish", "IV contrast")


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("negation")) / "record.sqlite")


def assistant(ehr: Ehr) -> Assistant:
    return Assistant(demo_llm(), bind_tools(default_registry(), ToolClients(record=ehr)),
                     patient_context=ehr.patient_context, write_check=record_write_check(ehr))


def pid_of(ehr: Ehr, family: str) -> str:
    return str(ehr.client.search("Patient", [("name", family)])[0]["id"])


def allergies(ehr: Ehr, pid: str) -> list[dict[str, Any]]:
    return ehr.client.search("AllergyIntolerance", [("patient", pid)])


def turn(ehr: Ehr, pid: str, name: str, message: str, thread: str) -> Any:
    """One turn for the active patient; a card is approved (the worst case: what would be written)."""
    bot = assistant(ehr)
    bot.set_active_patient(thread, {"id": pid, "name": name})
    result = bot.run_turn(thread, message)
    if isinstance(result, dict) and result.get("kind") == "approval":
        return result, bot.resume(thread, {"action": "approve", "card_id": result["card_id"]})
    return result, None


@pytest.mark.parametrize("form", NEGATION_FORMS)
def test_a_negation_form_never_writes_an_active_allergy_for_any_substance(ehr: Ehr, form: str) -> None:
    pid = pid_of(ehr, "Mwangi")
    before = {a["id"] for a in allergies(ehr, pid)}
    for n, substance in enumerate(SUBSTANCES):
        message = form.format(s=substance)
        turn(ehr, pid, "Joseph Mwangi", message, f"neg-{n}")
        new = [a for a in allergies(ehr, pid) if a["id"] not in before]
        assert not active_allergies(new), (message, new)


def test_nkda_asked_to_be_written_reaches_the_card_as_the_coded_entry(tmp_path: Path) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    pid = pid_of(ehr, "Mwangi")
    for n, message in enumerate(("No known drug allergies, please document", "Record allergy for Joseph Mwangi: NKDA",
                                 "Document NKDA for this patient")):
        card, done = turn(ehr, pid, "Joseph Mwangi", message, f"nkda-{n}")
        assert isinstance(card, dict) and card["kind"] == "approval", (message, card)
        assert card["args"]["substance"] == "NKDA" and isinstance(done, TurnResult), message
    written = allergies(ehr, pid)
    assert written and all(a["code"]["coding"][0] == {"system": "http://snomed.info/sct", "code": "409137002",
                                                      "display": "No known drug allergy"} for a in written)
    assert not any("not specified" in str(a).lower() for a in written)
    assert active_allergies(written) == []  # a statement, never an allergen


@pytest.mark.parametrize("message", ["No known drug allergies, please document", "Document NKDA for this patient"])
def test_nkda_is_refused_while_an_active_drug_allergy_is_on_record(ehr: Ehr, message: str) -> None:
    pid = pid_of(ehr, "Mensah")  # Grace Mensah: penicillin allergy (anaphylaxis) on record
    before = allergies(ehr, pid)
    card, _ = turn(ehr, pid, "Grace Mensah", message, "nkda-mensah")
    assert allergies(ehr, pid) == before
    text = card.answer if isinstance(card, TurnResult) else str(card)
    assert "contradicts the active allergy list" in text and "penicillin" in text.lower(), text


def _allergy(text: str, category: str | None = None) -> dict[str, Any]:
    return {"resourceType": "AllergyIntolerance", "code": {"text": text}, **({"category": [category]} if category else {})}


def test_nkda_is_blocked_by_a_drug_allergy_and_nka_by_any_but_a_latex_allergy_leaves_nkda_a_finding() -> None:
    from docgemma.tools.catalog.add_allergy import allergy_check
    from docgemma.tools.write_checks import PatientFacts

    nkda = {"patient_id": "p", "substance": "NKDA", "reaction": "not applicable"}
    nka = {**nkda, "substance": "no known allergies"}
    assert allergy_check(nkda, PatientFacts([_allergy("Allergy to penicillin")], [])).blocked
    assert allergy_check(nkda, PatientFacts([_allergy("eggs", "medication")], [])).blocked
    latex = allergy_check(nkda, PatientFacts([_allergy("latex")], []))
    assert not latex.blocked and "latex" in latex.warnings[0]
    assert allergy_check(nka, PatientFacts([_allergy("latex")], [])).blocked
    assert not allergy_check(nkda, PatientFacts([], [])).blocked


# ── a statement that there is no allergy, with no write asked (issue 42 follow-up) ─────────────────────────────

#: How a clinician writes a negative allergy history line, with no write verb.
STATEMENT_FORMS = ("{s} - negative", "{s}: none known", "{s} - nil", "no {s} allergy", "{s} allergy - negative",
                   "not allergic to {s}", "{s}: no reaction")
NOT_ALLERGY_STATEMENTS = ("COVID - negative", "troponin: negative", "blood cultures - negative", "HIV - negative",
                          "urine dip - nil", "sulfa - negative, Hb 120", "penicillin: none known?")
NOT_RECOGNISED = "not recognised"


def _buttons(result: Any) -> list[str]:
    assert isinstance(result, TurnResult), result
    return list(result.follow_ups)


@pytest.mark.parametrize("form", STATEMENT_FORMS)
def test_a_bare_negative_statement_writes_nothing_and_offers_what_it_may_mean(tmp_path: Path, form: str) -> None:
    """"sulfa - negative" with a patient open was "not recognised": it reads as a statement that there is no allergy
    (the negation reader's), nothing is written, and the two writes it may mean are offered as buttons."""
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    for family, name in (("Mensah", "Grace Mensah"), ("Mwangi", "Joseph Mwangi")):
        pid = pid_of(ehr, family)
        for n, substance in enumerate(("sulfa", "penicillin", "codeine")):
            before = allergies(ehr, pid)
            message = form.format(s=substance)
            result, _ = turn(ehr, pid, name, message, f"bare-{family}-{n}")
            assert allergies(ehr, pid) == before, message
            assert isinstance(result, TurnResult) and NOT_RECOGNISED not in result.answer, (message, result)
            assert "statement that there is no" in result.answer and "nothing was written" in result.answer, message
            assert _buttons(result) == ["Record NKDA for this patient",
                                        f"Remove the {substance} allergy label for this patient"], message


def test_each_offered_button_pressed_is_understood_and_writes_nothing_unapproved(tmp_path: Path) -> None:
    """Each button's words, pressed (the next message of the conversation), are decided surely as the write they
    name, on its own card or with its own question; nothing is written without that card's approval."""
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    cases = [("Mensah", "Grace Mensah", "penicillin: none known"), ("Mwangi", "Joseph Mwangi", "sulfa - negative")]
    for family, name, message in cases:
        pid = pid_of(ehr, family)
        bot = assistant(ehr)
        bot.set_active_patient(f"press-{family}", {"id": pid, "name": name})
        offered = _buttons(bot.run_turn(f"press-{family}", message))
        assert len(offered) == 2
        for n, button in enumerate(offered):
            before = allergies(ehr, pid)
            pressed = assistant(ehr)
            pressed.set_active_patient(f"press-{family}-{n}", {"id": pid, "name": name})
            result = pressed.run_turn(f"press-{family}-{n}", button)
            tool = "add_allergy" if button.startswith("Record NKDA") else "remove_allergy_label"
            if isinstance(result, dict):  # a card: the write it names, waiting for its approval
                assert result["kind"] == "approval" and result["tool"] == tool, (button, result)
            else:
                assert NOT_RECOGNISED not in result.answer and [t["tool"] for t in result.tools] == [tool], (button, result)
                assert "nothing was written" in result.answer, (button, result.answer)
            assert allergies(ehr, pid) == before, button
    # Grace Mensah has a penicillin label: the removal's card needs the reason the message never gave (asked for);
    # Joseph Mwangi has no drug allergy: NKDA's card is shown (the coded entry, once approved).


@pytest.mark.parametrize("message", NOT_ALLERGY_STATEMENTS)
def test_a_result_or_a_question_is_no_allergy_statement(message: str) -> None:
    from docgemma.agent.patterns import no_allergy_statement

    assert no_allergy_statement(message) is None


def test_without_a_patient_open_the_statement_offers_no_write(tmp_path: Path) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    result = assistant(ehr).run_turn("no-patient", "sulfa - negative")
    assert isinstance(result, TurnResult) and "statement that there is no sulfa allergy" in result.answer
    assert "open the patient's record first" in result.answer and not result.follow_ups
