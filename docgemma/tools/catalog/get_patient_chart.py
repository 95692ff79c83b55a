"""get_patient_chart: a patient's compiled clinical summary (``ehr/summary.py``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from docgemma.clinical.patient import PatientRef
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.tools.args import PatientId, ToolArgs
from docgemma.tools.extract import patient_only
from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.record_io import fail
from docgemma.tools.record_tool import record_read
from docgemma.tools.routing import Role, TurnFacts
from docgemma.tools.spec import ToolContext, ToolSpec


class PatientChartArgs(ToolArgs):
    patient_id: str = PatientId


def chart_patient(args: dict[str, Any], data: Any, current: PatientRef | None) -> PatientRef | None:
    """A chart that was read makes its patient the active one (named from the chart when it says)."""
    patient = data.get("patient") if isinstance(data, dict) else None
    if not isinstance(patient, dict):  # a record server's chart without a patient object: the id asked for
        patient = {}
    pid = str(patient.get("id") or args["patient_id"])
    same = current is not None and current["id"] == pid
    name = patient.get("name") or (current["name"] if same and current else f"patient {pid}")
    return PatientRef(id=pid, name=str(name))


def follow_up(facts: TurnFacts) -> list[str]:
    """Review the active patient's chart."""
    return [f"Show the chart of {facts.patient_name}"] if facts.patient_name else []


def get_patient_chart(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """The compiled summary."""
    pid = str(args.patient_id)  # type: ignore[attr-defined]
    try:
        summary = ehr.summary(pid)
    except FhirClientError as exc:
        return fail(exc, pid)
    return success({"patient": summary.facts["patient"], "summary": summary.text})


def format_chart(data: dict[str, Any]) -> str:
    """The summary's text."""
    return str(data["summary"])


SPEC = ToolSpec(
    "get_patient_chart",
    "Patient Record",
    "Retrieve the full clinical summary for a patient, including diagnoses, medications, "
    "allergies, lab results, and vitals. Requires a patient ID (not a name). Use when a "
    "clinician wants to review a patient's record.",
    PatientChartArgs,
    "Show me the chart for patient abc-123.",
    result_cap=6500,
    extract=patient_only,
    follow_up=follow_up,
    **record_read(Role.CHART, get_patient_chart, format_chart, active_patient_after=chart_patient),
)
