"""Which tools change the conversation's active patient, and to whom: per-tool rules, bound to the tool as
``ToolSpec.active_patient_after`` in the registry (TOOL_EXECUTE applies them after a successful call)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docgemma.clinical.patient import PatientRef

#: (arguments, the tool's data, the current active patient) → the active patient after the call.
ActivePatientRule = Callable[[dict[str, Any], Any, "PatientRef | None"], "PatientRef | None"]


def unique_match(args: dict[str, Any], data: Any, current: PatientRef | None) -> PatientRef | None:
    """A patient search with exactly one match makes that patient the active one."""
    if isinstance(data, dict) and len(data.get("matches", [])) == 1:
        match = data["matches"][0]
        return PatientRef(id=str(match["id"]), name=str(match.get("name", match["id"])))
    return current


def chart_patient(args: dict[str, Any], data: Any, current: PatientRef | None) -> PatientRef | None:
    """A chart that was read makes its patient the active one (named from the chart when it says)."""
    patient = data.get("patient") if isinstance(data, dict) else None
    if not isinstance(patient, dict):  # a record server's chart without a patient object: the id asked for
        patient = {}
    pid = str(patient.get("id") or args["patient_id"])
    same = current is not None and current["id"] == pid
    name = patient.get("name") or (current["name"] if same and current else f"patient {pid}")
    return PatientRef(id=pid, name=str(name))


def record_patient(args: dict[str, Any], data: Any, current: PatientRef | None) -> PatientRef | None:
    """A read of one patient's record (results, visits, connections) about someone other than the active patient
    makes that patient the active one: the answer, the panel and the next "his"/"her" then all mean the patient
    whose data was shown, never the previous one."""
    pid = str(args.get("patient_id") or "")
    if not pid or (current is not None and current["id"] == pid):
        return current
    patient = data.get("patient") if isinstance(data, dict) else None
    name = patient.get("name") if isinstance(patient, dict) else patient
    return PatientRef(id=pid, name=str(name or f"patient {pid}"))
