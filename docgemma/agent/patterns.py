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
#: How findings relate: the model judges which record item to start from (explore_connections), so such a
#: question requires no fixed tool.
CONNECTION_RE = re.compile(r"\b(connect\w*|linked|link between|relat(?:ed|es|ion)\s+(?:to|between)|treating)\b",
                           re.IGNORECASE)
_REVIEW_RE = re.compile(r"\b(chart|summary|review)\b", re.IGNORECASE)
_SAFE_RE = re.compile(r"\b(safe|safety)\b", re.IGNORECASE)
_PATIENT_RE = re.compile(r"\b(patient|his|her|their)\b", re.IGNORECASE)
#: A question: it asks about something, so it never requests a write ("Should I start metformin?",
#: "does she have an allergy?"). "Can you ..." / "Could you ..." are requests, not questions.
_QUESTION_RE = re.compile(
    r"^\s*(what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|has|have|had|should|shall|"
    r"can (i|we|she|he|they)|could (i|we)|may|might|would (i|we|it)|will|any)\b",
    re.IGNORECASE,
)
#: A write verb in command position: at the start of a clause, after a polite opener or "and"/"then".
_WRITE_CLAUSE_RE = re.compile(
    r"(?:^|[,;:.!]\s*|\b(?:and|then|please|kindly)\s+|\b(?:can|could|would) you\s+|\bgo ahead and\s+|"
    r"\bi(?: want|'d like| would like| need) to\s+|\blet'?s\s+)"
    r"(prescribe|order|start|record|document|add|save|write|log|enter|put)\b",
    re.IGNORECASE,
)
#: Verbs of a medication order (with a drug named): "Start lisinopril 10 mg daily for abc-123".
_ORDER_RE = re.compile(r"(?:^|[,;:.!]\s*|\b(?:and|then|please)\s+)(prescribe|order|start|give)\b", re.IGNORECASE)
WRITE_TOOLS = frozenset({"add_allergy", "save_clinical_note", "prescribe_medication"})


def is_question(query: str) -> bool:
    """True for a question (it may mention a write word without asking for a write)."""
    if re.match(r"^\s*(please|kindly|(can|could|would) you)\b", query, re.IGNORECASE):
        return False
    return bool(_QUESTION_RE.match(query)) or query.rstrip().endswith("?")


def is_write_request(query: str) -> bool:
    """True when the clinician asks for a write in command form; questions never are."""
    return not is_question(query) and bool(_WRITE_CLAUSE_RE.search(query) or _ORDER_RE.search(query))


def required_tools(state: AgentState, available: tuple[str, ...]) -> set[str]:
    """Tools the query needs, restricted to ``available`` (a tool not in the registry is never required)."""
    query = state.get("user_query", "")
    entities = state.get("extracted_entities")
    needed: set[str] = set()
    writes = is_write_request(query)
    for pattern in TASK_PATTERNS:
        if not pattern.matches(query):
            continue
        if pattern.requires & WRITE_TOOLS and not writes:
            continue
        needed |= pattern.requires
    drugs = entities["drug_mentions"] if entities else []
    if writes and drugs and _ORDER_RE.search(query) and not needed & {"add_allergy", "save_clinical_note"}:
        needed.add("prescribe_medication")
    names = entities["patient_names"] if entities else []
    ids = entities["patient_ids"] if entities else []
    if names and not ids:
        needed.add("search_patient")
    refers = _PATIENT_RE.search(query) or names or ids or state.get("active_patient")
    # In a write, "her medications" / "her record" say where to write; only "chart", "summary" or "review" ask
    # to read the chart too ("Review abc-123's chart and record a penicillin allergy").
    chart_read = not needed & WRITE_TOOLS or _REVIEW_RE.search(query)
    if _CHART_RE.search(query) and refers and chart_read and not CONNECTION_RE.search(query):
        needed.add("get_patient_chart")
    # "Is spironolactone safe with her kidney function?": a drug's safety is a label look-up.
    if drugs and _SAFE_RE.search(query) and not writes:
        needed.add("check_drug_safety")
    return {t for t in needed if t in available}


def succeeded_tools(state: AgentState) -> set[str]:
    """Tools that returned data this turn."""
    return {r["tool_name"] for r in state.get("tool_results", []) if r["status"] == "success"}


def _mention_order(query: str, tool: str) -> tuple[int, int]:
    """Sort key: a patient search first and the chart next (later tools need the patient), writes last,
    everything else in the order the clinician asked for it."""
    if tool == "search_patient":
        return (0, 0)
    if tool == "get_patient_chart":
        return (1, 0)
    if tool in WRITE_TOOLS:
        return (3, 0)
    positions = [
        found.start()
        for pattern in TASK_PATTERNS if tool in pattern.requires
        for k in pattern.keywords
        if (found := re.search(rf"\b{re.escape(k)}\b", query, re.IGNORECASE))
    ]
    return (2, min(positions, default=len(query)))


def remaining_tools(state: AgentState, available: tuple[str, ...]) -> list[str]:
    """Required tools neither done nor given up on, in the order they should run (see _mention_order)."""
    done = succeeded_tools(state) | set(state.get("skipped_tools", []))
    needed = required_tools(state, available) - done
    query = state.get("user_query", "")
    return sorted((t for t in available if t in needed), key=lambda t: _mention_order(query, t))
