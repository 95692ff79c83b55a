"""A tool added from outside the package, shaped exactly like a ``docgemma/tools/catalog/`` module: its arguments
model, extractor, follow-up, executor and ``SPEC``. ``tests/unit/test_add_a_tool.py`` registers it with one line."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.routing import Request, TurnFacts
from docgemma.tools.spec import Executor, ToolContext, ToolSpec


class RenalDoseArgs(BaseModel):
    drug_name: str
    creatinine_clearance: str | None = None


def renal_dose_args(request: Request) -> dict[str, Any]:
    """``drug_name`` (the one drug named) and ``creatinine_clearance`` ("CrCl 25")."""
    out: dict[str, Any] = {}
    drugs = request.entities["drug_mentions"]
    if len(drugs) == 1:
        out["drug_name"] = drugs[0]
    clearance = re.search(r"\bcrcl\s*(?:of\s*)?(\d+)", request.query, re.IGNORECASE)
    if clearance:
        out["creatinine_clearance"] = clearance.group(1)
    return out


def follow_up(facts: TurnFacts) -> list[str]:
    """The first drug's renal dose."""
    return [f"What is the renal dose of {facts.drugs[0]}?"] if facts.drugs else []


def renal_dose(args: BaseModel, context: ToolContext) -> ToolOutcome:
    """A fixed answer (the test checks the wiring, not the pharmacology)."""
    assert isinstance(args, RenalDoseArgs)
    return success({"drug": args.drug_name, "crcl": args.creatinine_clearance, "dose": "reduce to once daily"})


EXECUTOR: Executor = renal_dose

SPEC = ToolSpec(
    "calculate_renal_dose",
    "Renal Dose Calculator",
    "Compute a renally adjusted dose of a drug from the creatinine clearance. Use when a clinician asks how to "
    "dose a drug in kidney impairment.",
    RenalDoseArgs,
    "What is the renal dose of enoxaparin for a CrCl of 25?",
    lookup=True,
    keywords=("renal dose", "crcl", "creatinine clearance"),
    extract=renal_dose_args,
    follow_up=follow_up,
    executor=EXECUTOR,
)
