"""Orders and allergy writes through the real write path on the demo model (``DOCGEMMA_BACKEND=fake``'s rules):

* a penicillin-class product for a patient with a penicillin allergy never gets a plain approval card, in any
  form (brand, combination, salt, strength); a cephalosporin warns; a drug the check cannot identify needs an
  override; the summary flags an active product that conflicts on its ingredients;
* an implausible dose or frequency, or a label maximum exceeded, is a severe finding: listed first, plain
  Approve refused, nothing written until an override with a reason; a typed frequency is never lost;
* the order keeps what the clinician typed: duration (card and FHIR ``dispenseRequest``), indication, words
  no field took; an allergy's substance and reaction by meaning, not position.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.patient import PatientRef
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.ehr.summary import compile_summary
from docgemma.tools.binding import ToolClients, bind_tools, knowledge_clients
from docgemma.tools.catalog.add_allergy import allergy as allergy_request
from docgemma.tools.catalog.prescribe_medication import prescription as prescription_request
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import ToolRegistry, default_registry
from docgemma.tools.routing import Request
from tests.fake_openfda import FakeOpenFDA


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


def registry(ehr: Ehr, knowledge: FakeOpenFDA | None = None) -> ToolRegistry:
    if knowledge is None:
        return bind_tools(default_registry(), ToolClients(record=ehr))
    return bind_tools(default_registry(), knowledge_clients(Settings(), transport=knowledge.transport(), record=ehr))


def assistant(ehr: Ehr, knowledge: FakeOpenFDA | None = None) -> Assistant:
    return Assistant(demo_llm(), registry(ehr, knowledge), patient_context=ehr.patient_context,
                     write_check=record_write_check(ehr))


def pid_of(ehr: Ehr, family: str) -> str:
    return str(ehr.client.search("Patient", [("name", family)])[0]["id"])


def orders(ehr: Ehr, pid: str) -> list[dict[str, Any]]:
    return ehr.client.search("MedicationRequest", [("patient", pid)])


def card_for(bot: Assistant, message: str, thread: str = "t", active: tuple[str, str] | None = None) -> dict[str, Any]:
    if active:
        bot.set_active_patient(thread, {"id": active[0], "name": active[1]})
    card = bot.run_turn(thread, message)
    assert isinstance(card, dict) and card["kind"] == "approval", card
    return dict(card)


# ── 1. allergy check on ingredients, failing safe ─────────────────────────────────────────────────────


def test_augmentin_for_grace_mensah_refuses_plain_approve_and_keeps_the_duration(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")
    bot = assistant(ehr)
    before = len(orders(ehr, pid))
    card = card_for(bot, "Prescribe Augmentin 625 mg tds for 7 days", active=(pid, "Grace Mensah"))
    assert card["override_required"] and card["findings"][0]["severe"]
    assert card["warnings"][0].startswith("ALLERGY CONFLICT (SEVERE)") and "amoxicillin" in card["warnings"][0]
    assert "penicillin" in card["warnings"][0].lower() and "Anaphylaxis" in card["warnings"][0]
    assert card["duration"] == "7 days" and "Duration: 7 days" in card["preview"]
    refused = bot.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(refused, dict) and "Plain approval refused" in refused["notice"]
    assert len(orders(ehr, pid)) == before
    done = bot.resume("t", {"action": "override", "reason": "allergy clinic: tolerated oral challenge 2025"})
    assert isinstance(done, TurnResult) and len(orders(ehr, pid)) == before + 1
    [order] = [o for o in orders(ehr, pid) if o["medicationCodeableConcept"]["text"] == "Augmentin"]
    assert order["dispenseRequest"]["expectedSupplyDuration"] == {
        "value": 7, "unit": "days", "system": "http://unitsofmeasure.org", "code": "d"}
    dosage = order["dosageInstruction"][0]
    assert dosage["text"] == "625 mg tds for 7 days" and dosage["timing"]["repeat"]["boundsDuration"]["value"] == 7
    assert "for 7 days" in done.writes[0]


@pytest.mark.parametrize("product", [
    "Augmentin 875 mg", "co-amoxiclav 625mg", "amoxicillin-clavulanate 875/125 mg", "piperacillin and tazobactam 4.5 g",
    "Amoxicillin 500mg caps", "amoxicillin trihydrate 500 mg", "Zosyn 4.5 g", "Penicillin V 500 mg",
    "flucloxacillin sodium 500 mg", "Unasyn 3 g",
])
def test_no_penicillin_form_reaches_a_plain_card_for_grace(ehr: Ehr, product: str) -> None:
    pid = pid_of(ehr, "Mensah")
    card = card_for(assistant(ehr), f"Prescribe {product} three times daily for patient {pid}")
    assert card["override_required"], (product, card["warnings"])
    assert card["warnings"][0].startswith("ALLERGY CONFLICT (SEVERE)"), card["warnings"]


def test_a_cephalosporin_warns_and_plain_approve_writes(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")
    bot = assistant(ehr)
    card = card_for(bot, f"Prescribe Keflex 500 mg four times daily for 5 days for patient {pid}")
    assert not card["override_required"]
    assert card["warnings"][0].startswith("ALLERGY CROSS-REACTIVITY") and "cephalexin" in card["warnings"][0]
    assert isinstance(bot.resume("t", {"action": "approve"}), TurnResult)
    assert [o["medicationCodeableConcept"]["text"] for o in orders(ehr, pid)] == ["Keflex"]


def test_an_unresolvable_drug_gets_no_card_whoever_the_patient(ehr: Ehr) -> None:
    """Issue 42: a name no source knows is never one click away, allergies or not: no card, the question."""
    for family in ("Mensah", "Mwangi"):
        bot = assistant(ehr)
        out = bot.run_turn("t", f"Prescribe Xyzzolam 5 mg once daily for patient {pid_of(ehr, family)}")
        assert isinstance(out, TurnResult) and "Which medicine did you mean?" in out.answer, out
        assert not out.writes


def test_an_fda_label_identifies_a_brand_the_table_does_not_know(ehr: Ehr) -> None:
    """With the knowledge tools bound, the label's substance_name / pharm_class_epc identify "Larotid"
    (amoxicillin, Penicillin-class Antibacterial): a conflict, not a fail-safe "not verified"; the answer is
    cached, and with openFDA unreachable the same order fails safe instead."""
    pid = pid_of(ehr, "Mensah")
    fda = FakeOpenFDA()
    bot = assistant(ehr, fda)
    card = card_for(bot, f"Prescribe Larotid 500 mg three times daily for patient {pid}")
    assert card["warnings"][0].startswith("ALLERGY CONFLICT (SEVERE)") and "amoxicillin" in card["warnings"][0]
    assert 'openfda.brand_name:"larotid" OR openfda.generic_name:"larotid"' in fda.searches
    asked = len(fda.searches)
    card_for(bot, f"Prescribe Larotid 250 mg three times daily for patient {pid}", thread="t2")
    assert len([s for s in fda.searches[asked:] if "larotid" in s]) == 0  # cached

    class Down(FakeOpenFDA):
        def __call__(self, request: Any) -> Any:
            import httpx

            self.requests.append(request)
            raise httpx.ConnectError("unreachable")

    offline = assistant(ehr, Down()).run_turn("t", f"Prescribe Larotid 500 mg three times daily for patient {pid}")
    assert isinstance(offline, TurnResult) and "Which medicine did you mean?" in offline.answer, offline


def test_the_summary_flags_an_active_product_by_its_ingredients() -> None:
    patient = {"resourceType": "Patient", "id": "p1", "name": [{"given": ["Ann"], "family": "Lee"}],
               "birthDate": "1970-01-01", "gender": "female"}
    allergy = {"resourceType": "AllergyIntolerance", "id": "a1", "patient": {"reference": "Patient/p1"},
               "clinicalStatus": {"coding": [{"code": "active"}]}, "criticality": "high", "code": {"text": "Amoxicillin"}}

    def med(i: str, text: str) -> dict[str, Any]:
        return {"resourceType": "MedicationRequest", "id": i, "status": "active", "intent": "order",
                "subject": {"reference": "Patient/p1"}, "authoredOn": "2026-11-01",
                "medicationCodeableConcept": {"text": text}}

    meds = [med("m1", "Amoxicillin 250 MG / Clavulanate 125 MG Oral Tablet"), med("m2", "Zosyn 4.5 g"),
            med("m3", "lisinopril 10 MG Oral Tablet"), med("m4", "Flurbocillinex 5 mg")]
    safety = compile_summary([patient, allergy, *meds], date(2026, 11, 22)).facts["safety"]
    flagged = [s for s in safety if s.startswith("ALLERGY CONFLICT WITH ACTIVE DRUG")]
    assert len(flagged) == 2 and "Clavulanate" in flagged[0] and "Zosyn" in flagged[1]
    assert any(s.startswith("ALLERGY CHECK INCOMPLETE") and "Flurbocillinex" in s for s in safety)


# ── 3. implausible dose or frequency = severe, first on the card ─────────────────────────────────────


def test_absurd_metformin_is_refused_on_plain_approve_and_written_only_with_an_override(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mwangi")
    bot = assistant(ehr)
    before = len(orders(ehr, pid))
    card = card_for(bot, "Prescribe metformin 5000000 mg every minute for Joseph Mwangi")
    assert card["override_required"]
    assert card["warnings"][0].startswith("IMPLAUSIBLE DOSE") and card["findings"][0]["severe"]
    assert any(w.startswith("IMPLAUSIBLE FREQUENCY") for w in card["severe"])
    assert bot.resume("t", {"action": "approve"})["notice"].startswith("Plain approval refused")  # type: ignore[index]
    assert len(orders(ehr, pid)) == before
    assert isinstance(bot.resume("t", {"action": "override", "reason": "test of the override path"}), TurnResult)
    written = [o for o in orders(ehr, pid) if o["medicationCodeableConcept"]["text"] == "metformin"]
    assert len(written) == 1 and any("test of the override path" in n["text"] for n in written[0]["note"])


def test_the_severe_finding_comes_before_duplicate_order_lines(ehr: Ehr) -> None:
    amina = pid_of(ehr, "Okafor")  # has an active metformin order
    card = card_for(assistant(ehr), f"Prescribe metformin 5000000 mg every minute for patient {amina}")
    kinds = [w.split(":")[0] for w in card["warnings"]]
    assert kinds.index("DUPLICATE ORDER") > max(i for i, f in enumerate(card["findings"]) if f["severe"])
    assert all(f["severe"] for f in card["findings"][: len(card["severe"])])


def test_a_typed_frequency_is_kept_and_flagged(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mwangi")
    card = card_for(assistant(ehr), f"Prescribe oxycodone 80 mg every 5 minutes for patient {pid}")
    assert card["args"]["frequency"] == "every 5 minutes"
    assert card["override_required"] and card["warnings"][0].startswith("IMPLAUSIBLE FREQUENCY: 'every 5 minutes'")


# ── 2. what the clinician typed is kept ──────────────────────────────────────────────────────────────


def _active(patient_id: str | None) -> PatientRef | None:
    return PatientRef(id=patient_id, name="Test Patient") if patient_id else None


def prescription(message: str, active: str | None = "p-1") -> dict[str, Any]:
    return prescription_request(Request(message, extract_entities(message), _active(active)))


def allergy(message: str, active: str | None = "p-1") -> dict[str, Any]:
    return allergy_request(Request(message, extract_entities(message), _active(active)))


@pytest.mark.parametrize(("message", "duration"), [
    ("Prescribe amoxicillin 500 mg tds for 7 days", "7 days"), ("Prescribe amoxicillin 500 mg tds x7d", "7 days"),
    ("Prescribe amoxicillin 500 mg tds 7/7", "7 days"), ("Prescribe doxycycline 100 mg bd for 2 weeks", "2 weeks"),
    ("Start lisinopril 10 mg daily until review", "until review"), ("Prescribe prednisolone 40 mg od 5/7", "5 days"),
    ("Prescribe amoxicillin 500 mg PO TID x7 days", "7 days"), ("Prescribe nitrofurantoin 100 mg bd for a week", "1 week"),
])
def test_duration_is_kept(message: str, duration: str) -> None:
    assert prescription(message)["duration"] == duration


def test_nothing_typed_is_dropped_without_the_card_saying_so(ehr: Ehr) -> None:
    args = prescription("Start her on lisinopril 10 mg daily until review for hypertension, take in the morning")
    assert args["indication"] == "hypertension" and args["duration"] == "until review"
    words = prescription("Prescribe amoxicillin 500 mg tds for 5 days for otitis media, swallow whole, alternate weekdays")
    assert words["indication"] == "otitis media" and "instructions: swallow whole" in words["notes"]
    # Kept apart from the note (issue 46: Approve would have written "not understood: …" into the order).
    assert words["unread"] == "alternate weekdays" and "not understood" not in words["notes"]
    pid = pid_of(ehr, "Mwangi")
    card = card_for(assistant(ehr), f"Prescribe amoxicillin 500 mg tds for 5 days for patient {pid}, alternate weekdays")
    assert any(w.startswith("NOT UNDERSTOOD: 'alternate weekdays'") for w in card["warnings"])


def test_the_indication_is_written_as_the_reason(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mwangi")
    bot = assistant(ehr)
    card_for(bot, f"Prescribe amoxicillin 500 mg three times daily for 5 days for otitis media for patient {pid}")
    assert isinstance(bot.resume("t", {"action": "approve"}), TurnResult)
    [order] = [o for o in orders(ehr, pid) if o["medicationCodeableConcept"]["text"] == "amoxicillin"]
    assert order["reasonCode"] == [{"text": "otitis media"}]


@pytest.mark.parametrize(("message", "substance", "reaction"), [
    ("Patient kjm-204 gets angioedema with lisinopril, please document it", "lisinopril", "angioedema"),
    ("Record a penicillin allergy (hives) for abc-123", "penicillin", "hives"),
    ("Document allergy to sulfa drugs causing rash for abc-123", "sulfonamides", "rash"),
    ("Document that she had hives after amoxicillin", "amoxicillin", "hives"),
    ("Record a rash from co-trimoxazole for abc-123", "co-trimoxazole", "rash"),
    ("Record angioedema on enalapril for abc-123", "enalapril", "angioedema"),
    ("Add allergy: ibuprofen (wheeze) for abc-123", "ibuprofen", "wheeze"),
    ("Record an allergy to Augmentin with swollen lips for abc-123", "Augmentin", "swollen lips"),
    ("Record a latex allergy with urticaria for her", "latex", "urticaria"),
])
def test_allergy_substance_and_reaction_by_meaning(message: str, substance: str, reaction: str) -> None:
    args = allergy(message)
    assert (args["substance"], args["reaction"]) == (substance, reaction)


def test_angioedema_with_lisinopril_is_a_severe_allergy_on_the_card(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mwangi")
    card = card_for(assistant(ehr), f"Document an allergy for patient {pid}: angioedema with lisinopril")
    assert card["args"]["substance"] == "lisinopril" and card["args"]["reaction"] == "angioedema"
    assert card["args"]["severity"] == "severe"


def test_grounding_accepts_the_same_product_by_its_ingredients() -> None:
    from docgemma.agent.validation import ground

    message = "Check FDA warnings for Augmentin"
    spec = default_registry()["check_drug_safety"]
    same, repairs = ground(spec, {"drug_name": "amoxicillin and clavulanate potassium"}, extract_entities(message),
                           None, message)
    assert same == {"drug_name": "amoxicillin and clavulanate potassium"} and repairs == []
    other, repairs = ground(spec, {"drug_name": "aspirin"}, extract_entities(message), None, message)
    assert other == {"drug_name": "amoxicillin-clavulanate"} and repairs


# ── 4. issue 30 item 7: a dose read right or refused, a negated write never written ──────────────────


def test_a_thousands_comma_is_read_as_thousands_and_refuses_plain_approve(ehr: Ehr) -> None:
    from docgemma.clinical.dosing import parse_dose

    card = card_for(assistant(ehr), "Prescribe amlodipine 5,000 mg once daily for Grace Mensah",
                    active=(pid_of(ehr, "Mensah"), "Grace Mensah"))
    assert card["args"]["medication_name"] == "amlodipine" and card["args"]["dosage"] == "5,000 mg"
    dose = parse_dose(card["args"]["dosage"])
    assert dose is not None and dose.mg == 5000 and card["override_required"]


def test_a_negative_dose_keeps_the_drug_name_and_its_sign(ehr: Ehr) -> None:
    card = card_for(assistant(ehr), "Prescribe amlodipine -5 mg once daily for Grace Mensah",
                    active=(pid_of(ehr, "Mensah"), "Grace Mensah"))
    assert (card["args"]["medication_name"], card["args"]["dosage"]) == ("amlodipine", "-5 mg")
    assert card["override_required"]


def test_a_dose_with_an_ambiguous_separator_reaches_the_card_as_typed(ehr: Ehr) -> None:
    card = card_for(assistant(ehr), "Prescribe amlodipine 1.000 mg once daily for Grace Mensah",
                    active=(pid_of(ehr, "Mensah"), "Grace Mensah"))
    assert (card["args"]["medication_name"], card["args"]["dosage"]) == ("amlodipine", "1.000 mg")


def test_once_nightly_is_once_daily_in_the_written_order(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mwangi")
    bot = assistant(ehr)
    card = card_for(bot, f"Start atorvastatin 40 mg once nightly for patient {pid}")
    assert card["args"]["frequency"] == "once nightly"
    assert isinstance(bot.resume("t", {"action": "approve", "card_id": card["card_id"]}), TurnResult)
    [written] = [o for o in orders(ehr, pid) if o["medicationCodeableConcept"]["text"] == "atorvastatin"]
    assert written["dosageInstruction"][0]["timing"]["repeat"] == {"frequency": 1, "period": 1, "periodUnit": "d"}


@pytest.mark.parametrize(("message", "said"), [
    ("He is NOT allergic to latex, please record that", "'NOT allergic to latex' is not recorded as an allergy"),
    # "No known drug allergies, please document" is the coded NKDA entry's card (tests/integration/
    # test_allergy_negation.py): refused for Grace Mensah, whose penicillin allergy is on record.
    ("Denies any drug allergies, please document", "is not recorded as an allergy"),
    ("She doesn't take amlodipine anymore, please add that", "is not a prescription"),
    ("stop amlodipine", "is not a prescription"),
])
def test_a_negated_write_request_writes_nothing_and_says_so(ehr: Ehr, message: str, said: str) -> None:
    pid = pid_of(ehr, "Mensah")
    bot = assistant(ehr)
    bot.set_active_patient("t", {"id": pid, "name": "Grace Mensah"})
    allergies = ehr.client.search("AllergyIntolerance", [("patient", pid)])
    before = len(orders(ehr, pid))
    result = bot.run_turn("t", message)
    assert isinstance(result, TurnResult), result
    assert said in result.answer and "nothing was written" in result.answer
    assert ehr.client.search("AllergyIntolerance", [("patient", pid)]) == allergies and len(orders(ehr, pid)) == before
