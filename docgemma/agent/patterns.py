"""Task-pattern matching (seed 002 §11): which tools a query needs, decided by keywords, never by the model.

Each tool's keywords are on its spec (``ToolSpec.keywords``); every tool whose keywords match contributes (a
query may need several tools: "find patient X, check her chart and verify metformin safety"), which
generalises the seed's single-pattern match. The other signals (a named patient, a chart, an order verb with a
drug, a drug's safety) ask the registry for the tool by flag or role, never by name.
"""

from __future__ import annotations

import re

from docgemma.agent.state import AgentState
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role

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


#: Words asking for more than the recorded facts: a trend, a comparison, a judgement.
_INTERPRET_RE = re.compile(
    r"\b(why|should|trend\w*|chang\w*|over (?:the|time)|since|compar\w*|explain|interpret\w*|safe\w*|risk\w*|mean\w*|"
    r"normal|worse\w*|better|improv\w*|significan\w*|concern\w*|and|also|then)\b",
    re.IGNORECASE,
)
#: A short question is answered with the record's facts in one line, written by code.
SHORT_QUESTION_WORDS = 8


def is_short_record_question(query: str) -> bool:
    """A short question for recorded facts ("any allergies?", "her last creatinine?"), with no request for a
    trend, comparison or judgement and no second ask, which a clinically meaningful model answers better."""
    return len(query.split()) <= SHORT_QUESTION_WORDS and not _INTERPRET_RE.search(query)


def is_question(query: str) -> bool:
    """True for a question (it may mention a write word without asking for a write)."""
    if re.match(r"^\s*(please|kindly|(can|could|would) you)\b", query, re.IGNORECASE):
        return False
    return bool(_QUESTION_RE.match(query)) or query.rstrip().endswith("?")


def is_write_request(query: str) -> bool:
    """True when the clinician asks for a write in command form; questions never are."""
    return not is_question(query) and bool(_WRITE_CLAUSE_RE.search(query) or _ORDER_RE.search(query))


def _add(needed: dict[str, str], spec: ToolSpec | None, signal: str) -> None:
    if spec is not None:
        needed.setdefault(spec.name, signal)


def tool_signals(state: AgentState, tools: ToolRegistry) -> dict[str, str]:
    """The tools the query needs (only tools of ``tools``: one not registered is never required), each with
    the signal that requires it (a rule family, for the timeline and the rules' measurement)."""
    query = state.get("user_query", "")
    entities = state.get("extracted_entities")
    needed: dict[str, str] = {}
    writes = is_write_request(query)
    write_tools = {s.name for s in tools if s.writes}
    for spec in tools:
        if spec.matches(query) and (writes or not spec.writes):
            _add(needed, spec, "write_keywords" if spec.writes else "task_keywords")
    drugs = entities["drug_mentions"] if entities else []
    order = tools.first(Role.MEDICATION_ORDER)
    # An order verb with a drug is a medication order, unless the message asks for another write ("start a
    # note", "add a penicillin allergy").
    if order and writes and drugs and _ORDER_RE.search(query) and not set(needed) & (write_tools - {order.name}):
        _add(needed, order, "order_verb")
    names = entities["patient_names"] if entities else []
    ids = entities["patient_ids"] if entities else []
    if names and not ids:
        _add(needed, next((s for s in tools if s.patient_search), None), "patient_name")
    refers = _PATIENT_RE.search(query) or names or ids or state.get("active_patient")
    # In a write, "her medications" / "her record" say where to write; only "chart", "summary" or "review" ask
    # to read the chart too ("Review abc-123's chart and record a penicillin allergy").
    chart_read = not set(needed) & write_tools or _REVIEW_RE.search(query)
    if _CHART_RE.search(query) and refers and chart_read and not CONNECTION_RE.search(query):
        _add(needed, tools.first(Role.CHART), "chart_words")
    # "Is spironolactone safe with her kidney function?": a drug's safety is a label look-up.
    if drugs and _SAFE_RE.search(query) and not writes:
        _add(needed, tools.first(Role.DRUG_SAFETY), "drug_safe")
    return needed


def required_tools(state: AgentState, tools: ToolRegistry) -> set[str]:
    """Names of the tools the query needs (see :func:`tool_signals`)."""
    return set(tool_signals(state, tools))


def succeeded_tools(state: AgentState) -> set[str]:
    """Tools that returned data this turn."""
    return {r["tool_name"] for r in state.get("tool_results", []) if r["status"] == "success"}


def run_order(query: str, spec: ToolSpec) -> tuple[int, int]:
    """Sort key: a patient search first and the chart next (later tools need the patient), writes last,
    everything else in the order the clinician asked for it (where its keywords first occur)."""
    if spec.patient_search:
        return (0, 0)
    if Role.CHART in spec.roles:
        return (1, 0)
    if spec.writes:
        return (3, 0)
    position = spec.mention(query)
    return (2, len(query) if position is None else position)


def remaining_tools(state: AgentState, tools: ToolRegistry) -> list[str]:
    """Required tools neither done nor given up on, in the order they should run (see :func:`run_order`)."""
    done = succeeded_tools(state) | set(state.get("skipped_tools", []))
    needed = required_tools(state, tools) - done
    query = state.get("user_query", "")
    return [s.name for s in sorted((s for s in tools if s.name in needed), key=lambda s: run_order(query, s))]
