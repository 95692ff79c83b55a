"""Safety wherever a drug is named (issue 30, item 6): with a patient active, a drug the message names is checked
by code against the patient's allergies (every allergy class in ``clinical/drug_classes``), active orders and age,
and the conflict is the answer's FIRST line on every route — a question, an unrecognised request, a look-up, a
record question, a literature search, a write card. On the demo model (``DOCGEMMA_BACKEND=fake``'s rules) and the
embedded record; the knowledge tools answer from the recorded-shape labels (``tests/fake_openfda.py``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.named_drugs import QUESTION_TAIL, one_of, safety_lines
from docgemma.clinical.drug_classes import CLASSES, DrugClass
from docgemma.clinical.entities import DrugDictionary
from docgemma.clinical.ingredients import resolve_local
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.llm.fake import FakeLLM
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_facts, record_write_check
from docgemma.tools.registry import default_registry
from docgemma.tools.write_checks import PatientFacts
from tests.conftest import intent
from tests.fake_openfda import FakeOpenFDA


def member(drug_class: DrugClass) -> str:
    """A member of the class the message can name, not the class's own word ("amoxicillin", not "penicillin"),
    so the conflict found is the class one."""
    named = [m for m in drug_class.members if DrugDictionary.find(f"thinking {m} for her") == [m]
             and drug_class.key in resolve_local(m).classes]
    return next((m for m in named if drug_class.key.split("_")[0] not in m), named[0])


def allergen(drug_class: DrugClass) -> str:
    """How a record names an allergy to the whole class ("penicillins", "NSAIDs")."""
    return drug_class.words[0] if drug_class.words else drug_class.name


#: Every allergy class with a member drug a message can name.
CLASS_CASES = [pytest.param(c, member(c), id=c.key) for c in CLASSES]
#: The routes a drug can be named on: (form, the message, the tool the turn must use, or None for none).
FORMS = {
    "question": ("How does {d} work?", None),
    "unrecognised": ("she's got a chest infection, thinking {d} for five days", None),
    "look-up": ("What are the FDA boxed warnings for {d}?", "check_drug_safety"),
    "interactions": ("Check interactions between {d} and warfarin", "check_drug_interactions"),
    "record question": ("Is she on {d}?", "query_patient_data"),
    "literature": ("Find studies on {d} in older adults", "search_medical_literature"),
}


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def add_patient(ehr: Ehr, family: str, birth: str = "1970-01-01", allergy: str | None = None,
                orders: tuple[str, ...] = ()) -> dict[str, str]:
    """A patient written to the record (with a high-criticality anaphylaxis allergy and active orders)."""
    patient, _ = ehr.write({"resourceType": "Patient", "name": [{"given": ["Test"], "family": family}],
                            "birthDate": birth, "gender": "female"}, key=_key(f"patient {family}"), step="test")
    ref = {"reference": f"Patient/{patient['id']}"}
    if allergy:
        ehr.write({"resourceType": "AllergyIntolerance", "patient": ref, "code": {"text": allergy},
                   "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/"
                                                  "allergyintolerance-clinical", "code": "active"}]},
                   "criticality": "high", "reaction": [{"manifestation": [{"text": "Anaphylaxis"}]}]},
                  key=_key(f"allergy {family}"), step="test")
    for order in orders:
        ehr.write({"resourceType": "MedicationRequest", "status": "active", "intent": "order", "subject": ref,
                   "authoredOn": "2025-01-02", "medicationCodeableConcept": {"text": order}},
                  key=_key(f"order {family} {order}"), step="test")
    return {"id": str(patient["id"]), "name": f"Test {family}"}


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")


def assistant(ehr: Ehr, llm: Any = None) -> Assistant:
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=FakeOpenFDA().transport(), record=ehr))
    return Assistant(llm or demo_llm(), registry,
                     patient_context=ehr.patient_context, record_facts=record_facts(ehr),
                     write_check=record_write_check(ehr))


def demo_patient(ehr: Ehr, family: str) -> dict[str, str]:
    found = ehr.client.search("Patient", [("name", family)], limit=5)[0]
    return {"id": str(found["id"]), "name": " ".join([*found["name"][0].get("given", []), found["name"][0]["family"]])}


def turn(bot: Assistant, thread: str, patient: dict[str, str], message: str) -> TurnResult:
    bot.set_active_patient(thread, patient)  # type: ignore[arg-type]
    result = bot.run_turn(thread, message)
    assert isinstance(result, TurnResult), result
    return result


# ── 1. every allergy class, every route ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize(("drug_class", "drug"), CLASS_CASES)
def test_the_named_drug_warning_holds_on_every_route_for_every_allergy_class(
        ehr: Ehr, drug_class: DrugClass, drug: str, form: str) -> None:
    patient = add_patient(ehr, f"Class{drug_class.key.replace('_', '')}", allergy=allergen(drug_class))
    message, tool = FORMS[form]
    result = turn(assistant(ehr), f"{drug_class.key}-{form}", patient, message.format(d=drug))
    first = result.answer.split("\n")[0]
    assert first.startswith(f"Safety: {drug}, {one_of(drug_class.key)} — {patient['name']} has a recorded "), first
    assert first.endswith("(anaphylaxis)."), first
    used = [t["tool"] for t in result.tools]
    assert (tool in used) if tool else not used, (form, used)


@pytest.mark.parametrize(("drug_class", "drug"), CLASS_CASES)
def test_the_prescription_card_and_the_answer_after_it_say_the_allergy_first(
        ehr: Ehr, drug_class: DrugClass, drug: str) -> None:
    patient = add_patient(ehr, f"Class{drug_class.key.replace('_', '')}", allergy=allergen(drug_class))
    bot = assistant(ehr)
    thread = f"{drug_class.key}-card"
    bot.set_active_patient(thread, patient)  # type: ignore[arg-type]
    card = bot.run_turn(thread, f"Prescribe {drug} 500 mg twice daily")
    assert isinstance(card, dict) and card["kind"] == "approval", card
    assert card["override_required"] and card["warnings"][0].startswith("ALLERGY CONFLICT (SEVERE)")
    assert drug in card["warnings"][0]
    declined = bot.resume(thread, {"action": "reject", "card_id": card["card_id"]})
    assert isinstance(declined, TurnResult)
    assert declined.answer.startswith(f"Safety: {drug}, {one_of(drug_class.key)} — {patient['name']}")


def test_a_note_card_naming_a_drug_shows_the_conflict_first(ehr: Ehr) -> None:
    grace = demo_patient(ehr, "Mensah")
    bot = assistant(ehr)
    bot.set_active_patient("note", grace)  # type: ignore[arg-type]
    card = bot.run_turn("note", "Save a clinical note for her: chest infection, plan co-amoxiclav 625 mg three times a day")
    assert isinstance(card, dict) and card["tool"] == "save_clinical_note", card
    assert card["warnings"][0] == ("Safety: co-amoxiclav contains amoxicillin, a penicillin — Grace Mensah has a "
                                   "recorded penicillin allergy (anaphylaxis).")


def test_a_model_written_answer_comes_after_the_safety_line(ehr: Ehr) -> None:
    grace = demo_patient(ehr, "Mensah")
    llm = FakeLLM([intent("DIRECT"), "Amoxicillin is a good first choice for a chest infection."])
    result = turn(assistant(ehr, llm), "model", grace, "Is amoxicillin reasonable for a chest infection?")
    assert result.answer.startswith("Safety: amoxicillin, a penicillin — Grace Mensah has a recorded penicillin "
                                    "allergy (anaphylaxis).\n\nAmoxicillin is a good first choice")


# ── 2. the report that opened the item ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("llm", [demo_llm, lambda: FakeLLM(name="demo", clinically_meaningful=False)],
                         ids=["fake-demo-backend", "embedded-model-mode"])
def test_co_amoxiclav_for_grace_mensah_says_it_contains_a_penicillin_first(ehr: Ehr, llm: Any) -> None:
    grace = demo_patient(ehr, "Mensah")
    result = turn(assistant(ehr, llm()), "coamox", grace,
                  "she's got a chest infection, thinking co-amoxiclav 625 three times a day for five days")
    assert result.answer.startswith("Safety: co-amoxiclav contains amoxicillin, a penicillin — Grace Mensah has a "
                                    "recorded penicillin allergy (anaphylaxis).\n\n")
    assert "was not recognised" in result.answer  # the rest of the reply is as before, after the warning


def test_a_drug_named_with_no_conflict_adds_nothing(ehr: Ehr) -> None:
    grace = demo_patient(ehr, "Mensah")
    result = turn(assistant(ehr), "clean", grace, "she's got a cough, thinking paracetamol for a few days")
    assert "Safety:" not in result.answer


def test_recording_an_allergy_does_not_warn_about_the_allergen_it_records(ehr: Ehr) -> None:
    grace = demo_patient(ehr, "Mensah")
    bot = assistant(ehr)
    bot.set_active_patient("allergy", grace)  # type: ignore[arg-type]
    card = bot.run_turn("allergy", "Record a penicillin allergy (hives) for her")
    assert isinstance(card, dict)
    done = bot.resume("allergy", {"action": "reject", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult) and "Safety:" not in done.answer


def test_recording_a_class_allergy_says_nothing_about_the_class_it_records(ehr: Ehr) -> None:
    grace = demo_patient(ehr, "Mensah")
    bot = assistant(ehr)
    bot.set_active_patient("nsaid", grace)  # type: ignore[arg-type]
    card = bot.run_turn("nsaid", "Record an NSAID allergy (rash) for her")
    assert isinstance(card, dict)
    done = bot.resume("nsaid", {"action": "reject", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult) and "Safety:" not in done.answer


def test_a_related_class_named_warns_of_cross_reactivity(ehr: Ehr) -> None:
    grace = demo_patient(ehr, "Mensah")
    result = turn(assistant(ehr), "ceph", grace, "thinking cefalexin for her")
    assert result.answer.startswith("Safety: cefalexin, a cephalosporin — Grace Mensah has a recorded penicillin "
                                    "allergy (anaphylaxis): cross-reactivity is possible.\n\n")


# ── 3. active orders and age ───────────────────────────────────────────────────────────────────────────


def test_a_named_drug_that_interacts_with_an_active_order_is_said_first(ehr: Ehr) -> None:
    mwangi = demo_patient(ehr, "Mwangi")  # warfarin 5 mg
    result = turn(assistant(ehr), "warfarin", mwangi, "knee pain, thinking ibuprofen 400 mg for a week")
    first = result.answer.split("\n")[0]
    assert first.startswith(f"Safety: ibuprofen with {mwangi['name']}'s active order warfarin sodium 5 MG"), first
    assert "major interaction — raised bleeding risk" in first and "(source: Coumadin (warfarin) label" in first


def test_a_named_drug_already_ordered_or_of_the_same_class_is_said(ehr: Ehr) -> None:
    bello = demo_patient(ehr, "Bello")  # aspirin 81 mg
    result = turn(assistant(ehr), "dup", bello, "thinking aspirin 75 mg and naproxen for her")
    # Issue 46: a message that orders nothing is not said to duplicate an order, and each line names its question.
    assert f"Safety: aspirin would duplicate {bello['name']}'s active order aspirin 81 MG Oral Tablet" in result.answer
    assert all(line.endswith(QUESTION_TAIL) for line in result.answer.split("\n") if "active order" in line)
    assert f"Safety: naproxen is an NSAID, the same class as {bello['name']}'s active order aspirin" in result.answer


def test_a_named_drug_contraindicated_at_the_patients_age_is_said(ehr: Ehr) -> None:
    kofi = demo_patient(ehr, "Asante")  # born 2020
    result = turn(assistant(ehr), "child", kofi, "fever, thinking aspirin for him")
    assert result.answer.startswith("Safety: aspirin — ") and "Reye's syndrome" in result.answer.split("\n")[0]


def test_a_record_that_cannot_be_read_is_said_not_checked() -> None:
    lines = safety_lines("thinking co-amoxiclav", ["amoxicillin-clavulanate"], {"id": "x", "name": "Ann Lee"}, None)
    assert lines == ["Safety: Ann Lee's record could not be read, so co-amoxiclav was NOT checked against their "
                     "allergies, active medicines or age."]


def test_a_drug_the_check_cannot_identify_is_said_not_checked_against_the_allergies() -> None:
    allergy = {"resourceType": "AllergyIntolerance", "code": {"text": "Zorblaxin"}}
    lines = safety_lines("thinking amoxicillin", ["amoxicillin"], {"id": "x", "name": "Ann Lee"},
                         PatientFacts([allergy], []))
    assert lines and "NOT checked against Ann Lee's recorded allergies (Zorblaxin)" in lines[0]


def test_a_drug_for_another_named_patient_is_not_checked_against_the_active_patients_record() -> None:
    facts = PatientFacts([{"resourceType": "AllergyIntolerance", "code": {"text": "penicillin"}}], [])
    lines = safety_lines("amoxicillin for Joseph Mwangi", ["amoxicillin"], {"id": "x", "name": "Grace Mensah"}, facts,
                         asked_about="Joseph Mwangi")
    assert lines == ["Safety: amoxicillin was NOT checked against Joseph Mwangi's record: Joseph Mwangi is not the "
                     "active patient, and no single record of that name was found."]


def test_a_class_member_is_named_with_its_article() -> None:
    assert [one_of(k) for k in ("penicillin", "nsaid", "ace_inhibitor", "arb", "opioid_synthetic", "sulfonamide")] == [
        "a penicillin", "an NSAID", "an ACE inhibitor", "an angiotensin receptor blocker", "an opioid (synthetic)",
        "a sulfonamide antibiotic"]


def test_an_order_approved_this_turn_is_not_called_a_duplicate_of_itself(ehr: Ehr) -> None:
    """Seen in the browser on the default model: after approving paracetamol for a patient on no medicines, the answer
    said "Safety: paracetamol duplicates … active order paracetamol (since today)" — the order just written."""
    patient = add_patient(ehr, "Selfdup")
    bot = assistant(ehr)
    bot.set_active_patient("selfdup", patient)  # type: ignore[arg-type]
    card = bot.run_turn("selfdup", "Prescribe paracetamol 500 mg four times daily for 5 days")
    assert isinstance(card, dict) and card["kind"] == "approval", card
    done = bot.resume("selfdup", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult) and done.writes, done
    assert "duplicates" not in done.answer and "Safety:" not in done.answer, done.answer
    # A second order of the same drug in a later turn is a real duplicate and is said.
    again = bot.run_turn("selfdup", "thinking paracetamol for her as well")
    assert isinstance(again, TurnResult) and "would duplicate" in again.answer, again.answer


def test_a_drug_changed_away_before_approval_gets_no_safety_line_under_the_written_order(ehr: Ehr) -> None:
    """Seen in the walkthrough: amoxicillin proposed for a penicillin-allergic patient, changed to azithromycin on
    the card and approved; the confirmation of the azithromycin order still began "Safety: amoxicillin, a penicillin
    — … allergy"."""
    patient = add_patient(ehr, "Changedaway", allergy=allergen(next(c for c in CLASSES if c.key == "penicillin")))
    bot = assistant(ehr)
    bot.set_active_patient("changed", patient)  # type: ignore[arg-type]
    card = bot.run_turn("changed", "Prescribe amoxicillin 500 mg three times daily")
    assert isinstance(card, dict) and card["kind"] == "approval", card
    shown_card = bot.resume("changed", {"action": "override", "reason": "changed to a macrolide",
                                        "card_id": card["card_id"],
                                        "args": {"medication_name": "azithromycin", "frequency": "once daily"}})
    # Issue 43: the changed values are checked and shown on a new card first; its approval writes them.
    assert isinstance(shown_card, dict) and shown_card["args"]["medication_name"] == "azithromycin", shown_card
    decision = {"action": "override", "reason": "changed to a macrolide"} if shown_card["override_required"] else \
        {"action": "approve"}
    done = bot.resume("changed", {**decision, "card_id": shown_card["card_id"]})
    assert isinstance(done, TurnResult), done
    from docgemma.ui.messages import final_markdown

    shown = final_markdown(done)
    assert "amoxicillin → azithromycin" in shown, shown
    assert "Safety: amoxicillin" not in shown, shown
