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
