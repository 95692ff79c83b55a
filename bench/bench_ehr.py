"""Record figures. Default: summary compile time for the largest shared Synthea patient, summary tokens
per demo patient (Gemma tokenizer, when cached by the budget test), search p50/p95 on the embedded server over
HTTP. ``--scale``: search p50/p95 over HTTP and the load time with >= 100k resources.

    python bench/bench_ehr.py                       # -> results_ehr.json
    python bench/bench_ehr.py --scale [--patients 1000] --out bench/results/results_ehr_scale.json
    python bench/bench_ehr.py --scale --src /tmp/baseline --out ...   # the same bench on an older checkout

``--scale`` posts synthetic Synthea-like patients (Patient, encounters, vital-sign and lab observations with
LOINC codes, conditions, medication orders, allergies, immunizations, procedures; ~100 resources each) one
transaction Bundle per patient through the FHIR API, next to the real Synthea files in ``data/synthea``.
``--src`` puts another checkout's ``docgemma`` first on the path, so before/after figures of a change come from
the same bench; it uses FHIR REST only, which older code answers too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TOKENIZER = Path.home() / ".cache" / "docgemma" / "gemma3-tokenizer"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 2)}


def small() -> dict[str, Any]:
    """The issue-4 figures (``results_ehr.json``)."""
    from docgemma.ehr.api import FhirApi
    from docgemma.ehr.client import FhirClient
    from docgemma.ehr.load import load
    from docgemma.ehr.service import Ehr
    from docgemma.ehr.store import FhirStore
    from docgemma.ehr.summary import compile_summary

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "record.sqlite"
        ehr = Ehr.embedded(path)
        start = time.perf_counter()
        load(ehr.client, DATA / "synthea")
        figures["load_all_synthea_s"] = round(time.perf_counter() - start, 2)

        patients = ehr.client.search("Patient", [], limit=100)
        largest = max(patients, key=lambda p: len(ehr.compartment(p["id"])))
        resources = ehr.compartment(largest["id"])
        runs = []
        for _ in range(20):
            start = time.perf_counter()
            compile_summary(resources)
            runs.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        ehr.compartment(largest["id"])
        fetch_ms = (time.perf_counter() - start) * 1000
        figures["largest_patient"] = {
            "resources": len(resources),
            "compile_ms_p50": round(statistics.median(runs), 1),
            "fetch_everything_ms": round(fetch_ms, 1),
        }

        count = None
        if (TOKENIZER / "tokenizer.json").exists():
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(TOKENIZER)
            count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
        tokens = {}
        for patient in patients:
            if any(t.get("code") == "synthetic-demo" for t in patient.get("meta", {}).get("tag", [])):
                summary = ehr.summary(patient["id"])
                name = f"{summary.facts['patient']['name']} ({patient['id'][:4]})"
                tokens[name] = count(summary.text) if count else summary.tokens_estimated
        figures["summary_tokens_per_demo_patient"] = {"tokenizer": "gemma3" if count else "estimate", **tokens}

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        import uvicorn

        from docgemma.ehr.server import make_app

        base = f"http://127.0.0.1:{port}/fhir"
        server = uvicorn.Server(
            uvicorn.Config(make_app(FhirApi(FhirStore(path), base)), host="127.0.0.1", port=port, log_level="error")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        client = FhirClient(base)
        queries = {
            "Patient?name=": ("Patient", [("name", "garcia")]),
            "Observation?patient&code&_sort=-date": (
                "Observation",
                [("patient", largest["id"]), ("code", "http://loinc.org|8302-2"), ("_sort", "-date")],
            ),
            "Condition?patient&status=active": ("Condition", [("patient", largest["id"]), ("status", "active")]),
        }
        search = {}
        for label, (kind, params) in queries.items():
            samples = []
            for _ in range(60):
                start = time.perf_counter()
                client.search(kind, params)
                samples.append((time.perf_counter() - start) * 1000)
            search[label] = percentiles(samples)
        figures["search_over_http"] = search
        server.should_exit = True
        thread.join(5)
    return figures


LOINC = "http://loinc.org"
SNOMED = "http://snomed.info/sct"
VITALS = [("8480-6", "Systolic blood pressure", "mm[Hg]", 100, 160), ("8462-4", "Diastolic blood pressure", "mm[Hg]", 60, 100),
          ("8867-4", "Heart rate", "/min", 55, 110), ("29463-7", "Body weight", "kg", 45, 120)]
LABS = [("2160-0", "Creatinine [Mass/volume] in Serum or Plasma", "mg/dL", 0.6, 2.5),
        ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", "%", 4.8, 10.5),
        ("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", "mg/dL", 140, 280),
        ("33914-3", "Glomerular filtration rate/1.73 sq M.predicted", "mL/min", 25, 110)]
CONDITIONS = [("44054006", "Diabetes mellitus type 2"), ("38341003", "Hypertensive disorder"),
              ("55822004", "Hyperlipidemia"), ("433144002", "Chronic kidney disease stage 3"),
              ("195967001", "Asthma"), ("40055000", "Chronic sinusitis"), ("271737000", "Anemia")]
DRUGS = [("860975", "metformin 500 MG Oral Tablet"), ("314076", "lisinopril 10 MG Oral Tablet"),
         ("617312", "atorvastatin 20 MG Oral Tablet"), ("197361", "amlodipine 5 MG Oral Tablet"),
         ("310965", "ibuprofen 200 MG Oral Tablet"), ("308136", "amoxicillin 500 MG Oral Capsule")]
FAMILIES = ["Garcia", "Smith", "Okafor", "Mensah", "Nguyen", "Kowalski", "Haddad", "Silva", "Ivanova", "Tanaka"]


def concept(system: str, code: str, text: str) -> dict[str, Any]:
    return {"coding": [{"system": system, "code": code, "display": text}], "text": text}


def patient_bundle(n: int, rng: random.Random) -> list[dict[str, Any]]:
    """One synthetic patient's transaction entries (~100 resources, urn:uuid references like Synthea)."""
    pid = f"urn:uuid:{uuid.uuid4()}"
    subject = {"reference": pid}
    family = f"{FAMILIES[n % len(FAMILIES)]}{n:05d}"
    entries: list[dict[str, Any]] = [{"fullUrl": pid, "resource": {
        "resourceType": "Patient", "name": [{"family": family, "given": [f"Given{n}"]}],
        "gender": rng.choice(["female", "male"]), "birthDate": f"{rng.randint(1935, 2015)}-{rng.randint(1, 12):02d}-15",
        "identifier": [{"system": "urn:bench:mrn", "value": f"MRN-{n:06d}"}]}}]
    encounters = []
    for visit in range(10):
        eid = f"urn:uuid:{uuid.uuid4()}"
        day = f"{2016 + visit}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        encounters.append((eid, day))
        entries.append({"fullUrl": eid, "resource": {
            "resourceType": "Encounter", "status": "finished", "subject": subject,
            "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "AMB"},
            "type": [concept(SNOMED, "185349003", "Encounter for check up")], "period": {"start": f"{day}T09:00:00Z"}}})
    for eid, day in encounters:
        for code, text, unit, low, high in (*VITALS, *LABS[:2]):
            category = "vital-signs" if (code, text, unit, low, high) in VITALS else "laboratory"
            entries.append({"resource": {
                "resourceType": "Observation", "status": "final", "subject": subject, "encounter": {"reference": eid},
                "category": [concept("http://terminology.hl7.org/CodeSystem/observation-category", category, category)],
                "code": concept(LOINC, code, text), "effectiveDateTime": f"{day}T09:30:00Z",
                "valueQuantity": {"value": round(rng.uniform(low, high), 1), "unit": unit}}})
    for code, text in rng.sample(CONDITIONS, 5):
        entries.append({"resource": {
            "resourceType": "Condition", "subject": subject, "code": concept(SNOMED, code, text),
            "clinicalStatus": concept("http://terminology.hl7.org/CodeSystem/condition-clinical",
                                      rng.choice(["active", "active", "resolved"]), "status"),
            "onsetDateTime": f"{encounters[0][1]}T09:00:00Z"}})
    for i in range(8):
        code, text = DRUGS[i % len(DRUGS)]
        entries.append({"resource": {
            "resourceType": "MedicationRequest", "status": rng.choice(["active", "stopped"]), "intent": "order",
            "subject": subject, "medicationCodeableConcept": concept("http://www.nlm.nih.gov/research/umls/rxnorm", code, text),
            "authoredOn": encounters[i][1], "identifier": [{"system": "urn:docgemma:write", "value": uuid.uuid4().hex}]}})
    for substance in rng.sample(["Penicillin V", "Peanut", "Latex"], 2):
        entries.append({"resource": {
            "resourceType": "AllergyIntolerance", "patient": subject, "code": {"text": substance},
            "clinicalStatus": concept("http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "active", "Active")}})
    for eid, day in encounters[:5]:
        entries.append({"resource": {
            "resourceType": "Immunization", "status": "completed", "patient": subject, "encounter": {"reference": eid},
            "vaccineCode": concept("http://hl7.org/fhir/sid/cvx", "140", "Influenza, seasonal"), "occurrenceDateTime": day}})
    for eid, day in encounters[5:]:
        entries.append({"resource": {
            "resourceType": "Procedure", "status": "completed", "subject": subject, "encounter": {"reference": eid},
            "code": concept(SNOMED, "430193006", "Medication reconciliation"), "performedDateTime": day}})
    for entry in entries:
        entry["request"] = {"method": "POST", "url": entry["resource"]["resourceType"]}
    return entries


def scale(args: argparse.Namespace) -> dict[str, Any]:
    """Search p50/p95 over HTTP and load time with >= 100k resources (``--scale``)."""
    import uvicorn

    from docgemma.ehr.api import FhirApi
    from docgemma.ehr.client import FhirClient
    from docgemma.ehr.load import load
    from docgemma.ehr.server import make_app
    from docgemma.ehr.store import FhirStore

    rng = random.Random(9)
    # The machine's load when the bench started: figures from a busy 2-core machine are not comparable.
    figures: dict[str, Any] = {"code": str(args.src.resolve()), "load_average_1m": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "record.sqlite"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base = f"http://127.0.0.1:{port}/fhir"
        store = FhirStore(path)
        server = uvicorn.Server(uvicorn.Config(make_app(FhirApi(store, base)), host="127.0.0.1", port=port,
                                               log_level="error"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        client = FhirClient(base, timeout_s=120)

        start = time.perf_counter()
        load(client, ROOT / "data" / "synthea")
        figures["load_synthea_files_s"] = round(time.perf_counter() - start, 2)
        synthea = sum(store.count().values())
        start = time.perf_counter()
        for n in range(args.patients):
            client.transaction(patient_bundle(n, rng))
        elapsed = time.perf_counter() - start
        counts = store.count()
        total = sum(counts.values())
        figures["resources"] = total
        figures["patients"] = counts.get("Patient", 0)
        figures["load_synthetic_s"] = round(elapsed, 1)
        figures["load_synthetic_resources_per_s"] = round((total - synthea) / elapsed)

        target = client.search("Patient", [("identifier", f"urn:bench:mrn|MRN-{args.patients // 2:06d}")])[0]
        pid = target["id"]
        family = target["name"][0]["family"]
        order = client.search("MedicationRequest", [("patient", pid)], limit=1)[0]
        visit = client.search("Encounter", [("patient", pid)], limit=1)[0]["id"]
        key = next(i["value"] for i in order["identifier"] if i["system"] == "urn:docgemma:write")
        now = max(r["meta"]["lastUpdated"] for r in client.everything(pid))  # the newest stamp a summary saw
        queries: dict[str, tuple[str, list[tuple[str, str]]]] = {
            "Patient?name=<family>": ("Patient", [("name", family)]),
            "Patient?identifier=<mrn>": ("Patient", [("identifier", f"urn:bench:mrn|MRN-{args.patients // 2:06d}")]),
            "Observation?patient&code&_sort=-date": (
                "Observation", [("patient", pid), ("code", f"{LOINC}|2160-0"), ("_sort", "-date")]),
            "Observation?patient&category=vital-signs&date=ge2020": (
                "Observation", [("patient", pid), ("category", "vital-signs"), ("date", "ge2020")]),
            "Condition?patient&status=active": ("Condition", [("patient", pid), ("status", "active")]),
            "AllergyIntolerance?patient": ("AllergyIntolerance", [("patient", pid)]),
            "Observation?encounter=<id> (no patient: one visit's results)": (
                "Observation", [("encounter", f"Encounter/{visit}")]),
            "MedicationRequest?identifier=<write key> (idempotency check, no patient)": (
                "MedicationRequest", [("identifier", f"urn:docgemma:write|{key}")]),
        }
        search: dict[str, Any] = {}
        for label, (kind, params) in queries.items():
            samples = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                found = client.search(kind, params)
                samples.append((time.perf_counter() - t0) * 1000)
            search[label] = {**percentiles(samples), "results": len(found)}
        samples = []
        for _ in range(args.runs):  # the per-turn "did the record change" check (older code returns everything)
            t0 = time.perf_counter()
            response = client.http.get(f"{base}/Patient/{pid}/$everything", params={"_since": now, "_count": "1000"})
            samples.append((time.perf_counter() - t0) * 1000)
        search["Patient/$everything?_since (summary freshness check)"] = {
            **percentiles(samples), "results": len(response.json().get("entry", []))}
        figures["search_over_http"] = search
        server.should_exit = True
        thread.join(5)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="record figures (see the module docstring)")
    parser.add_argument("--scale", action="store_true", help="search and load at >= 100k resources")
    parser.add_argument("--patients", type=int, default=1000, help="synthetic patients for --scale (~100 resources each)")
    parser.add_argument("--runs", type=int, default=40, help="samples per query for --scale")
    parser.add_argument("--src", type=Path, default=ROOT, help="checkout whose docgemma package is measured")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    figures = scale(args) if args.scale else small()
    text = json.dumps(figures, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
