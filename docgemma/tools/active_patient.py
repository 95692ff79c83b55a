"""Which tools change the conversation's active patient, and to whom: a rule per tool, bound to the tool as
``ToolSpec.active_patient_after`` in its catalog module (TOOL_EXECUTE applies it after a successful call). The
rule the record tools share is here; a tool's own rule lives in its module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docgemma.clinical.patient import PatientRef

#: (arguments, the tool's data, the current active patient) → the active patient after the call.
ActivePatientRule = Callable[[dict[str, Any], Any, "PatientRef | None"], "PatientRef | None"]


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
