"""The one sentence a demo model not fit for medicine writes: its reply to a greeting, a thanks or "what can you do?".

The embedded CPU model (SmolLM2, ``clinically_meaningful = False``) writes no medical prose. A turn that is
plainly not clinical is still a job it can do safely, and it lets a judge on a CPU see a model at work. Code
decides both ends, never the model:

* who gets here (:func:`applies`): a greeting or thanks the rules were sure of, in English, with no drug, patient,
  record concept, number, image or tool keyword anywhere in the message, no tool called and nothing asked back. A
  clinical message never reaches the model on this path; nor does "what can you do?" on its own (asked, the
  model described services this app does not have: "editing or optimization");
* what is kept (:func:`kept`): the reply's first sentence (two when the first is a bare "Hello!"), scrubbed of tool
  names, at most 14 words; a reply that names a drug, a number, a record concept, a medical word or a claim about
  what it does ("I can…", "I'm here to assist with…") is replaced by code's greeting, and the timeline says so.

The capabilities list after it is written by code (:func:`docgemma.agent.modes.capabilities`), as before.
"""

from __future__ import annotations

import re

from docgemma.agent import answer, modes
from docgemma.agent.state import AgentState
from docgemma.agent.trace import NodeTrace
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.language import detect
from docgemma.clinical.record_concepts import RECORD_CONCEPT_RE
from docgemma.llm.base import LLM, LLMError, Message, clinically_meaningful
from docgemma.tools.registry import ToolRegistry

#: The rules whose turns the demo model may greet back (:func:`docgemma.agent.rules.rule_decision`).
RULES = frozenset({"greeting"})
#: A greeting's sentence fits in this many tokens; a runaway reply is cut, not waited for (~1 s on a CPU).
MAX_TOKENS = 32
MAX_CHARS = 120
MAX_WORDS = 14
SYSTEM = ("You are the front desk of a clinical software tool. Reply to the user's greeting or thanks in one short, "
          "friendly sentence. Give no medical information, no advice, no names and no numbers.")
#: Words that make a reply medical: a reply with one of them is not shown (code's greeting stands instead).
MEDICAL_RE = re.compile(
    r"\b(?:diagnos\w*|treat\w*|therap\w*|dos(?:e|es|age|ing)|mg|mcg|ml|medic\w*|drug\w*|prescri\w*|symptom\w*|"
    r"disease\w*|illness\w*|pain|infection\w*|cancer\w*|blood|pressure|heart|patient\w*|pill\w*|tablet\w*|"
    r"surgery|allerg\w*|vaccin\w*|antibiotic\w*|cure\w*|condition\w*|health\w*|doctor\w*|nurse\w*|hospital\w*)\b",
    re.IGNORECASE,
)
#: A claim about what the assistant is or does: the capabilities are code's to state, never the model's.
CLAIM_RE = re.compile(
    r"\b(?:i\s+can|i\s+could\s+(?!help\b)|i\s*'?m\s+here\s+to|i\s+am\s+here\s+to|i\s+will|i\s*'ll|my\s+name|"
    r"(?:help|assist)(?:ing)?\s+(?:you\s+)?with|project|service|since|editing|company|i\s*'?ve\s+been)\b",
    re.IGNORECASE,
)
#: A greeting's answer as the clinician's timeline says it, whoever wrote its line: the decision's closing
#: parenthetical says who, for the technical details (``ui/timeline.py``).
GREETED = "a greeting and what this assistant can do"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def applies(state: AgentState, llm: LLM, registry: ToolRegistry) -> bool:
    """True when the demo model may write the reply: see the module docstring. Never for a clinically meaningful
    model (its own synthesis answers) nor for the demo rules (no language model at all)."""
    if clinically_meaningful(llm) or modes.mode_of(llm).rules:
        return False
    decided = state.get("route_decision") or {}
    if not decided.get("sure") or decided.get("rule") not in RULES or state.get("scope") != "greeting":
        return False
    if state.get("tool_results") or state.get("clarification_request") or state.get("undecided"):
        return False
    query = state["user_query"]
    entities = state["extracted_entities"]
    clinical = (entities["drug_mentions"] or entities["patient_ids"] or entities["patient_names"]
                or entities["has_image"] or RECORD_CONCEPT_RE.search(query) or re.search(r"\d", query))
    return not clinical and detect(query) is None and not any(spec.matches(query) for spec in registry)


def kept(text: str, registry: ToolRegistry) -> tuple[str | None, str]:
    """The model's reply as shown (its first sentence or two, scrubbed), or None with why it is not shown."""
    scrubber = answer.Scrubber(registry)
    cleaned = answer.strip_template_debris(scrubber.feed(text) + scrubber.flush()).strip()
    cleaned = " ".join(cleaned.split()).strip("\"'“”")
    sentences = _SENTENCE_END.split(cleaned)
    reply = sentences[0] if len(sentences[0]) > 20 or len(sentences) == 1 else " ".join(sentences[:2])
    reply = reply[:MAX_CHARS].strip()
    if not reply:
        return None, "the model wrote nothing"
    if len(reply.split()) > MAX_WORDS or CLAIM_RE.search(reply):
        return None, "the model's reply said more than a greeting, so it is not shown"
    found = extract_entities(reply)
    if found["drug_mentions"] or re.search(r"\d", reply) or RECORD_CONCEPT_RE.search(reply) or MEDICAL_RE.search(reply):
        return None, "the model's reply named something clinical, so it is not shown"
    if not reply.endswith((".", "!", "?")):
        reply += "."
    reply = reply[0].upper() + reply[1:]
    return reply, ""


def reply(state: AgentState, trace: NodeTrace, registry: ToolRegistry, code_greeting: str,
          capabilities: str) -> tuple[str, str]:
    """The greeting line written by the model (or ``code_greeting`` when it is not kept), then ``capabilities``
    (written by code); with the timeline's decision saying who wrote what."""
    assert trace.llm is not None
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=state["user_query"])]
    try:
        written = "".join(trace.llm.generate_text(messages, temperature=0.0, max_tokens=MAX_TOKENS))
    except LLMError as failed:
        return f"{code_greeting} {capabilities}", f"{GREETED} (written by code: the model failed: {failed})"
    line, why = kept(written, registry)
    if line is None:
        return f"{code_greeting} {capabilities}", f"{GREETED} (written by code: {why})"
    return (f"{line}\n\n{capabilities}",
            f"{GREETED} (greeting line written by the demo model, checked by code: nothing clinical; the list of what "
            "it can do written by code)")
