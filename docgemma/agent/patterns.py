"""Task-pattern matching (seed 002 §11): which tools a query needs, decided by keywords, never by the model.

All matching patterns contribute (a query may need several tools: "find patient X, check her chart and
verify metformin safety"), which generalises the seed's single-pattern match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docgemma.agent.state import AgentState


@dataclass(frozen=True)
class TaskPattern:
    """Keywords (any of) → tools the query requires."""

    name: str
    keywords: tuple[str, ...]
    requires: frozenset[str]

    def matches(self, query: str) -> bool:
        """Whole-word, case-insensitive keyword match."""
        return any(re.search(rf"\b{re.escape(k)}\b", query, re.IGNORECASE) for k in self.keywords)


TASK_PATTERNS: tuple[TaskPattern, ...] = (
    TaskPattern("drug_safety", ("safety", "warning", "warnings", "boxed warning", "fda"),
                frozenset({"check_drug_safety"})),
    TaskPattern("drug_interaction", ("interaction", "interactions", "combining", "together with"),
                frozenset({"check_drug_interactions"})),
    # Seed §11 also lists "start" and "order"; they match questions ("is it safe to start X?") and
    # would force a write tool into a read-only question, so only explicit words count here.
    TaskPattern("prescribe", ("prescribe", "prescription"), frozenset({"prescribe_medication"})),
    TaskPattern("literature_search", ("studies", "study", "research", "evidence", "literature", "pubmed"),
                frozenset({"search_medical_literature"})),
    TaskPattern("clinical_trial", ("trial", "trials", "recruiting", "experimental"),
                frozenset({"find_clinical_trials"})),
    TaskPattern("allergy", ("allergy", "allergic"), frozenset({"add_allergy"})),
    TaskPattern("clinical_note", ("note",), frozenset({"save_clinical_note"})),
)
# "record" is also a verb ("record an allergy"): it names the chart only after a possessive or article.
_CHART_RE = re.compile(
    r"\b(chart|summary|meds|medications|labs|history)\b|\b(her|his|their|the|patient'?s|medical|health)\s+records?\b",
    re.IGNORECASE,
)
_PATIENT_RE = re.compile(r"\b(patient|his|her|their)\b", re.IGNORECASE)
#: Words that make an "allergy"/"note"/"order" query a write request rather than a question about one.
_WRITE_VERBS = re.compile(r"\b(add|record|document|save|write|log|enter|prescribe|start|order)\b", re.IGNORECASE)


def required_tools(state: AgentState, available: tuple[str, ...]) -> set[str]:
    """Tools the query needs, restricted to ``available`` (a tool not in the registry is never required)."""
    query = state.get("user_query", "")
    entities = state.get("extracted_entities")
    needed: set[str] = set()
    for pattern in TASK_PATTERNS:
        if not pattern.matches(query):
            continue
        if pattern.requires & {"add_allergy", "save_clinical_note", "prescribe_medication"} and not _WRITE_VERBS.search(query):
            continue
        needed |= pattern.requires
    names = entities["patient_names"] if entities else []
    ids = entities["patient_ids"] if entities else []
    if names and not ids:
        needed.add("search_patient")
    if _CHART_RE.search(query) and (_PATIENT_RE.search(query) or names or ids or state.get("active_patient")):
        needed.add("get_patient_chart")
    return {t for t in needed if t in available}


def succeeded_tools(state: AgentState) -> set[str]:
    """Tools that returned data this turn."""
    return {r["tool_name"] for r in state.get("tool_results", []) if r["status"] == "success"}


def remaining_tools(state: AgentState, available: tuple[str, ...]) -> list[str]:
    """Required tools neither done nor given up on, in registry order."""
    done = succeeded_tools(state) | set(state.get("skipped_tools", []))
    needed = required_tools(state, available) - done
    return [t for t in available if t in needed]
