"""Deterministic intent and tool decisions: what code is sure of, it decides (seed 002's principle,
"classification → LLM, control flow → code", extended to everything the message states explicitly).

:func:`decide` is pure. It returns a :class:`RuleDecision` when the message carries an explicit signal
(a task pattern, an imperative write, a named patient or id, a drug with an explicit request, a request
about the active patient's record, an image to analyse), or a general question no tool can help with;
otherwise ``None`` and the model is asked. Precision matters as much as recall: "What is warfarin?" is a
question about a drug, not a lookup; "does she have an allergy?" is not a request to record one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from docgemma.agent.patterns import CONNECTION_RE, is_write_request, remaining_tools, tool_signals
from docgemma.agent.state import AgentState
from docgemma.tools.registry import ToolRegistry
from docgemma.tools.routing import Role

GREETING_RE = re.compile(
    r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you|thx|bye|goodbye)\b[\s\w,!.?']{0,30}$",
    re.IGNORECASE,
)
#: A general-knowledge question: definition, mechanism, explanation.
EXPLAIN_RE = re.compile(
    r"^\s*(please\s+)?(what\s+(is|are|was|were|does|do|causes?)|explain|define|describe|how\s+(does|do|is|are)|why\b|"
    r"tell\s+me\s+about|what's|whats)\b",
    re.IGNORECASE,
)
#: The message refers to a patient (the active one when no id or name is given).
PATIENT_REF_RE = re.compile(
    r"\b(she|he|her|his|hers|him|they|their|them|(my|this|the|our)\s+patient('?s)?|pt)\b", re.IGNORECASE
)
#: What a patient's record holds: a question about one of these for the active patient reads the record.
RECORD_CONCEPT_RE = re.compile(
    r"\b(labs?|lab results?|results?|creatinine|egfr|kidney|renal|potassium|sodium|glucose|hba1c|a1c|hemoglobin|"
    r"haemoglobin|cholesterol|ldl|blood pressure|bp|vitals?|vital signs|weight|bmi|heart rate|temperature|allerg\w*|"
    r"conditions?|diagnos[ie]s|problems?|immuni[sz]ations?|vaccines?|vaccinations?|procedures?|surgery|surgeries|"
    r"medications?|meds|prescriptions?|drugs?|notes?|visits?|encounters?|admissions?|history|timeline|trend)\b",
    re.IGNORECASE,
)
TIMELINE_RE = re.compile(r"\b(visits?|encounters?|admissions?|timeline|what happened|last time|previous notes?)\b",
                         re.IGNORECASE)
#: A request to do something (not a question): "check", "look up", "verify", "review" ...
IMPERATIVE_RE = re.compile(
    r"^\s*(please\s+|can you\s+|could you\s+)?(check|look\s+up|verify|review|get|pull|show|give\s+me|find|search)\b",
    re.IGNORECASE,
)
IMAGE_REQUEST_RE = re.compile(
    r"\b(analy[sz]e|interpret|read|assess|evaluate|look at)\b.*\b(image|x-?ray|film|scan|ct|mri|ultrasound|slide|photo)\b"
    r"|\b(pneumothorax|fracture|effusion|consolidation|nodule|mass|lesion)\b",
    re.IGNORECASE,
)

Intent = Literal["DIRECT", "TOOL_NEEDED"]
Scope = Literal["clinical", "greeting", "off_topic"]


@dataclass(frozen=True)
class RuleDecision:
    """A decision code is sure of: the intent, the first tool (TOOL_NEEDED), why, and the rule family that
    made it (``bench/bench_rules.py`` measures each family's precision)."""

    intent: Intent
    tool: str | None
    reason: str
    scope: Scope = "clinical"
    rule: str = ""


def _patient_known(state: AgentState) -> bool:
    entities = state["extracted_entities"]
    return bool(entities["patient_ids"] or entities["patient_names"] or state.get("active_patient"))


def record_tool(state: AgentState, tools: ToolRegistry) -> str | None:
    """A read of the active patient's record ("her last potassium", "his visits this year"), or None."""
    query = state.get("user_query", "")
    entities = state["extracted_entities"]
    refers = PATIENT_REF_RE.search(query) or entities["patient_ids"]
    if not (refers and _patient_known(state) and RECORD_CONCEPT_RE.search(query)) or is_write_request(query):
        return None
    # A connection question needs the connections tool; which item to explore from is still the model's call
    # (stage 2), but intent and tool are not: asking the model for them cost two calls over the budget.
    role = (Role.CONNECTIONS if CONNECTION_RE.search(query)
            else Role.RECORD_HISTORY if TIMELINE_RE.search(query) else Role.RECORD_QUERY)
    spec = tools.first(role)
    return spec.name if spec else None


def decide(state: AgentState, tools: ToolRegistry) -> RuleDecision | None:
    """The intent (and first tool) when the message settles it; None when the model must judge."""
    query = state.get("user_query", "")
    entities = state["extracted_entities"]
    drugs = entities["drug_mentions"]
    if GREETING_RE.match(query):
        return RuleDecision("DIRECT", None, "a greeting", scope="greeting", rule="greeting")

    needed = remaining_tools(state, tools)
    if state.get("selected_patient") and not needed:
        return RuleDecision("DIRECT", None, "the clinician picked the patient; nothing more was asked",
                            rule="patient_picked")
    if needed:
        signals = tool_signals(state, tools)
        matched = ", ".join(sorted(signals))
        return RuleDecision("TOOL_NEEDED", needed[0], f"the request names what it needs ({matched})",
                            rule=signals[needed[0]])

    tool = record_tool(state, tools)
    if tool:
        return RuleDecision("TOOL_NEEDED", tool, "a question about the active patient's record", rule="record_question")

    if entities["has_image"]:
        image_tool = next((s for s in tools if s.needs_image), None)
        if IMAGE_REQUEST_RE.search(query) and image_tool:
            return RuleDecision("TOOL_NEEDED", image_tool.name, "an attached image to analyse", rule="image")
        return RuleDecision("DIRECT", None, "an attached image with a general question: answered from the image findings",
                            rule="image")

    if IMPERATIVE_RE.match(query) and drugs:
        together = tools.first(Role.INTERACTIONS)
        if len(drugs) >= 2 and together:
            return RuleDecision("TOOL_NEEDED", together.name, f"a request about {len(drugs)} drugs", rule="drug_request")
        safety = tools.first(Role.DRUG_SAFETY)
        if safety:
            return RuleDecision("TOOL_NEEDED", safety.name, f"a request about the drug {drugs[0]}", rule="drug_request")

    general = EXPLAIN_RE.match(query) and not PATIENT_REF_RE.search(query)
    if general and not entities["patient_ids"] and not entities["patient_names"]:
        return RuleDecision("DIRECT", None, "a general medical question (no patient, no lookup asked for)",
                            rule="general_question")
    return None


def next_tool(state: AgentState, tools: ToolRegistry) -> tuple[str, str] | None:
    """TOOL_SELECT stage 1 by rule: (tool, reason) when the task still needs a tool code can name."""
    still = remaining_tools(state, tools)
    if still:
        return still[0], "the request still needs it"
    if state.get("step_count", 0) > 0:
        return None
    decision = decide(state, tools)
    if decision and decision.tool:
        return decision.tool, decision.reason
    return None
