"""Deterministic intent and tool decisions: what code is sure of, it decides (the design's principle,
"classification → LLM, control flow → code", extended to everything the message states explicitly).

:func:`decide` is pure. It returns a :class:`RuleDecision` when the message carries an explicit signal
(a task pattern, an imperative write, a named patient or id, a drug with an explicit request, a request
about the active patient's record, an image to analyse), or a general question, greeting or "don't" no tool
can help with; otherwise ``None`` and the model is asked. Precision matters as much as recall: "What is
warfarin?" is a question about a drug, not a lookup; "does she have an allergy?" is not a request to record one;
"Don't add anything to her record yet" asks for nothing. Each decision names its rule family
(``RuleDecision.rule``), whose precision ``bench/bench_rules.py`` measures on phrasings no rule was written from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from docgemma.agent.accounting import Accounting, account
from docgemma.agent.patterns import (
    ASKS_RE,
    CAPABILITY_RE,
    DEFINITION_RE,
    EXPLAIN_RE,
    GREETING_RE,
    IMAGE_REQUEST_RE,
    NOTE_THAT_RE,
    NOTHING_TO_DO_RE,
    PATIENT_REF_RE,
    TIMELINE_RE,
    connection_asked,
    definition_asked,
    general_image_question,
    is_closing,
    is_short_record_ask,
    is_write_request,
    negated_write,
    no_allergy_statement,
    record_role,
    remaining_tools,
    request_part,
    tool_signals,
)
from docgemma.agent.state import AgentState
from docgemma.clinical.entities import malformed_patient_ids
from docgemma.clinical.language import NAMES, detect
from docgemma.clinical.record_concepts import RECORD_CONCEPT_RE, record_item
from docgemma.tools.registry import ToolRegistry
from docgemma.tools.routing import Role

Intent = Literal["DIRECT", "TOOL_NEEDED"]
Scope = Literal["clinical", "greeting", "off_topic", "acknowledgement"]


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


def about_record(query: str) -> bool:
    """True when the message names something the record holds, asks how record items connect, or asks about the
    patient's visits ("did he come back for the diabetes review?")."""
    return bool(RECORD_CONCEPT_RE.search(query) or connection_asked(query) or TIMELINE_RE.search(query))


def record_tool(state: AgentState, tools: ToolRegistry) -> tuple[str, str] | None:
    """(tool, rule family) for a read of the active patient's record: "her last potassium", "his visits this
    year", or a bare short question with a patient active ("any allergies?", "LFTs?"); else None."""
    query = state.get("user_query", "")
    entities = state["extracted_entities"]
    if is_write_request(query) or not _patient_known(state) or NOTE_THAT_RE.match(query):
        return None
    if state.get("active_patient") and record_item(query) and "?" in query:
        # "what's the apixaban (<id>) for?", "what's hanging off the AF dx <id>?": a question about one item of
        # the record named by its id; only the connections tool starts from an item.
        spec = tools.first(Role.CONNECTIONS)
        return (spec.name, "record_item") if spec else None
    if (PATIENT_REF_RE.search(query) or entities["patient_ids"]) and about_record(query):
        family = "record_question"
    elif state.get("active_patient") and is_short_record_ask(query, entities["drug_mentions"]):
        family = "short_record_question"
    else:
        return None
    # A connection question needs the connections tool; which item to explore from is still the model's call
    # (stage 2) unless the message gives its id, but intent and tool are not.
    spec = tools.first(record_role(query))
    return (spec.name, family) if spec else None


def _nothing_to_do(query: str, state: AgentState, tools: ToolRegistry) -> bool:
    """"Don't prescribe anything yet", "I already wrote the note myself": nothing asked, unless another clause
    asks for a look-up ("don't prescribe it, check interactions instead")."""
    if not NOTHING_TO_DO_RE.match(query) or "?" in query:
        return False
    lookups = [s for s in tools if s.lookup and s.matches(query)]
    later = re.split(r"[,;.]|\s[-–—]+\s|\b(?:but|instead|and|now|then|so|just|only)\b", query)[1:]
    return not lookups and not any(ASKS_RE.match(part) for part in later)


def decide(state: AgentState, tools: ToolRegistry) -> RuleDecision | None:
    """The intent (and first tool) when the message settles it and the decision accounts for the whole message
    (:func:`accounted`); None when the model must judge or the clinician be asked. A decision's reason ends with
    what it used and set aside, in clinical words."""
    decision = rule_decision(state, tools)
    if decision is None or decision.intent != "TOOL_NEEDED":
        return decision
    accounting = account(state, tools, decision.tool)
    if not accounting.sure:
        return None
    return replace(decision, reason=f"{decision.reason}; {accounting.describe()}")


def accounted(state: AgentState, tools: ToolRegistry) -> tuple[RuleDecision, Accounting] | None:
    """The rules' decision before accounting, with its accounting (what the message left over when
    :func:`decide` is unsure: the ask-path shows it); None when no rule decided, or decided a direct answer."""
    decision = rule_decision(state, tools)
    if decision is None or decision.intent != "TOOL_NEEDED":
        return None
    return decision, account(state, tools, decision.tool)


def _definition(query: str, state: AgentState, no_patient: bool) -> bool:
    """"What is a phase 2 trial?", "whats a p-value in plain english": what a term means, about no drug, patient or
    image (a sentence of context about the patient may come first)."""
    entities = state["extracted_entities"]
    named = entities["patient_ids"] or entities["patient_names"]
    asked = (DEFINITION_RE.match(query) and no_patient) or (definition_asked(query) and not named)
    return bool(asked) and not entities["drug_mentions"] and not entities["has_image"]


def _conversation_act(query: str) -> RuleDecision | None:
    """Another language, a closing, a greeting or a question about the assistant: nothing to look up."""
    if (language := detect(query)) is not None:
        # Said, not ignored: SYNTHESIZE answers in that language with what this mode understands (no tool, no model).
        return RuleDecision("DIRECT", None, f"a message in {NAMES[language]}: this mode understands English requests",
                            scope="off_topic", rule="other_language")
    if is_closing(query):
        # Before the greeting: "thanks, that's all" ends the conversation, it does not start one.
        return RuleDecision("DIRECT", None, "a thanks or goodbye", scope="acknowledgement", rule="closing")
    if GREETING_RE.match(query):
        return RuleDecision("DIRECT", None, "a greeting or thanks", scope="greeting", rule="greeting")
    if CAPABILITY_RE.match(query):
        return RuleDecision("DIRECT", None, "a question about what the assistant can do", scope="greeting",
                            rule="capabilities")
    return None


def rule_decision(state: AgentState, tools: ToolRegistry) -> RuleDecision | None:
    """The intent (and first tool) the rules read off the message, before the whole message is accounted for."""
    query = state.get("user_query", "")
    entities = state["extracted_entities"]
    drugs = entities["drug_mentions"]
    if (act := _conversation_act(query)) is not None:
        return act
    if _nothing_to_do(query, state, tools):
        return RuleDecision("DIRECT", None, "the clinician asks for nothing to be done", scope="acknowledgement",
                            rule="nothing_to_do")
    if negated_write(query, drugs) is not None and not any(s.lookup and s.matches(query) for s in tools):
        # "He is NOT allergic to latex, please record that", "stop lisinopril": never the positive write; the
        # answer says what was not written and why (SYNTHESIZE, by code).
        return RuleDecision("DIRECT", None, "the write asked for is negated: nothing to write", scope="acknowledgement",
                            rule="negated_write")
    if no_allergy_statement(query) is not None and not any(s.lookup and s.matches(query) for s in tools):
        # "sulfa - negative", "penicillin: none known": no write asked, none made; the answer says how it was read and
        # offers the writes it may mean, each a button of its own (SYNTHESIZE, by code).
        return RuleDecision("DIRECT", None, "a statement that there is no allergy, with no write asked",
                            scope="acknowledgement", rule="no_allergy_statement")
    no_patient = not PATIENT_REF_RE.search(query) and not entities["patient_ids"] and not entities["patient_names"]
    if _definition(query, state, no_patient):
        return RuleDecision("DIRECT", None, "a definition (nothing to look up)", rule="definition")

    needed = remaining_tools(state, tools)
    if state.get("selected_patient") and not needed:
        return RuleDecision("DIRECT", None, "the clinician picked the patient; nothing more was asked",
                            rule="patient_picked")
    if needed:
        signals = tool_signals(state, tools)
        matched = ", ".join(sorted(signals))
        return RuleDecision("TOOL_NEEDED", needed[0], f"the request names what it needs ({matched})",
                            rule=signals[needed[0]].signal)

    if malformed_patient_ids(query) and not is_write_request(query):
        # "patient ../../etc/passwd": the record tool runs and answers that no such patient exists; never a
        # general answer, nor one from the active patient's summary.
        spec = tools.first(record_role(query)) if about_record(query) else tools.first(Role.CHART)
        if spec is not None:
            return RuleDecision("TOOL_NEEDED", spec.name, "the message names a patient by an ID", rule="patient_id")

    found = record_tool(state, tools)
    if found:
        return RuleDecision("TOOL_NEEDED", found[0], "a question about the active patient's record", rule=found[1])

    if entities["has_image"]:
        image_tool = next((s for s in tools if s.needs_image), None)
        if IMAGE_REQUEST_RE.search(query) and image_tool and not general_image_question(query):
            return RuleDecision("TOOL_NEEDED", image_tool.name, "an attached image to analyse", rule="image")
        return RuleDecision("DIRECT", None, "an attached image with a general question: answered without a look-up",
                            rule="image")

    general = EXPLAIN_RE.match(request_part(query)) and not PATIENT_REF_RE.search(query)
    if general and not entities["patient_ids"] and not entities["patient_names"]:
        return RuleDecision("DIRECT", None, "a general medical question (no patient, no lookup asked for)",
                            rule="general_question")
    return None


def next_tool(state: AgentState, tools: ToolRegistry) -> tuple[str, str] | None:
    """TOOL_SELECT stage 1 by rule: (tool, reason) when the task still needs a tool code can name.

    The first selection follows the turn's decision as INTENT_CLASSIFY carried it (``route_decision``, made once
    per turn): an unsure decision leaves it to the model, which was shown the candidates. A state that did not go
    through INTENT_CLASSIFY (an experiment's hand-made state) is decided here."""
    carried = state.get("route_decision")
    first = state.get("step_count", 0) == 0
    if first and carried is not None and not carried["sure"]:
        return None
    still = remaining_tools(state, tools)
    # A first tool only when the whole message is accounted for (a carried sure decision was the rules' own, made
    # with the accounting); later ones as the task goes on.
    if still and (not first or carried is not None or decide(state, tools) is not None):
        return still[0], "the request still needs it"
    if not first or still:
        return None
    if carried is not None:
        return (carried["tool"], carried["reason"]) if carried["tool"] else None
    decision = decide(state, tools)
    if decision and decision.tool:
        return decision.tool, decision.reason
    return None
