"""The safety review of a proposed write, as the approval card shows it, and the check that produces it.

The tools layer owns it: which warnings a write gets is policy of the write tools (:mod:`.write_checks`);
the agent shows the review on the approval card (``agent.approval``) and the record only supplies the data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from docgemma.clinical.patient import PatientRef

if TYPE_CHECKING:
    from docgemma.tools.spec import ToolSpec


class PatientCard(TypedDict, total=False):
    """Who the write is for, as the clinician must see it before approving."""

    id: str
    name: str
    birth_date: str
    gender: str
    allergies: list[str]
    active_medications: int
    medications: list[str]


class CheckStatus(TypedDict):
    """One safety check as the card lists it: its name, whether it ran, and its source or why it could not."""

    name: str
    ran: bool
    detail: str


class WriteReview(TypedDict, total=False):
    """The safety review of a proposed write (``WriteCheck``'s answer)."""

    warnings: list[str]
    #: Warnings that a plain approval cannot pass: they need an override with a reason.
    severe: list[str]
    patient: PatientCard
    #: Every check of the write and whether it ran; "no findings" may be said only when each one ran.
    checks: list[CheckStatus]
    #: The write cannot be proposed at all (e.g. the patient does not exist): no card, this error instead.
    blocked: str
    #: Arguments the check read off the record for the write to be made against (``write_checks.Findings.pins``).
    pins: dict[str, str]
    #: A value the card must be given before an approval can write (``write_checks.Findings.needs``).
    needs: str


#: Safety review before a write (who the patient is, allergy conflicts, duplicate orders, dose): the approval card.
WriteCheck = Callable[["ToolSpec", dict[str, Any], "PatientRef | None"], "WriteReview"]
