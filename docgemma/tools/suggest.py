"""Follow-up suggestions per tool (``ToolSpec.follow_up``): the next questions a tool could answer after a turn
that did not call it, by rule from the turn's drugs and patient (no model call)."""

from __future__ import annotations

from docgemma.tools.routing import Role, TurnFacts


def chart(facts: TurnFacts) -> list[str]:
    """Review the active patient's chart."""
    return [f"Show the chart of {facts.patient_name}"] if facts.patient_name else []


def drug_safety(facts: TurnFacts) -> list[str]:
    """The first drug's label warnings."""
    return [f"What are the FDA safety warnings for {facts.drugs[0]}?"] if facts.drugs else []


def interactions(facts: TurnFacts) -> list[str]:
    """The named drugs together, or one drug with the active patient's medications."""
    if len(facts.drugs) >= 2:
        return [f"Check interactions between {' and '.join(facts.drugs[:3])}"]
    if facts.drugs and facts.patient_name:
        return [f"Does {facts.drugs[0]} interact with {facts.patient_name}'s current medications?"]
    return []


def literature(facts: TurnFacts) -> list[str]:
    """Studies on the first drug."""
    return [f"Find recent studies on {facts.drugs[0]}"] if facts.drugs else []


def trials(facts: TurnFacts) -> list[str]:
    """Trials on the topic the turn searched the literature for."""
    return ["Are there recruiting clinical trials on this topic?"] if Role.LITERATURE in facts.tried_roles else []
