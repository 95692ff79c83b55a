"""What every record tool declares alike, said once: a read of the patient record, or a write to it. A catalog
module spreads one of these into its ``ToolSpec`` (``**record_read(run, formatter)``) and adds only what is its
own (label, description, arguments, limits, keywords, roles, extractor, pre-write check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from pydantic import BaseModel

from docgemma.ehr.service import Ehr
from docgemma.tools.active_patient import ActivePatientRule, record_patient
from docgemma.tools.outcome import ToolOutcome
from docgemma.tools.record_io import format_write
from docgemma.tools.spec import Binding, Formatter, ToolContext, client_binding

#: A record tool's executor before the record is bound to it.
RecordRun = Callable[[Ehr, BaseModel, ToolContext], ToolOutcome]


class RecordSettings(TypedDict, total=False):
    """The ``ToolSpec`` fields the record tools share (see :class:`~docgemma.tools.spec.ToolSpec`)."""

    writes: bool
    needs_patient: bool
    record: bool
    active_patient_after: ActivePatientRule
    binding: Binding
    written: str


def record_read(run: RecordRun, formatter: Formatter,
                active_patient_after: ActivePatientRule = record_patient) -> RecordSettings:
    """A read of one patient's record: it needs the patient, reads a closed world, makes the patient it read the
    active one (``tools/active_patient.record_patient``, unless the tool has its own rule) and is bound to the
    record built at start-up."""
    return RecordSettings(needs_patient=True, record=True, active_patient_after=active_patient_after,
                          binding=client_binding("record", run, formatter))


def record_write(run: RecordRun, written: str, check_needs: tuple[str, ...] = ()) -> RecordSettings:
    """A write to one patient's record, of a ``written`` resource (where an approved write is looked up by its
    idempotency key): what a read declares, plus the approval card, and the confirmation as its result
    (``record_io.format_write``); ``check_needs``: the start-up clients its pre-write check takes."""
    return RecordSettings(writes=True, needs_patient=True, record=True, active_patient_after=record_patient,
                          binding=client_binding("record", run, format_write, check_needs), written=written)
