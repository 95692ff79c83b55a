"""What every record tool declares alike, said once: a read of the patient record, or a write to it. A read's
module spreads :func:`record_read` into its ``ToolSpec`` (``**record_read(role, run, formatter)``); a write's module
passes its ``ToolSpec`` through :func:`record_write` with what makes it its own (the resource it drafts from the
arguments, its pre-write check). Either adds only what is its own (label, description, arguments, limits,
keywords, roles, extractor)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypedDict

from pydantic import BaseModel

from docgemma.ehr.service import Ehr
from docgemma.tools.active_patient import ActivePatientRule, record_patient
from docgemma.tools.outcome import ToolOutcome
from docgemma.tools.record_io import format_write, write
from docgemma.tools.routing import Role
from docgemma.tools.spec import Binding, Formatter, ToolContext, ToolSpec, client_binding
from docgemma.tools.write_checks import PreWriteCheck

#: A record tool's executor before the record is bound to it.
RecordRun = Callable[[Ehr, BaseModel, ToolContext], ToolOutcome]
#: What a write tool makes of its approved arguments: the FHIR resource to write, and the words that name what it
#: records in the confirmation ("allergy to penicillin (hives)").
Draft = tuple[dict[str, Any], str]
Drafter = Callable[[BaseModel, ToolContext], Draft]


class RecordSettings(TypedDict, total=False):
    """The ``ToolSpec`` fields the record reads share (see :class:`~docgemma.tools.spec.ToolSpec`)."""

    needs_patient: bool
    record: bool
    active_patient_after: ActivePatientRule
    binding: Binding
    roles: frozenset[Role]


def record_read(role: Role, run: RecordRun, formatter: Formatter,
                active_patient_after: ActivePatientRule = record_patient) -> RecordSettings:
    """A read of one patient's record, playing ``role`` in the rules (the chart, a record query, the visits, the
    connections): it needs the patient, reads a closed world, makes the patient it read the active one
    (``tools/active_patient.record_patient``, unless the tool has its own rule) and is bound to the record built
    at start-up."""
    return RecordSettings(needs_patient=True, record=True, active_patient_after=active_patient_after,
                          binding=client_binding("record", run, formatter), roles=frozenset({role}))


def record_write(spec: ToolSpec, entry: Role, draft: Drafter, written: str, check: PreWriteCheck | None = None,
                 check_needs: tuple[str, ...] = ()) -> ToolSpec:
    """``spec`` as a write to one patient's record: the ``entry`` it makes (the role the rules ask for), of a
    ``written`` resource (where an approved write is looked up by its idempotency key); what a read declares, plus
    the approval card with its pre-write ``check`` (given the start-up clients ``check_needs`` names), an executor
    that writes what ``draft`` makes of the arguments (``record_io.write``: the patient checked, once per approved
    action) and the confirmation as its result (``record_io.format_write``)."""
    run = partial(_write_drafted, spec.name, draft)
    return replace(spec, writes=True, needs_patient=True, record=True, active_patient_after=record_patient,
                   pre_write_check=check, binding=client_binding("record", run, format_write, check_needs),
                   written=written, roles=spec.roles | {entry})


def record_update(spec: ToolSpec, entry: Role, run: RecordRun, written: str, check: PreWriteCheck | None = None,
                  check_needs: tuple[str, ...] = ()) -> ToolSpec:
    """``spec`` as a change of an entry already on one patient's record (a ``written`` resource): what a write
    declares (the approval card with its pre-write ``check``, the confirmation), with ``run`` as its executor, which
    changes the entry with ``Ehr.update`` (version-checked, once per approved action) instead of creating one."""
    return replace(spec, writes=True, needs_patient=True, record=True, active_patient_after=record_patient,
                   pre_write_check=check, binding=client_binding("record", run, format_write, check_needs),
                   written=written, roles=spec.roles | {entry}, updates=True)


def _write_drafted(tool: str, draft: Drafter, ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    resource, what = draft(args, context)
    return write(ehr, tool, args, context, resource, what)
