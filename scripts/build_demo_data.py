"""Builds ``data/demo/demo_patients.json``: the app's synthetic demo patients as one FHIR R4 transaction Bundle.

    python scripts/build_demo_data.py

Every person here is fictional and every value is synthetic, written to make the demo scenarios work
(CKD + diabetes + hypertension with a rising creatinine, AF on warfarin, a penicillin allergy, pre-eclampsia,
a child, an elderly patient on many drugs, an oncology patient, same-name patients for disambiguation).
The images are real: anonymised sample DICOM files that ship inside pydicom (``pydicom/data/test_files``),
attached as DocumentReferences and described as sample images, not as these patients' anatomy.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

import pydicom

OUT = Path(__file__).resolve().parents[1] / "data" / "demo" / "demo_patients.json"
NS = uuid.UUID("5b0f1c1e-8d2a-4c7e-9a55-0d0c6a7e2b10")
SNOMED, LOINC, RXNORM = "http://snomed.info/sct", "http://loinc.org", "http://www.nlm.nih.gov/research/umls/rxnorm"
DICOM_DIR = Path(pydicom.__file__).parent / "data" / "test_files"
entries: list[dict[str, Any]] = []


def uid(*parts: str) -> str:
    return str(uuid.uuid5(NS, "/".join(parts)))


def add(resource: dict[str, Any]) -> str:
    """Queue ``resource``; references to it use ``Type/id`` and are rewritten to its urn:uuid below."""
    # POST with urn:uuid full URLs: the embedded store keeps the uuid as the id; other servers (Medplum,
    # which also caps the number of updates per transaction) assign their own and rewrite the references.
    body = {k: v for k, v in resource.items() if k != "id"}
    entries.append({"fullUrl": f"urn:uuid:{resource['id']}", "resource": body,
                    "request": {"method": "POST", "url": resource["resourceType"]}})
    return str(resource["id"])


def concept(system: str, code: str, display: str) -> dict[str, Any]:
    return {"coding": [{"system": system, "code": code, "display": display}], "text": display}


class P:
    """One demo patient and helpers that add their resources."""

    def __init__(self, key: str, given: str, family: str, gender: str, birth: str, mrn: str) -> None:
        self.key = key
        self.id = add({"resourceType": "Patient", "id": uid(key), "identifier": [{"system": "urn:docgemma:demo-mrn", "value": mrn}],
                       "name": [{"use": "official", "family": family, "given": [given]}], "gender": gender,
                       "birthDate": birth, "meta": {"tag": [{"system": "urn:docgemma", "code": "synthetic-demo"}]}})
        self.ref = {"reference": f"Patient/{self.id}"}

    def encounter(self, tag: str, day: str, reason: str, cls: str = "AMB") -> str:
        return add({"resourceType": "Encounter", "id": uid(self.key, "enc", tag), "status": "finished",
                    "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": cls},
                    "type": [concept(SNOMED, "185349003", reason)], "subject": self.ref,
                    "period": {"start": f"{day}T09:00:00Z", "end": f"{day}T09:30:00Z"}})

    def condition(self, tag: str, code: str, display: str, onset: str, enc: str | None = None,
                  status: str = "active", abated: str | None = None) -> str:
        resource = {"resourceType": "Condition", "id": uid(self.key, "cond", tag),
                    "clinicalStatus": concept("http://terminology.hl7.org/CodeSystem/condition-clinical", status, status),
                    "verificationStatus": concept("http://terminology.hl7.org/CodeSystem/condition-ver-status", "confirmed", "confirmed"),
                    "category": [concept("http://terminology.hl7.org/CodeSystem/condition-category", "problem-list-item", "Problem list item")],
                    "code": concept(SNOMED, code, display), "subject": self.ref, "onsetDateTime": onset}
        if enc:
            resource["encounter"] = {"reference": f"Encounter/{enc}"}
        if abated:
            resource["abatementDateTime"] = abated
        return add(resource)

    def med(self, tag: str, code: str, display: str, dose: str, authored: str, reason: str | None = None,
            enc: str | None = None, status: str = "active") -> str:
        resource: dict[str, Any] = {"resourceType": "MedicationRequest", "id": uid(self.key, "med", tag), "status": status,
                                    "intent": "order", "medicationCodeableConcept": concept(RXNORM, code, display),
                                    "subject": self.ref, "authoredOn": authored, "dosageInstruction": [{"text": dose}]}
        if reason:
            resource["reasonReference"] = [{"reference": f"Condition/{reason}"}]
        if enc:
            resource["encounter"] = {"reference": f"Encounter/{enc}"}
        return add(resource)

    def obs(self, tag: str, code: str, display: str, value: float, unit: str, day: str, category: str = "laboratory",
            enc: str | None = None) -> str:
        resource: dict[str, Any] = {"resourceType": "Observation", "id": uid(self.key, "obs", tag, day), "status": "final",
                                    "category": [concept("http://terminology.hl7.org/CodeSystem/observation-category", category, category)],
                                    "code": concept(LOINC, code, display), "subject": self.ref,
                                    "effectiveDateTime": f"{day}T09:10:00Z", "valueQuantity": {"value": value, "unit": unit}}
        if enc:
            resource["encounter"] = {"reference": f"Encounter/{enc}"}
        return add(resource)

    def bp(self, systolic: int, diastolic: int, day: str) -> str:
        return add({"resourceType": "Observation", "id": uid(self.key, "bp", day), "status": "final",
                    "category": [concept("http://terminology.hl7.org/CodeSystem/observation-category", "vital-signs", "vital-signs")],
                    "code": concept(LOINC, "85354-9", "Blood pressure panel"), "subject": self.ref,
                    "effectiveDateTime": f"{day}T09:05:00Z",
                    "component": [{"code": concept(LOINC, "8480-6", "Systolic blood pressure"),
                                   "valueQuantity": {"value": systolic, "unit": "mmHg"}},
                                  {"code": concept(LOINC, "8462-4", "Diastolic blood pressure"),
                                   "valueQuantity": {"value": diastolic, "unit": "mmHg"}}]})

    def allergy(self, tag: str, code: str, display: str, reaction: str, criticality: str = "high") -> str:
        return add({"resourceType": "AllergyIntolerance", "id": uid(self.key, "allergy", tag),
                    "clinicalStatus": concept("http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "active", "active"),
                    "type": "allergy", "category": ["medication"], "criticality": criticality,
                    "code": concept(SNOMED, code, display), "patient": self.ref, "recordedDate": "2019-05-02",
                    "reaction": [{"manifestation": [concept(SNOMED, "0", reaction)]}]})

    def note(self, tag: str, day: str, enc: str, text: str) -> str:
        return add({"resourceType": "DocumentReference", "id": uid(self.key, "note", tag), "status": "current",
                    "type": concept(LOINC, "11506-3", "Progress note"), "subject": self.ref, "date": f"{day}T09:30:00Z",
                    "content": [{"attachment": {"contentType": "text/plain",
                                                "data": base64.b64encode(text.encode()).decode()}}],
                    "context": {"encounter": [{"reference": f"Encounter/{enc}"}]}})

    def image(self, tag: str, day: str, file: str, description: str) -> str:
        data = (DICOM_DIR / file).read_bytes()
        return add({"resourceType": "DocumentReference", "id": uid(self.key, "image", tag), "status": "current",
                    "type": concept(LOINC, "18748-4", "Diagnostic imaging study"), "subject": self.ref,
                    "date": f"{day}T10:00:00Z", "description": description,
                    "content": [{"attachment": {"contentType": "application/dicom", "title": file,
                                                "data": base64.b64encode(data).decode()}}]})

    def immunization(self, tag: str, code: str, display: str, day: str) -> str:
        return add({"resourceType": "Immunization", "id": uid(self.key, "imm", tag), "status": "completed",
                    "vaccineCode": concept("http://hl7.org/fhir/sid/cvx", code, display), "patient": self.ref,
                    "occurrenceDateTime": f"{day}T09:00:00Z"})

    def careplan(self, tag: str, display: str, condition: str) -> str:
        return add({"resourceType": "CarePlan", "id": uid(self.key, "plan", tag), "status": "active", "intent": "plan",
                    "category": [concept(SNOMED, "734163000", display)], "subject": self.ref,
                    "addresses": [{"reference": f"Condition/{condition}"}]})


SAMPLE = "anonymised sample image from pydicom, not this synthetic patient's anatomy"


def build() -> None:
    # 1. CKD + type 2 diabetes + hypertension on metformin and lisinopril, creatinine rising.
    p = P("amina", "Amina", "Okafor", "female", "1964-03-12", "DG-1001")
    e0 = p.encounter("2019", "2019-02-11", "Diabetes review")
    dm = p.condition("dm", "44054006", "Type 2 diabetes mellitus", "2012-06-01")
    htn = p.condition("htn", "38341003", "Essential hypertension", "2015-09-20")
    p.condition("ckd", "433144002", "Chronic kidney disease stage 3", "2024-01-15", enc=e0)
    p.med("metformin", "861004", "metformin 1000 MG Oral Tablet", "1000 mg twice daily", "2012-06-01", reason=dm)
    p.med("lisinopril", "314076", "lisinopril 20 MG Oral Tablet", "20 mg once daily", "2015-09-20", reason=htn)
    p.med("atorvastatin", "617311", "atorvastatin 20 MG Oral Tablet", "20 mg at night", "2019-02-11", enc=e0)
    p.careplan("dm", "Diabetes self-management plan", dm)
    for day, cr, egfr, a1c in (("2025-11-04", 1.3, 52, 7.4), ("2026-05-06", 1.6, 41, 7.6), ("2026-10-28", 1.9, 33, 7.9)):
        enc = p.encounter(day, day, "Diabetes and kidney review")
        p.obs("creat", "2160-0", "Creatinine [Mass/volume] in Serum or Plasma", cr, "mg/dL", day, enc=enc)
        p.obs("egfr", "33914-3", "Glomerular filtration rate/1.73 sq M.predicted (eGFR)", egfr, "mL/min/1.73m2", day, enc=enc)
        p.obs("a1c", "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", a1c, "%", day, enc=enc)
        p.obs("k", "2823-3", "Potassium [Moles/volume] in Serum or Plasma", 5.1 if cr > 1.5 else 4.6, "mmol/L", day, enc=enc)
        p.bp(146 if cr > 1.5 else 138, 88, day)
    p.note("last", "2026-10-28", enc, "Follow-up for T2DM, HTN and CKD 3. Creatinine up to 1.9 from 1.6, eGFR 33. "
           "Metformin at 2 g/day: needs dose review at eGFR below 45; consider stopping below 30. ACE inhibitor continued; "
           "potassium 5.1, recheck in 2 weeks. Ankle oedema mild. Plan: renal ultrasound, urine ACR, review in 4 weeks.")
    p.immunization("flu", "140", "Influenza, seasonal, injectable", "2025-10-01")

    # 2. Atrial fibrillation on warfarin.
    p = P("joseph", "Joseph", "Mwangi", "male", "1953-07-30", "DG-1002")
    af = p.condition("af", "49436004", "Atrial fibrillation", "2018-04-02")
    p.med("warfarin", "855332", "warfarin sodium 5 MG Oral Tablet", "5 mg once daily, adjust to INR 2-3", "2018-04-02", reason=af)
    p.med("bisoprolol", "854905", "bisoprolol fumarate 5 MG Oral Tablet", "5 mg once daily", "2018-04-02", reason=af)
    for day, inr in (("2026-06-02", 2.4), ("2026-08-04", 2.8), ("2026-10-20", 3.6)):
        enc = p.encounter(day, day, "Anticoagulation clinic")
        p.obs("inr", "6301-6", "INR in Platelet poor plasma by Coagulation assay", inr, "{INR}", day, enc=enc)
    p.note("last", "2026-10-20", enc, "Anticoagulation clinic. INR 3.6 (target 2-3), no bleeding. Started a course of "
           "over-the-counter ibuprofen for knee pain last week: advised to stop NSAIDs. Warfarin held one day, then 4 mg daily. "
           "Recheck INR in 5 days.")
    p.image("mr", "2026-09-15", "MR_small_RLE.dcm", f"MR head, TIA work-up ({SAMPLE})")

    # 3. Penicillin allergy.
    p = P("grace", "Grace", "Mensah", "female", "1991-01-22", "DG-1003")
    p.allergy("pen", "91936005", "Allergy to penicillin", "Anaphylaxis")
    enc = p.encounter("2026-11-03", "2026-11-03", "Acute illness visit")
    p.condition("sinus", "15805002", "Acute sinusitis", "2026-11-01", enc=enc)
    p.obs("temp", "8310-5", "Body temperature", 38.2, "Cel", "2026-11-03", "vital-signs", enc=enc)
    p.note("last", "2026-11-03", enc, "Five days of facial pain, purulent discharge and fever 38.2. Known penicillin "
           "anaphylaxis (2019). Plan: symptomatic care; if antibiotics are needed, avoid penicillins.")

    # 4. Pregnancy with pre-eclampsia.
    p = P("fatima", "Fatima", "Bello", "female", "1998-05-09", "DG-1004")
    preg = p.condition("preg", "77386006", "Pregnancy", "2026-03-20")
    pe = p.condition("pe", "398254007", "Pre-eclampsia", "2026-10-25")
    p.med("labetalol", "896758", "labetalol hydrochloride 200 MG Oral Tablet", "200 mg twice daily", "2026-10-25", reason=pe)
    p.med("aspirin", "243670", "aspirin 81 MG Oral Tablet", "150 mg at night", "2026-05-01", reason=preg)
    for day, sbp, dbp, prot in (("2026-10-25", 152, 98, 0.4), ("2026-11-06", 158, 102, 0.9)):
        enc = p.encounter(day, day, "Antenatal visit")
        p.bp(sbp, dbp, day)
        p.obs("upcr", "2890-2", "Protein/Creatinine [Mass Ratio] in Urine", prot, "g/g", day, enc=enc)
    p.note("last", "2026-11-06", enc, "G1P0 at 33+2 weeks. BP 158/102 on labetalol 200 mg BID, proteinuria rising, "
           "no headache or visual symptoms, platelets normal. Plan: admit for monitoring, steroids, magnesium if severe features.")

    # 5. A child.
    p = P("kofi", "Kofi", "Asante", "male", "2020-02-14", "DG-1005")
    asthma = p.condition("asthma", "195967001", "Asthma", "2023-05-10")
    p.med("salbutamol", "745679", "albuterol 0.09 MG/ACTUAT Inhalant", "2 puffs as needed", "2023-05-10", reason=asthma)
    for day, weight in (("2026-03-02", 20.1), ("2026-10-12", 21.4)):
        enc = p.encounter(day, day, "Paediatric review")
        p.obs("weight", "29463-7", "Body weight", weight, "kg", day, "vital-signs", enc=enc)
    p.note("last", "2026-10-12", enc, "Six-year-old with asthma, night cough twice weekly, using reliever 3 times a week. "
           "Weight 21.4 kg. Consider a low-dose inhaled corticosteroid; inhaler technique reviewed.")
    p.immunization("mmr", "03", "MMR", "2021-02-20")

    # 6. Elderly patient on many drugs.
    p = P("margaret", "Margaret", "Oduya", "female", "1942-09-03", "DG-1006")
    e1 = p.encounter("2024", "2024-02-02", "Annual review")
    conds = {k: p.condition(k, c, d, o, enc=e1 if k in ("af2", "hf") else None) for k, c, d, o in (
        ("htn", "38341003", "Essential hypertension", "2000-01-01"), ("dm", "44054006", "Type 2 diabetes mellitus", "2008-05-01"),
        ("hf", "84114007", "Heart failure", "2024-02-02"), ("dem", "26929004", "Alzheimer disease", "2022-07-15"),
        ("op", "64859006", "Osteoporosis", "2019-03-01"), ("af2", "49436004", "Atrial fibrillation", "2024-02-02"))}
    for tag, code, display, dose, reason in (
            ("amlo", "329528", "amlodipine 5 MG Oral Tablet", "5 mg daily", "htn"),
            ("met", "861007", "metformin 500 MG Oral Tablet", "500 mg twice daily", "dm"),
            ("furo", "313988", "furosemide 40 MG Oral Tablet", "40 mg each morning", "hf"),
            ("done", "997223", "donepezil 10 MG Oral Tablet", "10 mg at night", "dem"),
            ("alen", "904421", "alendronate 70 MG Oral Tablet", "70 mg weekly", "op")):
        p.med(tag, code, display, dose, "2024-02-02", reason=conds[reason])
    p.med("apix", "1364445", "apixaban 2.5 MG Oral Tablet", "2.5 mg twice daily", "2024-02-02", enc=e1)
    p.med("omep", "198053", "omeprazole 20 MG Oral Capsule", "20 mg daily", "2021-01-10")
    p.med("para", "313782", "acetaminophen 500 MG Oral Tablet", "1 g up to four times daily", "2026-09-01")
    p.med("zop", "1020008", "zopiclone 7.5 MG Oral Tablet", "7.5 mg at night", "2026-10-02")
    enc = p.encounter("2026-10-30", "2026-10-30", "Falls assessment")
    p.obs("na", "2951-2", "Sodium [Moles/volume] in Serum or Plasma", 131, "mmol/L", "2026-10-30", enc=enc)
    p.obs("egfr", "33914-3", "Glomerular filtration rate/1.73 sq M.predicted (eGFR)", 48, "mL/min/1.73m2", "2026-10-30", enc=enc)
    p.note("last", "2026-10-30", enc, "Two falls in a month since zopiclone was started. Nine regular medicines. "
           "Orthostatic drop 22 mmHg. Plan: stop zopiclone, review furosemide dose, medication review for falls risk.")
    p.image("mr", "2026-10-30", "MR_small.dcm", f"MR head after fall ({SAMPLE})")

    # 7. Oncology patient.
    p = P("samuel", "Samuel", "Kariuki", "male", "1968-12-01", "DG-1007")
    nsclc = p.condition("nsclc", "254637007", "Non-small cell lung cancer", "2026-04-10")
    p.med("pembro", "1657746", "pembrolizumab 25 MG/ML Injectable Solution", "200 mg IV every 3 weeks", "2026-05-02", reason=nsclc)
    for day, alt, tsh in (("2026-07-01", 28, 2.1), ("2026-10-15", 96, 6.8)):
        enc = p.encounter(day, day, "Oncology review")
        p.obs("alt", "1742-6", "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma", alt, "U/L", day, enc=enc)
        p.obs("tsh", "3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", tsh, "m[IU]/L", day, enc=enc)
    p.note("last", "2026-10-15", enc, "Cycle 8 of pembrolizumab for stage IIIB NSCLC. Fatigue; ALT 96 (2.4x ULN) and TSH 6.8: "
           "possible immune-related hepatitis and thyroiditis. Plan: hold cycle 9, repeat LFTs in 1 week, free T4.")
    p.image("ct", "2026-09-30", "CT_small.dcm", f"CT chest, restaging ({SAMPLE})")
    p.image("nm", "2026-04-20", "JPEG2000.dcm", f"Nuclear medicine whole-body scan, staging ({SAMPLE})")

    # 8. Maria Garcia (the seed walkthrough patient): type 2 diabetes on metformin.
    p = P("maria", "Maria", "Garcia", "female", "1979-08-17", "DG-1008")
    dm = p.condition("dm", "44054006", "Type 2 diabetes mellitus", "2021-01-05")
    p.med("metformin", "861004", "metformin 1000 MG Oral Tablet", "1000 mg twice daily", "2021-01-05", reason=dm)
    enc = p.encounter("2026-09-18", "2026-09-18", "Diabetes review")
    p.obs("a1c", "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.9, "%", "2026-09-18", enc=enc)
    p.note("last", "2026-09-18", enc, "Diabetes well controlled on metformin. Foot check normal. Review in 6 months.")

    # 9-10. Two patients named James Wilson (for the "which one did you mean?" clarification).
    for key, birth, mrn in (("james1", "1950-02-01", "DG-1009"), ("james2", "1988-11-30", "DG-1010")):
        p = P(key, "James", "Wilson", "male", birth, mrn)
        enc = p.encounter("2026-08-01", "2026-08-01", "Routine check-up")
        p.bp(128, 80, "2026-08-01")


def to_urns(value: Any, ids: set[str]) -> Any:
    """``Type/<id>`` references to resources of this bundle become ``urn:uuid:<id>``."""
    if isinstance(value, dict):
        return {k: (f"urn:uuid:{v.split('/', 1)[1]}" if k == "reference" and isinstance(v, str) and v.split("/")[-1] in ids
                    else to_urns(v, ids)) for k, v in value.items()}
    if isinstance(value, list):
        return [to_urns(v, ids) for v in value]
    return value


def main() -> None:
    build()
    ids = {e["fullUrl"][9:] for e in entries}
    entries[:] = [to_urns(e, ids) for e in entries]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"resourceType": "Bundle", "type": "transaction", "entry": entries}, indent=1) + "\n")
    print(f"{OUT}: {len(entries)} resources")


if __name__ == "__main__":
    main()
