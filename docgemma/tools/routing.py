"""What a tool contributes to the agent's deterministic rules, so the rules never spell a tool name.

A :class:`~docgemma.tools.spec.ToolSpec` carries, besides its prompt text and executor:

* ``keywords``: words that, said by the clinician, mean the request needs the tool (task patterns: code, not the model, decides
  when the loop has enough; a write tool only when the message asks for a write);
* ``roles``: the parts it plays in the agent's rules (:class:`Role`), which ask ``registry.first(role)``
  instead of naming a tool;
* ``extract``: its deterministic argument prefill, from the :class:`Request` (ground-floor inputs only: the
  message, its entities, the active patient's id — never the agent's state);
* ``follow_up``: next questions to suggest once the turn is answered (:class:`TurnFacts`).

This module holds only the vocabulary; each tool's own values live with its spec in its ``tools/catalog/`` module.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from docgemma.clinical.entities import ExtractedEntities
from docgemma.clinical.patient import PatientRef


class Role(str, Enum):
    """A part a tool plays in the agent's rules (a tool may play several, a role is played by the first tool)."""

    #: A drug's label warnings: a named drug with "safe" or an imperative request ("check amoxicillin").
    DRUG_SAFETY = "drug_safety"
    #: Two or more named drugs together.
    INTERACTIONS = "interactions"
    #: The patient's whole record: read right after the patient is found, before the rest of the task.
    CHART = "chart"
    #: A specific question about the active patient's record ("her last potassium").
    RECORD_QUERY = "record_query"
    #: The active patient's visits over time ("what happened at his visits this year").
    RECORD_HISTORY = "record_history"
    #: How items of the active patient's record relate ("how is her hypertension connected to her medications").
    CONNECTIONS = "connections"
    #: A medication order: an order verb ("start", "give") with a named drug asks for it.
    MEDICATION_ORDER = "medication_order"
    #: A literature search (a trials search is suggested after it).
    LITERATURE = "literature"
    #: A search for studies that enrol patients: "studies" with an enrolment word ("recruiting", "volunteers")
    #: is this tool's request, not the literature's.
    TRIALS = "trials"
    #: Documenting an adverse reaction to a substance ("record that she had a rash with doxycycline").
    ALLERGY_ENTRY = "allergy_entry"
    #: Removing an allergy label on record that no longer applies ("delabel penicillin: tolerated a challenge"):
    #: a status change of the entry, never a new allergy entry.
    ALLERGY_REMOVAL = "allergy_removal"
    #: Saving a note the clinician dictates ("Note for Grace Mensah: …", "Progress note, <patient>: …").
    NOTE_ENTRY = "note_entry"


@dataclass(frozen=True)
class Request:
    """What a tool's argument extractor may read: the message, its entities and the active patient."""

    query: str
    entities: ExtractedEntities
    active_patient: PatientRef | None = None

    @property
    def patient_id(self) -> str | None:
        """The one id the message names, else the active patient's when it names none."""
        ids = self.entities["patient_ids"]
        if len(ids) == 1:
            return ids[0]
        return self.active_patient["id"] if self.active_patient and not ids else None


@dataclass(frozen=True)
class TurnFacts:
    """What follow-up suggestions may read: the turn's drugs, the active patient and what was tried."""

    drugs: tuple[str, ...]
    patient_name: str | None
    #: Roles of the tools the turn called (successfully or not).
    tried_roles: frozenset[Role]


#: Arguments code can read off the message (possibly none); the model is asked only for the rest.
Extractor = Callable[[Request], dict[str, Any]]
#: Next questions the tool could answer, given the turn (the tool was not tried this turn).
FollowUp = Callable[[TurnFacts], list[str]]


def about_first_drug(question: str) -> FollowUp:
    """A follow-up asking ``question`` about the first drug the turn named (``{drug}`` in it); none without one."""
    def follow_up(facts: TurnFacts) -> list[str]:
        return [question.format(drug=facts.drugs[0])] if facts.drugs else []

    return follow_up


def keyword_position(keywords: tuple[str, ...], text: str) -> int | None:
    """Where the first of ``keywords`` (whole word, any case) occurs in ``text``; None when none does."""
    positions = [
        found.start() for k in keywords if (found := re.search(rf"\b{re.escape(k)}\b", text, re.IGNORECASE))
    ]
    return min(positions, default=None)
