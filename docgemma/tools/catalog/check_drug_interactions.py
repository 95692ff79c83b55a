"""check_drug_interactions: known interactions between two or more drugs, every pair checked."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from pydantic import Field, StringConstraints

from docgemma.tools import interactions
from docgemma.tools.args import ToolArgs
from docgemma.tools.extract import INTERACTION_WORDS, drug_list
from docgemma.tools.lookup_tool import knowledge_lookup
from docgemma.tools.routing import Role, TurnFacts
from docgemma.tools.spec import ToolSpec


class DrugInteractionArgs(ToolArgs):
    drug_names: list[Annotated[str, StringConstraints(min_length=2, max_length=40)]] = Field(
        min_length=2, max_length=6, description="Two or more drug names (at most six); every pair is checked"
    )


def follow_up(facts: TurnFacts) -> list[str]:
    """The named drugs together, or one drug with the active patient's medications."""
    if len(facts.drugs) >= 2:
        return [f"Check interactions between {' and '.join(facts.drugs[:3])}"]
    if facts.drugs and facts.patient_name:
        # Worded as the rules read an interaction check surely (a question "Does … interact with …" was not).
        return [f"Check interactions between {facts.drugs[0]} and {facts.patient_name}'s medications"]
    return []


SPEC = ToolSpec(
    "check_drug_interactions",
    "Drug Interaction Check",
    "Check for known interactions between two or more drugs. Returns severity, mechanism, and "
    "clinical significance. Use when a clinician asks about combining medications or potential "
    "drug-drug interactions.",
    DrugInteractionArgs,
    "Can I give clarithromycin to a patient taking simvastatin?",
    arg_max_tokens=288,
    result_cap=interactions.RESULT_CHARS,
    keywords=(*INTERACTION_WORDS, "ddi", "ddis", "drug-drug"),
    extract=partial(drug_list, near=INTERACTION_WORDS),
    follow_up=follow_up,
    **knowledge_lookup(Role.INTERACTIONS, "labels", interactions.check_drug_interactions, interactions.format_interactions),
)
