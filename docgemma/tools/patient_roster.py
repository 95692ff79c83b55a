"""The record's patients as the agent's rules read them (``clinical/roster.py``): who a message can name.

Read from the record through its FHIR search, kept for a short while (a turn should not pay for a search of every
patient), and read again after that: a patient added to the record is found by name within ``ROSTER_TTL_S``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from docgemma.clinical.roster import KnownPatient, PatientRoster, Roster
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.fhir import display_text

log = logging.getLogger(__name__)

#: Patients read into the roster. A larger record is read up to this many; a name beyond them is found by the
#: patterns alone (as before the roster), and the log says the roster is partial.
ROSTER_LIMIT = 5000
#: Seconds a roster is reused before the record is read again.
ROSTER_TTL_S = 60.0


def known_patient(resource: dict[str, Any]) -> KnownPatient | None:
    """The roster's entry for one Patient resource; None when it has no id or no family name to be found by."""
    names = resource.get("name")
    name = names[0] if isinstance(names, list) and names and isinstance(names[0], dict) else {}
    family, given = name.get("family"), name.get("given")
    if not resource.get("id") or not isinstance(family, str) or not family.strip():
        return None
    identifiers = tuple(str(i["value"]) for i in resource.get("identifier") or []
                        if isinstance(i, dict) and isinstance(i.get("value"), str) and i["value"].strip())
    return KnownPatient(
        id=str(resource["id"]), name=display_text(resource), family=family.strip(),
        given=tuple(g for g in given if isinstance(g, str) and g.strip()) if isinstance(given, list) else (),
        birth_date=resource.get("birthDate") if isinstance(resource.get("birthDate"), str) else None,
        identifiers=identifiers,
    )


def record_roster(ehr: Ehr, ttl_s: float = ROSTER_TTL_S) -> PatientRoster:
    """The roster of ``ehr`` (None while the record cannot be read: the turn says names were read by form only)."""
    lock = threading.Lock()
    kept: dict[str, Any] = {"at": float("-inf"), "patients": None}

    def roster() -> Roster | None:
        with lock:
            if time.monotonic() - kept["at"] < ttl_s and kept["patients"] is not None:
                return kept["patients"]
            try:
                resources = ehr.client.search("Patient", [], limit=ROSTER_LIMIT)
            except FhirClientError as exc:
                log.warning("patient roster: the record did not answer (HTTP %s)", exc.status)
                return None
            if len(resources) >= ROSTER_LIMIT:
                log.warning("patient roster: the record has more than %d patients; only those are known by name",
                            ROSTER_LIMIT)
            patients = Roster(tuple(p for p in (known_patient(r) for r in resources) if p is not None))
            kept.update(at=time.monotonic(), patients=patients)
            return patients

    return roster
