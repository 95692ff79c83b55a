"""What the tools' argument models share; each tool's own model lives in its ``tools/catalog/`` module.
Required, decision-critical fields come first, optional last (nullable fields first cut argument accuracy from
88% to 21%).

Every string is bounded (``max_length``) so a constrained generation always closes its JSON inside the
node's token cap; ``tests/unit/test_schemas.py`` checks the worst case against the caps.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PatientId = Field(min_length=1, max_length=64, description="Patient ID (not a name)")
#: The argument that holds the words of a request no field took ("alternate weekdays"): it travels with the
#: values so the card's check shows them as a finding, but it is no value of the write. No write stores it, no
#: card shows it as a field, no model is asked for it (issue 46: they were written into the order's note).
UNREAD = "unread"
#: The record entry a write changes, as its check read it for the card: a versioned reference
#: ("AllergyIntolerance/<id>/_history/<versionId>"). The check puts it on the card (``write_checks.Findings.pins``),
#: so the card's id and digest (and an MCP approval's signature) cover it, and the write changes the entry only while
#: it is still that version. Code's to fill, never a model's, and no field of the card.
ENTRY = "entry"
#: Argument names that are never a value the record is given (see :data:`UNREAD`, :data:`ENTRY`).
NOT_WRITTEN = frozenset({UNREAD, ENTRY})


def value_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The argument names of ``model`` that are values of the call (a card's fields, a model's arguments)."""
    return tuple(name for name in model.model_fields if name not in NOT_WRITTEN)


class ToolArgs(BaseModel):
    """Base for argument models: unknown keys are rejected, strings are stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


#: The record's clinical resource types a record tool may be asked about.
ResourceType = Literal["Condition", "MedicationRequest", "Observation", "Procedure", "Encounter", "DiagnosticReport",
                       "CarePlan", "Immunization", "AllergyIntolerance", "DocumentReference"]
