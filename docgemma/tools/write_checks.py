"""What the write tools' pre-write checks share: the safety review shown on the approval card.

The record supplies the data (the patient, their allergies and active orders); the policy lives with each write
tool, one function in its catalog module bound as ``ToolSpec.pre_write_check``; the patient check that applies
to every write is ``ehr_tools.record_write_check``. Products are resolved to their
ingredients by one resolver (:mod:`docgemma.clinical.ingredients`); the knowledge tools bind one that an FDA
label can confirm (``tools/binding.bind_tools``), otherwise the local table decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docgemma.clinical.allergy import is_no_known_allergy
from docgemma.ehr.summary import ACTIVE_MED
from docgemma.fhir import concept_code

__all__ = ["CheckRun", "Findings", "PatientFacts", "PreWriteCheck", "active_allergies", "active_orders"]


@dataclass(frozen=True)
class PatientFacts:
    """What a pre-write check may look at: the patient's active allergies and active medication orders, their
    birth date ("" when unknown) and their observations (body weight among them; newest first where known)."""

    allergies: list[dict[str, Any]]
    medications: list[dict[str, Any]]
    birth_date: str = ""
    observations: list[dict[str, Any]] = field(default_factory=list)
    #: Conditions on record (a connection question's start, read by code: ``tools/connection_start.py``; the
    #: pregnancy and breastfeeding check).
    conditions: list[dict[str, Any]] = field(default_factory=list)
    #: The record's administrative sex ("female", "male", "" when unknown): the pregnancy check.
    gender: str = ""


@dataclass(frozen=True)
class CheckRun:
    """One safety check of a write and whether it ran: ``detail`` is its source when it ran ("allergy classes:
    WHO ATC, FDA EPC") and the reason when it could not ("no dose range known for digoxin"). The card lists
    every one, so that "no findings" is only said of what was really checked."""

    name: str
    ran: bool
    detail: str = ""


@dataclass
class Findings:
    """A check's answer: warnings (severe ones first), those of them that only an override with a reason can
    pass, and the checks that ran or could not run (a check that could not run is also a warning)."""

    warnings: list[str]
    severe: list[str]
    checks: list[CheckRun] = field(default_factory=list)
    #: The write cannot be proposed at all (a medicine no source knows): no card, this instead ("" when it can).
    blocked: str = ""
    #: Arguments the check read off the record that the write must be made against (``tools.args.ENTRY``: the version
    #: of the entry a label removal changes): they become arguments of the card, so that the card's id and digest
    #: cover them and the approved write refuses a record changed since the card was built.
    pins: dict[str, str] = field(default_factory=dict)
    #: A value the write cannot be made without that the card can still take (a label removal's reason): the card is
    #: shown, so the clinician fills it in there, and an approval of the card without it is refused ("" when none).
    needs: str = ""

    def add(self, text: str, severe: bool = False) -> None:
        self.warnings.append(text)
        if severe:
            self.severe.append(text)

    def ran(self, name: str, detail: str = "") -> None:
        """Record that the check ``name`` ran (``detail``: its source)."""
        self.checks.append(CheckRun(name, True, detail))

    def skipped(self, name: str, reason: str, severe: bool = False) -> None:
        """Record that the check ``name`` could not run, and say so on the card: a skipped check is a warning
        (``severe`` when it guards against harm the clinician cannot see otherwise), never silence."""
        self.checks.append(CheckRun(name, False, reason))
        self.add(f"NOT CHECKED — {name.upper()}: {reason}", severe)

    def ordered(self) -> Findings:
        """Severe findings first (the card shows them before duplicate orders and notes), order kept otherwise."""
        severe = set(self.severe)
        return Findings(sorted(self.warnings, key=lambda w: w not in severe), list(self.severe), list(self.checks),
                        self.blocked, dict(self.pins), self.needs)


#: A write tool's own check: its arguments and the patient's facts → warnings.
PreWriteCheck = Callable[[dict[str, Any], PatientFacts], Findings]


def active_allergies(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The allergies that count: active (or without a status), neither refuted nor entered in error, and not a
    "no known allergy" entry."""
    return [r for r in resources if r.get("resourceType") == "AllergyIntolerance"
            and concept_code(r, "clinicalStatus") in ("active", "")
            and concept_code(r, "verificationStatus") not in ("refuted", "entered-in-error")
            and not is_no_known_allergy(r)]


def active_orders(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Medication orders that are active or on hold."""
    return [r for r in resources
            if r.get("resourceType") == "MedicationRequest" and r.get("status") in ACTIVE_MED]
