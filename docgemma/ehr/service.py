"""The patient record as the agent sees it: a FHIR client, the compiled summaries, and safe writes.

Summaries are compiled on first use and recompiled when the record changed, whoever changed it: each use asks
the server for the patient's resources updated since the newest one the summary saw (``$everything?_since``),
one small request, so an allergy added by another process or at the hospital shows on the next turn. Writes
are validated with ``fhir.resources`` (R4B), carry an idempotency identifier (a retried write matches the
first one through ``If-None-Exist`` and creates nothing new) and are committed in one transaction with a
Provenance resource recording who approved them, when, and which agent step proposed them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
from datetime import date
from pathlib import Path
from typing import Any

from docgemma.agent.entities import DrugDictionary
from docgemma.agent.state import PatientRef
from docgemma.ehr.client import FhirClient, FhirClientError
from docgemma.ehr.freshness import RecordVersion
from docgemma.ehr.summary import PatientSummary, compile_summary
from docgemma.ehr.validate import validate_resource
from docgemma.tools.registry import ToolSpec

log = logging.getLogger(__name__)
EMBEDDED_BASE = "http://embedded.docgemma/fhir"
DEMO_DATA = Path(__file__).resolve().parents[2] / "data" / "demo" / "demo_patients.json"
WRITE_SYSTEM = "urn:docgemma:write"

#: Drug classes for allergy cross-reactivity (allergy word → class members, generic names).
ALLERGY_CLASSES: dict[str, tuple[str, ...]] = {
    "penicillin": (
        "penicillin",
        "amoxicillin",
        "ampicillin",
        "piperacillin",
        "flucloxacillin",
        "dicloxacillin",
        "cloxacillin",
        "nafcillin",
        "oxacillin",
        "benzylpenicillin",
        "phenoxymethylpenicillin",
        "co-amoxiclav",
    ),
    "cephalosporin": (
        "cefalexin",
        "cephalexin",
        "cefazolin",
        "cefuroxime",
        "ceftriaxone",
        "cefotaxime",
        "cefixime",
        "cefepime",
        "ceftazidime",
        "cefaclor",
        "cefadroxil",
    ),
    "sulfonamide": ("sulfamethoxazole", "sulfadiazine", "sulfasalazine", "trimethoprim-sulfamethoxazole"),
    "sulfa": ("sulfamethoxazole", "sulfadiazine", "sulfasalazine", "trimethoprim-sulfamethoxazole"),
    "nsaid": ("ibuprofen", "naproxen", "diclofenac", "ketorolac", "indomethacin", "celecoxib", "aspirin", "meloxicam"),
    "aspirin": ("aspirin", "ibuprofen", "naproxen", "diclofenac", "ketorolac", "indomethacin"),
}
#: Cross-class reactivity worth a warning (penicillin-allergic patients and cephalosporins: low but real).
RELATED_CLASSES = {"penicillin": ("cephalosporin",)}


def idempotency_key(scope: str, tool: str, args: dict[str, Any]) -> str:
    """Stable for the same approved call in the same turn, different for a new request."""
    raw = json.dumps({"scope": scope, "tool": tool, "args": args}, sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class Ehr:
    """Record access for the agent's tools and the context assembler."""

    def __init__(self, client: FhirClient, today: date | None = None) -> None:
        self.client = client
        self.today = today
        #: patient id → (summary, the record version it was compiled from)
        self._summaries: dict[str, tuple[PatientSummary, RecordVersion]] = {}
        self._lock = threading.Lock()

    @classmethod
    def embedded(cls, path: Path, seed: Path | None = DEMO_DATA) -> Ehr:
        """The embedded SQLite record (loaded with the demo patients the first time)."""
        from docgemma.ehr.api import ApiTransport, FhirApi
        from docgemma.ehr.store import FhirStore

        store = FhirStore(path)
        client = FhirClient(EMBEDDED_BASE, transport=ApiTransport(FhirApi(store, EMBEDDED_BASE)))
        if seed is not None and seed.exists() and not store.count().get("Patient"):
            from docgemma.ehr.load import load

            load(client, seed)
        return cls(client)

    # ── reads ──

    def compartment(self, patient_id: str) -> list[dict[str, Any]]:
        """All of a patient's resources."""
        return self.client.everything(patient_id)

    def summary(self, patient_id: str) -> PatientSummary:
        """The compiled summary: cached, and compiled again when the record changed since (whoever wrote it)."""
        with self._lock:
            cached = self._summaries.get(patient_id)
        if cached is not None and not self._changed(patient_id, cached[1]):
            return cached[0]
        resources = self.compartment(patient_id)
        summary = compile_summary(resources, self.today)
        with self._lock:
            self._summaries[patient_id] = (summary, RecordVersion.of(resources))
        return summary

    def _changed(self, patient_id: str, version: RecordVersion) -> bool:
        """True when a resource of the patient was created or updated after ``version`` (one request: the
        resources updated since the newest timestamp seen; a server that ignores ``_since`` returns them all,
        which costs more but still answers correctly)."""
        return not version.covers(self.client.everything(patient_id, since=version.newest))

    def recompile(self, patient_id: str) -> PatientSummary:
        """Drop the cached summary and compile it again (after a write)."""
        with self._lock:
            self._summaries.pop(patient_id, None)
        return self.summary(patient_id)

    def patient_context(self, patient: PatientRef) -> str | None:
        """The active patient's summary for INPUT_ASSEMBLY (None when the record cannot be read)."""
        try:
            return self.summary(patient["id"]).text
        except FhirClientError as exc:
            log.warning("patient summary unavailable (HTTP %s)", exc.status)  # no patient data in the log
            return None

    def images(self, patient_id: str) -> list[tuple[str, str, bytes]]:
        """(description, filename, bytes) of every image on the record (DocumentReference or Media), for the
        UI to show or send to the chat."""
        from docgemma.ehr.summary import is_image
        from docgemma.ehr.validate import tolerant

        def collect(resources: list[dict[str, Any]], skipped: int) -> list[tuple[str, str, bytes]]:
            out = []
            for resource in resources:
                if resource["resourceType"] not in ("DocumentReference", "Media") or not is_image(resource):
                    continue
                content = resource.get("content")
                # Media.content is one Attachment; DocumentReference.content a list of {attachment}.
                attachment = content if resource["resourceType"] == "Media" else (content or [{}])[0].get("attachment")
                if isinstance(attachment, dict) and attachment.get("data"):
                    name = str(attachment.get("title") or f"{resource['id']}.dcm")
                    out.append((str(resource.get("description", "Image")), name, base64.b64decode(attachment["data"])))
            return out

        return tolerant(collect, self.compartment(patient_id))  # a malformed resource is left out of the gallery

    # ── writes ──

    def write(self, resource: dict[str, Any], *, key: str, step: str) -> tuple[dict[str, Any], bool]:
        """Create ``resource`` with its Provenance in one transaction; a repeated ``key`` creates nothing."""
        identifier = {"system": WRITE_SYSTEM, "value": key}
        resource = {**resource, "identifier": [*resource.get("identifier", []), identifier]}
        validate_resource(resource)
        target = f"urn:uuid:{key[:8]}-{key[8:12]}-{key[12:16]}-{key[16:20]}-{key[20:32]}"
        from docgemma.ehr.store import now

        patient = (resource.get("subject") or resource.get("patient") or {}).get("reference", "")
        provenance = {
            "resourceType": "Provenance",
            # The patient is a second target so the Provenance sits in the patient's compartment.
            "target": [{"reference": target}, *([{"reference": patient}] if patient else [])],
            "recorded": now(),
            "activity": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v3-DataOperation", "code": "CREATE"}]},
            "agent": [
                {
                    "type": {
                        "coding": [
                            {"system": "http://terminology.hl7.org/CodeSystem/provenance-participant-type", "code": "verifier"}
                        ]
                    },
                    "who": {"display": "Clinician (approved in DocGemma Connect)"},
                },
                {
                    "type": {
                        "coding": [
                            {"system": "http://terminology.hl7.org/CodeSystem/provenance-participant-type", "code": "assembler"}
                        ]
                    },
                    "who": {"display": f"DocGemma Connect agent ({step})"},
                },
            ],
        }
        validate_resource(provenance)
        # A write already made under this key (a retry) returns it and writes nothing, not even Provenance.
        # R4 Provenance has no identifier to make it conditional; inside the transaction, the resource's own
        # If-None-Exist still guards against two racing retries.
        existing = self.client.search(resource["resourceType"], [("identifier", f"{WRITE_SYSTEM}|{key}")], limit=1)
        if existing:
            return existing[0], False
        entries: list[dict[str, Any]] = [
            {
                "fullUrl": target,
                "resource": resource,
                "request": {"method": "POST", "url": resource["resourceType"], "ifNoneExist": f"identifier={WRITE_SYSTEM}|{key}"},
            },
            {"resource": provenance, "request": {"method": "POST", "url": "Provenance"}},
        ]
        response = self.client.transaction(entries)
        saved = response[0]["resource"]
        created = str(response[0].get("response", {}).get("status", "")).startswith("201")
        if patient:
            self.recompile(patient.split("/")[-1])
        return saved, created

    def write_warnings(self, spec: ToolSpec, args: dict[str, Any], active: PatientRef | None) -> list[str]:
        """Safety warnings shown in the approval card (allergy conflicts, duplicate orders)."""
        patient_id = str(args.get("patient_id", ""))
        try:
            resources = self.compartment(patient_id)
        except FhirClientError:
            return ["The patient record could not be checked for allergies and duplicate orders."]
        from docgemma.ehr.store import display_text

        warnings: list[str] = []
        if spec.name == "prescribe_medication":
            drug = DrugDictionary.canonical(str(args.get("medication_name", ""))) or str(args.get("medication_name", "")).lower()
            for allergy in resources:
                if allergy.get("resourceType") != "AllergyIntolerance":
                    continue
                conflict = allergy_conflict(display_text(allergy), drug)
                if conflict:
                    warnings.append(f"ALLERGY CONFLICT: recorded allergy '{display_text(allergy)}' — {conflict}")
            for med in resources:
                if (
                    med.get("resourceType") == "MedicationRequest"
                    and med.get("status") in ("active", "on-hold")
                    and drug
                    and drug in display_text(med).lower()
                ):
                    warnings.append(
                        f"DUPLICATE ORDER: an active order already exists: {display_text(med)} "
                        f"(since {str(med.get('authoredOn', '?'))[:10]})."
                    )
        if spec.name == "add_allergy":
            substance = str(args.get("substance", "")).lower()
            for allergy in resources:
                if (
                    allergy.get("resourceType") == "AllergyIntolerance"
                    and substance
                    and substance in display_text(allergy).lower()
                ):
                    warnings.append(f"ALREADY RECORDED: '{display_text(allergy)}' is on the allergy list.")
        return warnings


def allergy_conflict(allergy: str, drug: str) -> str | None:
    """Why ``drug`` conflicts with a recorded ``allergy`` (same substance or drug class), or None."""
    allergy_l, drug_l = allergy.lower(), drug.lower()
    if not drug_l:
        return None
    if drug_l in allergy_l:
        return f"{drug} is the recorded allergen."
    for word, members in ALLERGY_CLASSES.items():
        if word in allergy_l or any(m in allergy_l for m in members):
            if drug_l in members:
                return f"{drug} belongs to the same drug class ({word})."
            for related in RELATED_CLASSES.get(word, ()):
                if drug_l in ALLERGY_CLASSES[related]:
                    return f"{drug} is a {related}: cross-reactivity with {word} allergy is possible."
    return None
