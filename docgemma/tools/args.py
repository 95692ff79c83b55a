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


class ToolArgs(BaseModel):
    """Base for argument models: unknown keys are rejected, strings are stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


#: The record's clinical resource types a record tool may be asked about.
ResourceType = Literal["Condition", "MedicationRequest", "Observation", "Procedure", "Encounter", "DiagnosticReport",
                       "CarePlan", "Immunization", "AllergyIntolerance", "DocumentReference"]
