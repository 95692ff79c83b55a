"""The patient record as the agent sees it: a FHIR client, the compiled summaries, and safe writes. It exposes
data; what a write must be checked for is the write tools' policy (``tools/write_checks.py``).

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

from docgemma.clinical.patient import PatientRef
from docgemma.ehr.client import FhirClient, FhirClientError
from docgemma.ehr.freshness import RecordVersion
from docgemma.ehr.summary import PatientSummary, compile_summary
from docgemma.ehr.validate import validate_resource

log = logging.getLogger(__name__)
EMBEDDED_BASE = "http://embedded.docgemma/fhir"
DEMO_DATA = Path(__file__).resolve().parents[2] / "data" / "demo" / "demo_patients.json"
WRITE_SYSTEM = "urn:docgemma:write"
#: The approved action a write belongs to (:func:`action_key`).
ACTION_SYSTEM = "urn:docgemma:action"

__all__ = ["ActionWrittenOtherwise", "Ehr", "action_key", "canonical_args", "idempotency_key", "validate_resource"]


def canonical_args(args: dict[str, Any]) -> str:
    """A write's arguments as one canonical JSON text (sorted keys, empty values left out: an empty form field and
    an absent value are the same argument), what a write's key and a replay's check are computed from."""
    kept = {k: v for k, v in args.items() if v not in (None, "", [])}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def idempotency_key(scope: str, tool: str, args: dict[str, Any]) -> str:
    """The write's key: the card's identity (``scope``, the pending action's id; the patient's id when no card
    exists) AND its exact arguments (:func:`canonical_args`). A replay of the same approval finds its own write;
    two writes with different arguments never share a key (issue 43: under MCP the scope was dropped and a second
    order was reported "already saved" under the first one's id)."""
    raw = json.dumps({"scope": scope, "tool": tool, "args": canonical_args(args)}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def action_key(scope: str, tool: str) -> str:
    """The approved action's own identifier on its write, without the arguments: how a recovery finds what an
    interrupted approval wrote, and how a second write under the same approval is refused."""
    return hashlib.sha256(json.dumps({"action": scope, "tool": tool}).encode()).hexdigest()[:32]


class ActionWrittenOtherwise(ValueError):
    """The approved action already wrote a resource with other arguments: nothing more is written."""

    def __init__(self, resource: str) -> None:
        super().__init__(resource)
        self.resource = resource


#: Where the Provenance's identifiers come from: the app's users and its conversations.
USER_SYSTEM = "urn:docgemma:user"
CONVERSATION_SYSTEM = "urn:docgemma:conversation"


def approver(username: str) -> dict[str, Any]:
    """The Provenance's verifier: the signed-in user by name, or "Clinician" when the app has no login."""
    if not username:
        return {"display": "Clinician (approved in DocGemma Connect)"}
    return {"identifier": {"system": USER_SYSTEM, "value": username},
            "display": f"{username} (approved in DocGemma Connect)"}


def conversation_ref(thread: str) -> str:
    """The conversation's name in the record: a digest of its thread id (the id itself reopens the conversation
    in a browser, so it is not written where every reader of the record sees it)."""
    return hashlib.sha256(thread.encode()).hexdigest()[:32]


def conversation_entity(thread: str) -> dict[str, Any]:
    """The conversation a write came from, as a Provenance entity (role ``source``)."""
    return {"role": "source", "what": {"identifier": {"system": CONVERSATION_SYSTEM, "value": conversation_ref(thread)},
                                       "display": "DocGemma Connect conversation"}}


class Ehr:
    """Record access for the agent's tools and the context assembler."""

    def __init__(self, client: FhirClient, today: date | None = None) -> None:
        self.client = client
        self.today = today
        #: patient id → (summary, the record version it was compiled from)
        self._summaries: dict[str, tuple[PatientSummary, RecordVersion]] = {}
        self._lock = threading.Lock()

    @property
    def embedded_record(self) -> bool:
        """True for the embedded SQLite record (:meth:`embedded`), False for a FHIR server."""
        return self.client.base_url == EMBEDDED_BASE

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

    def written(self, resource_type: str, key: str) -> dict[str, Any] | None:
        """The ``resource_type`` resource written under idempotency ``key`` (:meth:`write`), or None."""
        found = self.client.search(resource_type, [("identifier", f"{WRITE_SYSTEM}|{key}")], limit=1)
        return found[0] if found else None

    def written_by_action(self, resource_type: str, action: str) -> dict[str, Any] | None:
        """The ``resource_type`` resource the approved action ``action`` (:func:`action_key`) wrote, or None."""
        found = self.client.search(resource_type, [("identifier", f"{ACTION_SYSTEM}|{action}")], limit=1)
        return found[0] if found else None

    def write(self, resource: dict[str, Any], *, key: str, step: str, override_reason: str = "", approved_by: str = "",
              conversation: str = "", action: str = "") -> tuple[dict[str, Any], bool]:
        """Create ``resource`` with its Provenance in one transaction; a repeated ``key`` creates nothing. An
        override of a severe conflict is recorded as the Provenance's reason; the Provenance names the user who
        approved (``approved_by``, the signed-in user, when there is a login) and the conversation it came from
        (``conversation``: a digest of the thread's id, which names it without handing out the id a browser
        reopens it with). ``action`` names the approved action (:func:`action_key`): a second write under it with
        another ``key`` (other arguments) raises :class:`ActionWrittenOtherwise`."""
        identifiers = [{"system": WRITE_SYSTEM, "value": key}]
        if action:
            identifiers.append({"system": ACTION_SYSTEM, "value": action})
        resource = {**resource, "identifier": [*resource.get("identifier", []), *identifiers]}
        validate_resource(resource)
        # One resource per approved action (its key when there is no action): the transaction's condition and the
        # deterministic ids below are the action's, so two racing writers of one action with different arguments
        # still make one resource and one Provenance.
        once = action or key
        once_condition = f"identifier={ACTION_SYSTEM}|{action}" if action else f"identifier={WRITE_SYSTEM}|{key}"
        target = _urn_uuid(once)
        prov_id = _urn_uuid(hashlib.sha256(f"{once}:provenance".encode()).hexdigest()).removeprefix("urn:uuid:")
        patient = (resource.get("subject") or resource.get("patient") or {}).get("reference", "")
        provenance = write_provenance(target, patient, step=step, override_reason=override_reason,
                                      approved_by=approved_by, conversation=conversation)
        validate_resource(provenance)
        # A write already made under this key (a retry) returns it and writes nothing, not even Provenance.
        # R4 Provenance has no identifier to make it conditional; inside the transaction, the resource's own
        # If-None-Exist still guards against two racing retries.
        existing = self.written(resource["resourceType"], key)
        if existing:
            return existing, False
        if action:
            other = self.written_by_action(resource["resourceType"], action)
            if other:  # one approval, one write: other values under it were never approved as written
                raise ActionWrittenOtherwise(f"{other['resourceType']}/{other['id']}")
        entries: list[dict[str, Any]] = [
            {
                "fullUrl": target,
                "resource": resource,
                "request": {"method": "POST", "url": resource["resourceType"], "ifNoneExist": once_condition},
            },
            # Two racing writers of the same key (two processes) both pass the search above; the resource's
            # If-None-Exist stops the second resource, and this deterministic id (kept by the embedded store)
            # stops a second Provenance. A server that assigns its own ids simply never matches the condition.
            {"fullUrl": f"urn:uuid:{prov_id}", "resource": provenance,
             "request": {"method": "POST", "url": "Provenance", "ifNoneExist": f"_id={prov_id}"}},
        ]
        response = self.client.transaction(entries)
        saved = response[0]["resource"]
        created = str(response[0].get("response", {}).get("status", "")).startswith("201")
        if not created and {"system": WRITE_SYSTEM, "value": key} not in saved.get("identifier", []):
            # A racing writer of the same action with other arguments got there first: not "already saved".
            raise ActionWrittenOtherwise(f"{saved['resourceType']}/{saved['id']}")
        if patient:
            self.recompile(patient.split("/")[-1])
        return saved, created


    def update(self, resource: dict[str, Any], *, version: str, action: str, step: str, approved_by: str = "",
               conversation: str = "") -> tuple[dict[str, Any], bool]:
        """Replace ``resource`` (an entry on record, by its id) with its Provenance in one transaction, only if
        ``version`` is still the current one (``If-Match``: a change made since it was read is never overwritten;
        the server answers 412). ``action`` names the approved action: a second update under it (a retry) finds
        the first one's Provenance and writes nothing; returns (the resource as on record, updated)."""
        validate_resource(resource)
        kind, rid = str(resource["resourceType"]), str(resource["id"])
        prov_id = _update_provenance_id(action)
        done = self.updated_by_action(action)
        if done is not None:
            return done, False
        patient = (resource.get("subject") or resource.get("patient") or {}).get("reference", "")
        provenance = write_provenance(f"{kind}/{rid}", patient, step=step, override_reason="",
                                      approved_by=approved_by, conversation=conversation, activity="UPDATE")
        validate_resource(provenance)
        entries: list[dict[str, Any]] = [
            {"resource": resource, "request": {"method": "PUT", "url": f"{kind}/{rid}", "ifMatch": f'W/"{version}"'}},
            {"fullUrl": f"urn:uuid:{prov_id}", "resource": provenance,
             "request": {"method": "POST", "url": "Provenance", "ifNoneExist": f"_id={prov_id}"}},
        ]
        saved = self.client.transaction(entries)[0]["resource"]
        if patient:
            self.recompile(patient.split("/")[-1])
        return saved, True


    def updated_by_action(self, action: str) -> dict[str, Any] | None:
        """The resource the approved action ``action`` already updated (:meth:`update`, found by its Provenance),
        as on record now; None when the action updated nothing yet."""
        found = self.client.search("Provenance", [("_id", _update_provenance_id(action))], limit=1)
        if not found:
            return None
        kind, rid = str(found[0]["target"][0]["reference"]).split("/")[:2]
        return self.client.read(kind, rid)


def _update_provenance_id(action: str) -> str:
    """The Provenance id of the update made by approved action ``action``: one per action, so a retry finds it."""
    return _urn_uuid(hashlib.sha256(f"{action}:update-provenance".encode()).hexdigest()).removeprefix("urn:uuid:")


def _urn_uuid(hexdigits: str) -> str:
    """The first 32 hex digits as a ``urn:uuid:`` in the 8-4-4-4-12 form."""
    h = hexdigits
    return f"urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _participant(code: str, who: dict[str, Any]) -> dict[str, Any]:
    return {"type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/provenance-participant-type",
                                 "code": code}]}, "who": who}


def write_provenance(target: str, patient: str, *, step: str, override_reason: str, approved_by: str,
                     conversation: str, activity: str = "CREATE") -> dict[str, Any]:
    """The Provenance of an approved write: who verified it, the agent step that assembled it, an override's
    reason, and the conversation it came from."""
    from docgemma.fhir import now

    return {
        "resourceType": "Provenance",
        # The patient is a second target so the Provenance sits in the patient's compartment.
        "target": [{"reference": target}, *([{"reference": patient}] if patient else [])],
        "recorded": now(),
        "activity": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v3-DataOperation", "code": activity}]},
        **({"reason": [{"text": f"Clinician override of a severe finding: {override_reason}"}]}
           if override_reason else {}),
        **({"entity": [conversation_entity(conversation)]} if conversation else {}),
        "agent": [_participant("verifier", approver(approved_by)),
                  _participant("assembler", {"display": f"DocGemma Connect agent ({step})"})],
    }
