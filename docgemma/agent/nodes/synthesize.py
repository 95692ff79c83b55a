"""Node ⑦ SYNTHESIZE (LLM, T=0.5, 256 tokens, free text, streamed): the clinician-facing answer, plus the
turn's confidence, sources and follow-up suggestions (the answer plus its reasoning trail, and follow-ups).

Three answers are written by code, never by the model:
* a clarification question from the deterministic ask_user rules;
* a tool-needing turn where every tool failed (the model would otherwise answer from memory);
* a tool-needing turn where no tool could be chosen;
* a message that asks for nothing ("don't prescribe anything yet"): an acknowledgement;
* a short question one record read answered, when the tool wrote its one-line statement (any model):
  "Grace Mensah — allergies on record: penicillin (anaphylaxis, …)".
A model flagged not clinically meaningful (``clinically_meaningful = False``: the embedded CPU demo model)
writes no medical prose at all: a tool turn's answer is the retrieved facts rendered by code
(:mod:`docgemma.agent.render`), a medical question without a tool gets an honest "cannot answer", a
request no rule was sure of gets one sentence on what the demo can do here (the closest actions follow as
buttons), and a greeting gets the capabilities. Its one job is the friendly line ahead of them on a plainly
non-clinical turn ("hello", "thanks", "what can you do?"), checked by code (:mod:`docgemma.agent.small_talk`).
The model's text passes through the :class:`~docgemma.agent.answer.Scrubber`, which replaces any tool
name with its clinical label, and an empty generation is replaced by a plain statement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from docgemma.agent import (
    answer,
    ask,
    button_check,
    modes,
    named_drugs,
    other_language,
    prompts,
    record_check,
    render,
    small_talk,
    transcript,
)
from docgemma.agent.events import Token
from docgemma.agent.memory import switch_marker, switched
from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.agent.nodes.error_handler import SKIP_ERRORS
from docgemma.agent.patterns import is_short_record_question, negated_write, no_allergy_statement
from docgemma.agent.state import AgentState, ToolResult
from docgemma.agent.trace import NodeTrace
from docgemma.agent.validation import other_patient_named
from docgemma.clinical.ingredients import Resolution, resolve_local
from docgemma.clinical.language import NAMES, detect
from docgemma.clinical.negation import no_allergy_read
from docgemma.clinical.patient import PatientRef
from docgemma.clinical.roster import PatientRoster
from docgemma.llm.base import LLM, LLMError, Message, clinically_meaningful
from docgemma.tools.http import known_offline
from docgemma.tools.registry import ToolRegistry
from docgemma.tools.routing import Role
from docgemma.tools.write_checks import PatientFacts

SHORT_REPLY_TOKENS = 96
CONVERSATION_CAP = 20
NO_TOOL_CHOSEN = (
    "I could not work out what to look up for this request, so I have not answered from "
    "general knowledge. Could you rephrase it, naming the drug, patient or condition?"
)
EMPTY_ANSWER = "I was unable to produce an answer this time. Please rephrase the question or try again."
MODEL_FAILED = "The model failed while writing the answer. Please try again."
#: A demo model's answer after a write: the chat's confirmation above it lists every value written and each change.
#: "below": every front end shows a turn's writes after its answer (issue 46: a search's "Patients found" closed the
#: answer, under the write it had been put above).
WRITE_DONE = "Done: written to the record with the values listed below."
NOTHING_DONE = "Understood: nothing has been done, and nothing was written to the record."
#: The answer to a thanks or goodbye: a closing in the clinician's register, nothing new offered.
CLOSING_REPLY = "You're welcome. This conversation stays here if you need anything else."
#: (answer text, timeline decision). A decision is the clinician's line first ("a thanks or goodbye, acknowledged"),
#: then the engineer's words in a closing parenthetical ("(no model call: answered by code)"): the page's timeline
#: leaves that out of the clinician's view and keeps it in the technical details (``ui/timeline.py``, issue 46).
Answer = tuple[str, str]


def _is_lookup(registry: ToolRegistry, name: str) -> bool:
    """A knowledge lookup (``ToolSpec.lookup``): one of them alone gets the brief answer."""
    return name in registry and registry[name].lookup


def all_failed_answer(errors: list[str], offline: bool = False, lasting: bool = False) -> str:
    """The answer when every tool failed: what could not be retrieved, and no medical content. ``offline``:
    every failure was a service this machine cannot reach, so "try again shortly" would not be true; nor is it
    when every failure is ``lasting`` (no vision, not configured, not in the database: retrying cannot help)."""
    listed = "\n".join(f"- {e}" for e in errors)
    if offline:
        after = (" These services need an internet connection, which this machine does not have now; the patient "
                 "record works without one.")
    else:
        after = "" if lasting else " Please try again shortly."
    return (
        f"I could not retrieve the information needed for this request:\n{listed}\n\n"
        f"I have not answered from general knowledge, because the information could not be checked.{after}"
    )


def _demo_answer(state: AgentState, llm: LLM, registry: ToolRegistry) -> tuple[str, str]:
    """The answer when the model may not write medical text (see the module docstring)."""
    done = [r for r in state.get("tool_results", []) if r["status"] == "success"]
    # A write is confirmed by the chat's own "written to the record" line: not repeated here.
    succeeded = [r for r in done if not registry[r["tool_name"]].writes]
    if done and not succeeded:
        return WRITE_DONE, "write confirmed (no model call)"
    if succeeded:
        declined = [r for r in state.get("tool_results", []) if r["error_type"] == "declined"]
        # A declined write is the clinician's decision, not information that could not be retrieved.
        errors = [e for e in state.get("error_messages", []) if e not in {r["error"] for r in declined}]
        text = render.retrieved_facts(succeeded, errors)
        if declined:
            labels = " and ".join(dict.fromkeys(r["tool_label"] for r in declined))
            text += f"\n\nNothing was written to the record: you declined the {labels}."
        return text, ("what was found, shown as it was returned: this demo writes no medical text of its own (no model "
                      "call: retrieved facts rendered by code; the demo model writes no medical text)")
    mode = modes.mode_of(llm)
    if state.get("undecided"):
        # "The closest actions are below" only when some are (offline, there may be none): the timeline says the same.
        offered = bool(state.get("follow_ups"))
        told = "the closest actions are offered" if offered else "nothing was guessed"
        return (modes.undecided(mode, known_offline(), offered),
                f"not certain what was asked: {told} (no model call: no rule was sure and the demo model was not asked)")
    if state.get("scope") in ("greeting", "off_topic"):
        return (f"{render.DEMO_GREETING} {modes.capabilities(mode, known_offline())}",
                f"{small_talk.GREETED} (no model call: demo model, written by code)")
    if state["extracted_entities"]["has_image"]:
        return modes.no_vision(mode), "image not analysed: this demo reads no images (no model call: demo model, no vision)"
    return (modes.limits(mode, known_offline()),
            "medical question not answered: this demo writes no medical text (no model call: demo model)")


def _follow_ups(state: AgentState, registry: ToolRegistry, roster: PatientRoster | None = None) -> list[str]:
    """An unsure turn's candidate actions as requests (:func:`docgemma.agent.ask.buttons`), else the follow-ups; each
    one the rules decide surely as what it says, since pressing it sends its words (:mod:`docgemma.agent.button_check`)."""
    offline = known_offline()
    asked = ask.buttons(state, registry, offline, roster) if state.get("undecided") else []
    return asked or button_check.leading(answer.suggestions(state, registry, offline=offline), state, registry, roster)


def _record_answer(state: AgentState, registry: ToolRegistry) -> str | None:
    """The one-line answer to a short question about the record ("any allergies?", "her last creatinine?"),
    when one record read answered it and the tool wrote the line, for any model: the facts are the answer. A
    trend, a judgement or a list of details goes to the model (a demo model shows every retrieved line)."""
    results = state.get("tool_results", [])
    if len(results) != 1 or results[0]["status"] != "success" or results[0]["tool_name"] not in registry:
        return None
    if not registry[results[0]["tool_name"]].record:
        return None
    if not is_short_record_question(state["user_query"]):
        return None
    return render.record_line(results[0])


def _checked(text: str, state: AgentState, record_facts: record_check.RecordFacts | None
             ) -> tuple[str, str, list[record_check.Contradiction]]:
    """A model-written answer checked against the active patient's record: contradictions flagged under it."""
    patient = state.get("active_patient")
    if patient is None:
        return text, "", []
    facts = record_facts(patient) if record_facts is not None else None
    returned = [r["formatted_result"] for r in state.get("tool_results", [])]
    asked = other_patient_named(state["extracted_entities"], patient)
    found = record_check.contradictions(text, patient, facts, returned, asked_about=asked)
    revised, warning = record_check.flagged(text, found)
    return revised, warning, found


def _succeeded(state: AgentState) -> list[ToolResult]:
    return [r for r in state.get("tool_results", []) if r["status"] == "success"]


def _clarification(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A clarification question from the deterministic ask_user rules."""
    request = state.get("clarification_request")
    return (str(request), "a question back to you before going on (no model call: asked the clinician)") if request else None


def _nothing_asked(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A message that asks for nothing: an acknowledgement."""
    if state.get("scope", "clinical") == "acknowledgement" and not state.get("tool_results"):
        negated = negated_write(state["user_query"], state["extracted_entities"]["drug_mentions"])
        if negated is not None:
            return negated, "the write asked for is negated: nothing written (no model call)"
        statement = no_allergy_statement(state["user_query"])
        if statement is not None:
            patient = state.get("active_patient")
            return (no_allergy_read(statement.said, statement.substances, statement.drugs,
                                    patient["name"] if patient else None),
                    "a statement that there is no allergy: nothing written, the writes it may mean offered (no model call)")
        if (state.get("route_decision") or {}).get("rule") == "closing":
            return CLOSING_REPLY, "a thanks or goodbye, acknowledged; nothing else was asked (no model call: answered by code)"
        return NOTHING_DONE, "you asked for nothing to be done: nothing done or written (no model call)"
    return None


def _patient_selected(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A patient picked from a list, with nothing else to do."""
    selected = state.get("selected_patient")
    if selected and not state.get("tool_results"):
        return f"{selected['name']} (ID {selected['id']}) is now the active patient.", "patient selected (no model call)"
    return None


def _no_tool_chosen(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A tool-needing turn where no tool could be chosen."""
    if state.get("intent") == "TOOL_NEEDED" and not state.get("tool_results"):
        return NO_TOOL_CHOSEN, ("not certain what to look up: nothing looked up or answered from general knowledge; you are "
                                "asked to rephrase (no model call: no resource chosen)")
    return None


def _declined(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """Every call was a write the clinician declined."""
    results = state.get("tool_results", [])
    if results and not _succeeded(state) and all(r["error_type"] == "declined" for r in results):
        labels = " and ".join(dict.fromkeys(r["tool_label"] for r in results))
        return (f"Nothing was written to the record: you declined the {labels}.",
                "declined by you: nothing written (no model call)")
    return None


def _all_failed(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A tool-needing turn where every tool failed (the model would otherwise answer from memory)."""
    if state.get("intent") != "TOOL_NEEDED" or _succeeded(state):
        return None
    results = state.get("tool_results", [])
    errors = state.get("error_messages") or [str(r["error"]) for r in results]
    offline = all(r["error_type"] == "offline" for r in results)
    lasting = all(r["error_type"] in SKIP_ERRORS for r in results)
    return all_failed_answer(errors, offline, lasting), ("nothing could be retrieved: not answered from general knowledge "
                                                         "(no model call: every resource failed)")


def _record_line(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A short question one record read answered, in the tool's own line."""
    line = _record_answer(state, registry)
    return (line, "the record's entries in one line, as recorded (no model call: written by code)") if line is not None else None


def _not_meaningful(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A model that may not write medical text: the answer is written by code."""
    return None if clinically_meaningful(llm) else _demo_answer(state, llm, registry)


#: The answers written by code, never by the model, in the order they are tried; the first that applies wins.
def _other_language(state: AgentState, llm: LLM, registry: ToolRegistry) -> Answer | None:
    """A message in French, Portuguese, Spanish or Swahili: what this mode understands, in that language."""
    language = detect(state["user_query"])
    if language is None or state.get("tool_results") or state.get("intent") != "DIRECT":
        return None
    name = NAMES[language]
    return (other_language.reply(language, known_offline()),
            f"a message in {name}: answered in {name} with what is understood here (no model call)")


CODE_ANSWERS: tuple[Callable[[AgentState, LLM, ToolRegistry], Answer | None], ...] = (
    _other_language, _clarification, _nothing_asked, _patient_selected, _no_tool_chosen, _declined, _all_failed, _record_line,
    _not_meaningful,
)


def _small_talk(state: AgentState, llm: LLM, registry: ToolRegistry, trace: NodeTrace) -> Answer | None:
    """A greeting on a demo model not fit for medicine: its one friendly line, checked by code, then the
    capabilities by code (:mod:`docgemma.agent.small_talk`); None when the turn is not plainly non-clinical."""
    if not small_talk.applies(state, llm, registry):
        return None
    capabilities = modes.capabilities(modes.mode_of(llm), known_offline())
    return small_talk.reply(state, trace, registry, render.DEMO_GREETING, capabilities)


def _model_answer(state: AgentState, llm: LLM, trace: NodeTrace, registry: ToolRegistry,
                  record_facts: record_check.RecordFacts | None) -> tuple[str, str, list[record_check.Contradiction]]:
    """The model's answer, streamed as it is written and scrubbed of tool names, checked against the record;
    a non-clinical turn ends with what the assistant can do."""
    assert trace.llm is not None
    results, succeeded = state.get("tool_results", []), _succeeded(state)
    scope = state.get("scope", "clinical")
    brief = len(succeeded) == 1 and len(results) == 1 and _is_lookup(registry, succeeded[0]["tool_name"])
    config = NODE_CONFIG["synthesize"]
    max_tokens = SHORT_REPLY_TOKENS if scope != "clinical" else config.max_tokens
    scrubber = answer.Scrubber(registry)
    parts: list[str] = []
    contradicting: list[record_check.Contradiction] = []
    try:
        chunks = trace.llm.generate_text(prompts.synthesis_messages(state, brief),
                                         temperature=config.temperature, max_tokens=max_tokens)
        for piece in answer.scrub_stream(chunks, scrubber):
            parts.append(piece)
            trace.write(Token(piece))
        text = answer.strip_template_debris("".join(parts)).strip() or EMPTY_ANSWER
        decision = "brief answer" if brief else "answer"
        text = render.named_patient(text, [r for r in succeeded if r["tool_name"] in registry
                                           and registry[r["tool_name"]].record])
        revised, warning, contradicting = _checked(text, state, record_facts)
        if contradicting:
            trace.write(Token(warning))
            text, decision = revised + warning, f"{decision}; contradicts the record ({len(contradicting)} flagged)"
    except LLMError:
        text, decision = ("".join(parts).strip() + "\n\n" + MODEL_FAILED).strip(), "model failed"
        contradicting = []
    if scope != "clinical":
        extra = ("\n\n" if text else "") + modes.capabilities(modes.mode_of(llm), known_offline())
        trace.write(Token(extra))
        text += extra
    return text, decision, contradicting


def _notes_prefix(state: AgentState, trace: NodeTrace) -> str:
    """The turn's notes (and a patient switch made during it) written ahead of the answer."""
    notes = list(state.get("input_notes", []))
    before, now = state.get("patient_at_turn_start"), state.get("active_patient")
    if switched(before, now) and before is not None:
        # Said in the conversation, so nobody reads this answer as being about the previous patient.
        notes.append(f"The active patient is now {now['name'] if now else 'none'}; earlier messages about "
                     f"{before['name']} are not used from here on.")
    prefix = "".join(f"*Note: {n}*\n\n" for n in notes)
    if prefix:
        trace.write(Token(prefix))
    return prefix


def _allergens_entered(state: AgentState, registry: ToolRegistry) -> list[Resolution]:
    """The allergens of an allergy this turn records: naming the allergen is not a plan to give it."""
    return [resolve_local(str(r["args"].get("substance", ""))) for r in state.get("tool_results", [])
            if r["tool_name"] in registry and Role.ALLERGY_ENTRY in registry[r["tool_name"]].roles]


def _changed_away(state: AgentState) -> list[Resolution]:
    """The drugs of a proposal the clinician changed before approving ("amoxicillin → azithromycin"): not what was
    written, so no safety line about them under the confirmation of what was (seen in the walkthrough: "Safety:
    amoxicillin, a penicillin — … allergy" under the written azithromycin)."""
    out = []
    for result in state.get("tool_results", []):
        proposed, written = result.get("proposed_args") or {}, result.get("args") or {}
        drug = str(proposed.get("medication_name") or "")
        if result.get("status") == "success" and drug and drug != str(written.get("medication_name") or ""):
            out.append(resolve_local(drug))
    return out


def _without_this_turns_writes(facts: PatientFacts | None, state: AgentState) -> PatientFacts | None:
    """The record's facts less what this turn itself wrote: an order approved a moment ago is the drug named, not an
    active order it duplicates (seen in the browser: "paracetamol duplicates … active order paracetamol (since
    today)" under the very write that created it)."""
    if facts is None:
        return None
    written = {str((r.get("data") or {}).get("resource", "")) for r in state.get("tool_results", [])
               if r.get("status") == "success" and isinstance(r.get("data"), dict)}
    kept = [m for m in facts.medications if f"{m.get('resourceType')}/{m.get('id')}" not in written]
    return replace(facts, medications=kept)


def _safety_first(state: AgentState, registry: ToolRegistry, trace: NodeTrace,
                  record_facts: record_check.RecordFacts | None) -> str:
    """The named-drug safety lines (:mod:`docgemma.agent.named_drugs`), written ahead of everything else."""
    patient = state.get("active_patient")
    mentions = state["extracted_entities"]["drug_mentions"]
    if patient is None or not mentions or record_facts is None:
        return ""
    other = other_patient_named(state["extracted_entities"], patient)
    # "co-amoxiclav for Grace Mensah?" while another patient is open: the drugs are checked against the record of
    # the patient named (found by name, exactly one), never the open one's; not found, the line says so.
    named = PatientRef(id="", name=other) if other else None
    other_facts = record_facts(named) if named else None
    facts = other_facts if named else _without_this_turns_writes(record_facts(patient), state)
    # "why is she on lisinopril?": a connection question is about her own orders (no duplicate of them is said).
    own = any(r["tool_name"] in registry and Role.CONNECTIONS in registry[r["tool_name"]].roles
              for r in state.get("tool_results", []))
    # An order proposed or written this turn is what the lines are about; otherwise they are said of a question.
    ordered = any(r["tool_name"] in registry and Role.MEDICATION_ORDER in registry[r["tool_name"]].roles
                  for r in state.get("tool_results", []))
    lines = named_drugs.safety_lines(state["user_query"], mentions, named or patient, facts,
                                     skip=[*_allergens_entered(state, registry), *_changed_away(state)],
                                     asked_about=other if named and other_facts is None else None, own_orders=own,
                                     question=not ordered)
    text = "\n".join(lines) + "\n\n" if lines else ""
    if text:
        trace.write(Token(text))
    return text


def synthesize(state: AgentState, *, llm: LLM, registry: ToolRegistry,
               record_facts: record_check.RecordFacts | None = None,
               patient_roster: PatientRoster | None = None) -> dict[str, Any]:
    """Write the answer; see the module docstring. ``record_facts`` reads the active patient's allergies and
    active orders, against which a model-written answer is checked."""
    trace = NodeTrace("synthesize", llm)
    safety = _safety_first(state, registry, trace, record_facts)
    prefix = _notes_prefix(state, trace)
    contradicting: list[record_check.Contradiction] = []
    # The buttons first: the answer to an unsure turn says whether there are any.
    follow = _follow_ups(state, registry, patient_roster)
    state = {**state, "follow_ups": follow}
    written = _small_talk(state, llm, registry, trace) or next(
        (found for rule in CODE_ANSWERS if (found := rule(state, llm, registry)) is not None), None)
    if written is not None:
        text, decision = written
        trace.write(Token(text))
    else:
        text, decision, contradicting = _model_answer(state, llm, trace, registry, record_facts)

    final = safety + prefix + text
    active = state.get("active_patient")
    marker = [switch_marker(active)] if switched(state.get("patient_at_turn_start"), active) else []
    conversation = [
        *state.get("conversation", []),
        *marker,
        Message(role="user", content=state["user_query"]),
        Message(role="assistant", content=safety + text),
    ][-CONVERSATION_CAP:]
    event = trace.event(decision, f"{len(text.split())} words")
    confidence, sources = answer.confidence(state, llm, registry), answer.sources(state)
    if contradicting:  # an answer that contradicts the record is never more than low, whatever the evidence
        confidence = "low"
    return {
        "final_response": final,
        "confidence": confidence,
        "sources": sources,
        "follow_ups": follow,
        "conversation": conversation,
        "transcript": transcript.appended(state, transcript.turn_entry(state, registry, final, confidence, sources)),
        "timeline": [event],
    }
