"""Patient summary facts, the record tools, and safe writes through the graph (approval, idempotency,
allergy conflicts, bad input)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.clinical.allergy import allergy_conflict
from docgemma.ehr.load import load
from docgemma.ehr.service import Ehr
from docgemma.ehr.summary import compile_summary
from docgemma.llm.fake import FakeLLM
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import ToolContext, ToolRegistry, default_registry
from tests.conftest import assess, intent, select

DATA = Path(__file__).parents[2] / "data"


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


def registry(ehr: Ehr) -> ToolRegistry:
    return bind_tools(default_registry(), ToolClients(record=ehr))


def patient_id(ehr: Ehr, name: str) -> str:
    return str(ehr.client.search("Patient", [("name", name)])[0]["id"])


def run(ehr: Ehr, tool: str, scope: str = "", **args: Any) -> dict[str, Any]:
    spec = registry(ehr)[tool]
    return dict(spec.run(spec.args_model(**args), ToolContext(scope=scope)))


# ── summary ──────────────────────────────────────────────────────────────────────────────────────────


def test_summary_of_the_ckd_patient(ehr: Ehr) -> None:
    summary = ehr.summary(patient_id(ehr, "Okafor"))
    facts = summary.facts
    assert set(facts["active_conditions"]) == {
        "Type 2 diabetes mellitus",
        "Essential hypertension",
        "Chronic kidney disease stage 3",
    }
    assert any("metformin" in m for m in facts["treats"]["Type 2 diabetes mellitus"])
    assert any("lisinopril" in m for m in facts["treats"]["Essential hypertension"])
    assert facts["inferred_medications"] == ["atorvastatin 20 MG Oral Tablet"]  # same-encounter link, flagged
    creatinine = facts["latest_observations"]["Creatinine [Mass/volume] in Serum or Plasma"]
    assert creatinine["value"] == "1.9 mg/dL" and creatinine["trend"]["direction"] == "rising"
    assert creatinine["trend"]["previous_value"] == 1.6 and creatinine["trend"]["previous_date"] == "2026-05-06"
    text = summary.text
    # An inferred link reads as inferred, never as a fact ("treated with: atorvastatin" for CKD was untrue).
    assert "possibly related: atorvastatin" in text and "treated with: atorvastatin" not in text
    assert "[inferred link]" not in text and "condition(s)" not in text and " d)" not in text
    assert "Allergies\nNone recorded." in text and "RENAL FUNCTION: eGFR 33" in text
    assert "Creatinine" in text and "↑ rising" in text and "Note: Follow-up for T2DM" in text
    assert "established" in text  # medication recency


def test_safety_constraints_of_demo_patients(ehr: Ehr) -> None:
    assert any(
        "ALLERGY: Allergy to penicillin — Anaphylaxis" in s for s in ehr.summary(patient_id(ehr, "Mensah")).facts["safety"]
    )
    assert any(s.startswith("ANTICOAGULATED") for s in ehr.summary(patient_id(ehr, "Mwangi")).facts["safety"])
    assert any(s.startswith("PREGNANCY") for s in ehr.summary(patient_id(ehr, "Bello")).facts["safety"])
    assert any(s.startswith("PAEDIATRIC") for s in ehr.summary(patient_id(ehr, "Asante")).facts["safety"])
    elderly = ehr.summary(patient_id(ehr, "Oduya")).facts
    assert any(s.startswith("POLYPHARMACY: 9") for s in elderly["safety"]) and elderly["images"]
    assert len(ehr.summary(patient_id(ehr, "Kariuki")).facts["images"]) == 2


@pytest.mark.parametrize("bundle", sorted((DATA / "synthea" / "synthea-bundles").glob("*.json")), ids=lambda p: p.stem[:12])
def test_summary_facts_match_the_source_data(tmp_path: Path, bundle: Path) -> None:
    ehr = Ehr.embedded(tmp_path / "r.sqlite", seed=None)
    load(ehr.client, bundle)
    pid = str(ehr.client.search("Patient", [])[0]["id"])
    resources = ehr.compartment(pid)
    summary = compile_summary(resources, date(2026, 11, 22))
    conditions = [
        r
        for r in resources
        if r["resourceType"] == "Condition" and r["clinicalStatus"]["coding"][0]["code"] in ("active", "recurrence", "relapse")
    ]
    assert len(summary.facts["active_conditions"]) == len(conditions)
    meds = [r for r in resources if r["resourceType"] == "MedicationRequest" and r["status"] in ("active", "on-hold")]
    assert len(summary.facts["active_medications"]) == len(meds)
    allergies = [r for r in resources if r["resourceType"] == "AllergyIntolerance"]
    assert len(summary.facts["allergies"]) == len(allergies)
    if not allergies:
        assert "## Allergies\nNone recorded." in summary.text
    by_code: dict[str, list[dict[str, Any]]] = {}
    for r in resources:
        if r["resourceType"] == "Observation":
            loinc = next(c["code"] for c in r["code"]["coding"] if "loinc" in c["system"])
            by_code.setdefault(loinc, []).append(r)
    assert set(summary.facts["latest_by_loinc"]) == set(by_code)
    for loinc, series in by_code.items():
        dates = sorted({r.get("effectiveDateTime", "") for r in series}, reverse=True)
        latest = next(r for r in resources if r.get("id") == summary.facts["latest_by_loinc"][loinc]["id"])
        assert latest.get("effectiveDateTime", "") == dates[0]  # the latest value per LOINC code
        previous_id = summary.facts["latest_by_loinc"][loinc]["previous_id"]
        if len(series) > 1:
            previous = next(r for r in resources if r.get("id") == previous_id)
            assert previous.get("effectiveDateTime", "") <= dates[0]


def test_summary_is_recompiled_after_a_write(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Garcia")
    before = ehr.summary(pid)
    assert "lisinopril" not in before.text
    run(
        ehr,
        "prescribe_medication",
        scope="s1",
        patient_id=pid,
        medication_name="lisinopril",
        dosage="10 mg",
        frequency="once daily",
    )
    after = ehr.summary(pid)
    assert after is not before and "lisinopril" in after.text


# ── tools ────────────────────────────────────────────────────────────────────────────────────────────


def test_search_patient_finds_both_james_wilsons(ehr: Ehr) -> None:
    out = run(ehr, "search_patient", name="James Wilson")
    assert len(out["data"]["matches"]) == 2
    assert run(ehr, "search_patient", name="Robert'); DROP TABLE resources;--")["data"]["matches"] == []


def test_concept_search_finds_lab_names(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Okafor")
    out = run(ehr, "query_patient_data", patient_id=pid, name="kidney function")
    text = registry(ehr)["query_patient_data"].format_result(out["data"])
    assert "Creatinine" in text and "Glomerular filtration rate" in text and "Hemoglobin A1c" not in text
    none = run(ehr, "query_patient_data", patient_id=pid, name="thyroid")
    assert none["data"]["results"] == []
    assert "No records matching 'thyroid' were found" in registry(ehr)["query_patient_data"].format_result(none["data"])
    dated = run(ehr, "query_patient_data", patient_id=pid, resource_type="Observation", date_from="2026-10-01")
    assert dated["data"]["results"] and all("2026-10-28" in line for line in dated["data"]["results"])


def test_explore_connections_is_one_generic_traversal(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Okafor")
    diabetes = ehr.client.search("Condition", [("patient", pid), ("code", "44054006")])[0]
    out = run(ehr, "explore_connections", patient_id=pid, fhir_id=diabetes["id"], resource_type="Condition")
    groups = out["data"]["connections"]
    assert any("metformin" in item for item in groups["← MedicationRequest.reasonReference"])
    assert any("Diabetes self-management" in item for item in groups["← CarePlan.addresses"])
    encounter = ehr.client.search("Encounter", [("patient", pid), ("_sort", "-date")])[0]
    out = run(ehr, "explore_connections", patient_id=pid, fhir_id=encounter["id"], resource_type="Encounter")
    assert any("Note: Follow-up for T2DM" in item for item in out["data"]["connections"]["← DocumentReference.context.encounter"])
    other = patient_id(ehr, "Mensah")
    assert (
        run(ehr, "explore_connections", patient_id=other, fhir_id=diabetes["id"], resource_type="Condition")["error_type"]
        == "not_found"
    )


def test_timeline_with_notes(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Mwangi")
    out = run(ehr, "get_patient_timeline", patient_id=pid, start_date="2026-01-01", include_notes=True)
    visits = out["data"]["results"]
    assert [v["date"] for v in visits] == ["2026-10-20", "2026-08-04", "2026-06-02"]
    assert "INR 3.6" in visits[0]["notes"][0] and any("INR" in e for e in visits[0]["events"])


def test_chart_of_unknown_or_malformed_patient(ehr: Ehr) -> None:
    # No such patient is its own error: the answer says "no patient with id …" at once, without retries.
    for tool in ("get_patient_chart", "get_patient_timeline"):
        assert run(ehr, tool, patient_id="nobody-123")["error_type"] == "unknown_patient"
    assert run(ehr, "query_patient_data", patient_id="nobody-123", resource_type="Condition")["error_type"] == \
        "unknown_patient"
    assert run(ehr, "get_patient_chart", patient_id="..%2Fetc-1")["error_type"] == "invalid_args"


# ── writes ───────────────────────────────────────────────────────────────────────────────────────────


def count(ehr: Ehr, kind: str, pid: str) -> int:
    return len(ehr.client.search(kind, [("patient", pid)]))


def test_retried_write_creates_one_resource_and_one_provenance(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Garcia")
    args = {"patient_id": pid, "substance": "latex", "reaction": "urticaria", "severity": "moderate"}
    first = run(ehr, "add_allergy", scope="thread:4", **args)
    second = run(ehr, "add_allergy", scope="thread:4", **args)
    assert first["data"]["created"] is True and second["data"]["created"] is False
    assert first["data"]["resource"] == second["data"]["resource"] and count(ehr, "AllergyIntolerance", pid) == 1
    provenance = [p for p in ehr.compartment(pid) if p["resourceType"] == "Provenance"]
    assert len(provenance) == 1 and provenance[0]["target"][0]["reference"] == first["data"]["resource"]
    assert {a["who"]["display"].split(" (")[0] for a in provenance[0]["agent"]} == {"Clinician", "DocGemma Connect agent"}
    third = run(ehr, "add_allergy", scope="thread:6", **args)  # a new request in a later turn is a new write
    assert third["data"]["created"] is True


def test_allergy_class_cross_reactivity() -> None:
    assert allergy_conflict("Allergy to penicillin", "amoxicillin")
    assert "cross-reactivity" in str(allergy_conflict("Allergy to penicillin", "cefalexin"))
    assert allergy_conflict("Allergy to penicillin", "azithromycin") is None
    assert allergy_conflict("Sulfa drugs", "trimethoprim-sulfamethoxazole")


def assistant_for(ehr: Ehr, replies: list[Any]) -> tuple[Assistant, FakeLLM]:
    fake = FakeLLM(replies)
    return Assistant(fake, registry(ehr), patient_context=ehr.patient_context, write_check=record_write_check(ehr)), fake


def test_prescription_approval_shows_allergy_conflict_and_writes_once(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Mensah")
    args = {"patient_id": pid, "medication_name": "amoxicillin", "dosage": "500 mg", "frequency": "three times daily"}
    assistant, _ = assistant_for(ehr, [intent(), select("prescribe_medication"), args, assess(), "Prescribed."])
    request = assistant.run_turn("t", f"Prescribe amoxicillin 500 mg three times daily for patient {pid}")
    assert isinstance(request, dict)
    assert any(w.startswith("ALLERGY CONFLICT") and "penicillin" in w for w in request["warnings"])
    assert count(ehr, "MedicationRequest", pid) == 0  # nothing written before approval
    # Anaphylaxis to penicillin: only an override with a reason can approve amoxicillin (test_safe_writes.py).
    result = assistant.resume("t", {"action": "override", "reason": "desensitised under allergist care"})
    assert isinstance(result, TurnResult) and count(ehr, "MedicationRequest", pid) == 1
    again = assistant.resume("t", {"action": "approve"})
    assert isinstance(again, TurnResult) and count(ehr, "MedicationRequest", pid) == 1


def test_duplicate_order_warning_and_rejection_changes_nothing(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Okafor")
    args = {"patient_id": pid, "medication_name": "metformin", "dosage": "500 mg", "frequency": "twice daily"}
    assistant, _ = assistant_for(ehr, [intent(), select("prescribe_medication"), args])
    request = assistant.run_turn("t", f"Prescribe metformin 500 mg twice daily for {pid}")
    assert isinstance(request, dict) and any(w.startswith("DUPLICATE ORDER") for w in request["warnings"])
    before = count(ehr, "MedicationRequest", pid)
    result = assistant.resume("t", {"action": "reject"})
    assert isinstance(result, TurnResult) and "declined" in result.answer
    assert count(ehr, "MedicationRequest", pid) == before


def test_edited_note_is_saved_with_the_edit(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Bello")
    args = {"patient_id": pid, "note_type": "progress", "note_text": "BP 158/102."}
    assistant, _ = assistant_for(ehr, [intent(), select("save_clinical_note"), args, assess(), "Saved."])
    assistant.run_turn("t", f"Save a progress note for {pid}: BP 158/102.")
    card = assistant.resume("t", {"action": "edit", "args": {"note_text": "BP 158/102 on labetalol; admitted."}})
    assert isinstance(card, dict) and card["args"]["note_text"] == "BP 158/102 on labetalol; admitted."  # a new card
    assistant.resume("t", {"action": "approve"})
    notes = [
        r
        for r in ehr.compartment(pid)
        if r["resourceType"] == "DocumentReference" and r.get("type", {}).get("text") == "progress"
    ]
    assert len(notes) == 1
    from docgemma.ehr.summary import note_text

    assert note_text(notes[0]) == "BP 158/102 on labetalol; admitted."


def test_write_without_an_active_patient_asks_and_changes_nothing(ehr: Ehr) -> None:
    assistant, _ = assistant_for(ehr, [{"reaction": "rash"}])  # the only field code could not read
    total = ehr.client.http.get(f"{ehr.client.base_url}/AllergyIntolerance").json()["total"]
    result = assistant.run_turn("t", "Record a latex allergy for her")
    assert isinstance(result, TurnResult) and "I need a patient ID" in result.answer
    assert ehr.client.http.get(f"{ehr.client.base_url}/AllergyIntolerance").json()["total"] == total


def test_unknown_patient_write_is_not_found_and_changes_nothing(ehr: Ehr) -> None:
    out = run(ehr, "add_allergy", scope="x", patient_id="nobody-999", substance="latex", reaction="rash")
    # Not "not_found", which the error handler may retry (another approval card): the clinician is asked instead.
    assert out["error_type"] == "invalid_args" and "no patient 'nobody-999'" in out["details"]["missing_fields"][0]


def test_active_patient_summary_goes_into_the_context(ehr: Ehr) -> None:
    assistant, fake = assistant_for(
        ehr,
        [assess(), "Found.", assess(), "Her creatinine is rising."],
    )
    assistant.run_turn("t", "Find patient Amina Okafor")
    result = assistant.run_turn("t", "How is her kidney function?")
    assert isinstance(result, TurnResult)
    # A question about the active patient's record reads it (by rule) and the summary is in the answer's prompt.
    assert result.tools[0]["tool"] == "query_patient_data" and result.tools[0]["args"]["name"] == "kidney function"
    assert "RENAL FUNCTION: eGFR 33" in fake.calls[-1].prompt and "Creatinine" in fake.calls[-1].prompt


def test_three_demo_patients_have_real_images_the_ui_can_show(ehr: Ehr) -> None:
    from docgemma.images import decode_image

    with_images = {}
    for name in ("Kariuki", "Oduya", "Mwangi", "Okafor"):
        images = ehr.images(patient_id(ehr, name))
        with_images[name] = [decode_image(filename, data, 10**7).size for _, filename, data in images]
    assert with_images["Kariuki"] == [(128, 128), (256, 1024)] or sorted(with_images["Kariuki"]) == [(128, 128), (256, 1024)]
    assert with_images["Oduya"] == [(64, 64)] and with_images["Mwangi"] == [(64, 64)] and with_images["Okafor"] == []


def test_an_allergy_read_says_its_reaction_and_criticality(ehr: Ehr) -> None:
    pid = patient_id(ehr, "Mensah")
    out = run(ehr, "query_patient_data", patient_id=pid, resource_type="AllergyIntolerance")
    assert out["status"] == "success"
    assert any("penicillin" in line and "Anaphylaxis" in line and "criticality high" in line for line in out["data"]["results"])
