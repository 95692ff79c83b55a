"""Pure helpers of the answer: internal-name scrubbing, template-debris stripping, confidence, sources,
follow-up suggestions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from docgemma.agent.button_fill import is_class_name
from docgemma.agent.patterns import no_allergy_statement
from docgemma.agent.state import AgentState, Confidence, ToolResult
from docgemma.agent.validation import other_patient_named
from docgemma.llm.base import clinically_meaningful
from docgemma.tools.outcome import Source
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role, TurnFacts

CAPABILITIES = (
    "I can help with: FDA drug safety warnings and drug interactions, medical literature, clinical "
    "trials, the patient record (search, chart review, and — with your approval — notes, allergies and "
    "prescriptions), and analysis of an attached medical image."
)
TOPIC_SUGGESTIONS = (
    "What are the FDA boxed warnings for dofetilide?",
    "Check interactions between warfarin and aspirin",
    "Find recruiting clinical trials for heart failure",
)
#: A next question, and the tool it is for (the one pressing it must run).
Suggestion = tuple[str, str]
#: The role of the tool each of :data:`TOPIC_SUGGESTIONS` is for (a tool's name is spelled only in its own module).
_TOPIC_ROLES = (Role.DRUG_SAFETY, Role.INTERACTIONS, Role.TRIALS)
#: Internal vocabulary that must never reach the clinician (besides tool names, added per registry).
INTERNAL_TERMS = ("TOOL_NEEDED", "success_rich", "success_partial", "no_results", "error_retryable",
                  "error_fatal", "retry_same", "retry_different_args")


class Scrubber:
    """Replaces tool names with clinical labels and drops internal terms, on a token stream.

    Text is released up to the last whitespace, so a name split across chunks is still caught.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        labels = {spec.name: spec.label for spec in registry}
        self._labels = labels
        names = sorted([*labels, *INTERNAL_TERMS], key=len, reverse=True)
        self._pattern = re.compile(r"\[?`?\b(" + "|".join(map(re.escape, names)) + r")\b`?\]?")
        self._pending = ""

    def _clean(self, text: str) -> str:
        return self._pattern.sub(lambda m: self._labels.get(m.group(1), ""), text)

    def feed(self, chunk: str) -> str:
        """Add a chunk; return the text that is safe to show now."""
        self._pending += chunk
        cut = max(self._pending.rfind(" "), self._pending.rfind("\n"))
        if cut < 0:
            return ""
        ready, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
        return self._clean(ready)

    def flush(self) -> str:
        """The rest of the text."""
        rest, self._pending = self._pending, ""
        return self._clean(rest)

    def clean(self, text: str) -> str:
        """Scrub a whole text at once."""
        return self._clean(text)


def scrub_stream(chunks: Iterable[str], scrubber: Scrubber) -> Iterator[str]:
    """Scrub a stream of chunks."""
    for chunk in chunks:
        ready = scrubber.feed(chunk)
        if ready:
            yield ready
    rest = scrubber.flush()
    if rest:
        yield rest


# Prompt-template echoes small models copy into their text: placeholders ({{ … }}, {% … %}, also left
# unclosed to the end of the line), chat-template tokens (<|im_end|>, <end_of_turn>, also HTML-escaped as
# the page holds them) and the prompt's own section labels at the start of a line ("Clinician's answer:").
_DEBRIS = (
    r"\{{\{{[^}}\n]{{0,80}}?(?:\}}\}}|{end})|\{{%[^%\n]{{0,80}}?(?:%\}}|{end})|\}}\}}"
    r"|(?:<|&lt;)\|[^|\n]{{1,40}}\|(?:>|&gt;)|(?:<|&lt;)/?(?:start|end)_of_turn(?:>|&gt;)"
    r"|^[ \t]*(?:\*\*)?(?:clinician's (?:answer|question|response)|clinical context|information retrieved"
    r"|information that could not be retrieved|user query|assistant|answer)(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*"
)
_FLAGS = re.IGNORECASE | re.MULTILINE
_DEBRIS_FINAL = re.compile(_DEBRIS.format(end="$"), _FLAGS)
# While streaming, an unclosed placeholder at the very end may still be growing: wait for its line to end.
_DEBRIS_STREAM = re.compile(_DEBRIS.format(end="(?=\n)"), _FLAGS)


def strip_template_debris(text: str, *, streaming: bool = False) -> str:
    """``text`` without prompt-template echoes (see ``_DEBRIS``). Whitespace around it is kept, so the
    function can run on a growing streamed text (``streaming=True``: an unclosed placeholder at the end is
    kept until its line ends); callers strip the final answer."""
    return (_DEBRIS_STREAM if streaming else _DEBRIS_FINAL).sub("", text)


def confidence(state: AgentState, llm: Any = None, registry: ToolRegistry | None = None) -> Confidence | None:
    """How well the evidence of the turn supports its answer, by rule (no model call).

    * ``None`` for greetings, off-topic turns and acknowledgements: nothing clinical was claimed; likewise for
      a turn whose only call was a write the clinician declined. A declined write is left out of the evidence
      otherwise: the rest of the turn (the patient search before it) is judged as if it had not been asked.
    * ``low``: a question back to the clinician; a tool-needing turn with no successful tool call; the last
      tool call failed or found nothing; errors on two or more calls; or an answer from model knowledge
      alone (no tool) by a model flagged not clinically meaningful (:func:`clinically_meaningful`).
    * ``high`` for facts from the patient record (``registry`` says which tools read or write it): every call
      succeeded at the first attempt and found something — an exact patient match, a chart read, a write the
      record confirmed — or read that the record holds nothing of a kind ("no active allergies on record").
      The record is the evidence itself; no model judged it, so the model's standing does not lower it.
    * ``high``: every tool call succeeded at the first attempt (no errors, no retries), each result was
      judged complete (``success_rich``), the evidence is cited (at least one source) or read from the
      patient record (a successful call without citations), and a clinically meaningful model wrote it.
    * ``medium``: everything between — evidence with a retry, one error along the way, a partial result;
      or an answer from a clinically meaningful model's general knowledge (nothing checked against a source).
    """
    if state.get("scope") in ("greeting", "off_topic", "acknowledgement"):
        return None
    meaningful = llm is None or clinically_meaningful(llm)
    if state.get("clarification_request"):
        return "low"
    results, qualities, errors = _without_declined(state)
    succeeded = [r for r in results if r["status"] == "success"]
    failed = len(results) - len(succeeded)
    if not results:
        if len(results) < len(state.get("tool_results", [])):
            return None  # only a write the clinician declined: nothing was claimed or retrieved
        if state.get("intent") == "TOOL_NEEDED" or errors:
            return "low"
        return "medium" if meaningful else "low"
    last = qualities[-1] if qualities else ("success_partial" if results[-1]["status"] == "success" else "error")
    # "Nothing on record" from a read of the patient's own record is a fact of the record ("no active
    # allergies"), not a look-up that found nothing: a patient search or a knowledge tool with no match is.
    found_nothing = last == "no_results" and not (registry is not None and _reads_record(registry, results[-1]))
    if not succeeded or found_nothing or last.startswith("error") or failed >= 2:
        return "low"
    clean = failed == 0 and not errors and not state.get("total_retries")
    if registry is not None and clean and all(r["tool_name"] in registry and registry[r["tool_name"]].record
                                              for r in results):
        return "high"
    cited = any(r["sources"] for r in succeeded)
    from_record = any(not r["sources"] for r in succeeded)
    rich = bool(qualities) and all(q == "success_rich" for q in qualities)
    return "high" if meaningful and clean and rich and (cited or from_record) else "medium"


def _without_declined(state: AgentState) -> tuple[list[ToolResult], list[str], list[str]]:
    """The turn's results, their classes and its error messages without the writes the clinician declined: a
    decline is their decision, not a failed look-up, so it neither lowers nor raises the evidence."""
    results = state.get("tool_results", [])
    qualities = state.get("qualities", [])
    declined = [r for r in results if r.get("error_type") == "declined"]
    errors = [e for e in state.get("error_messages", []) if e not in {r.get("error") for r in declined}]
    if not declined:
        return results, qualities, errors
    aligned = len(qualities) == len(results)  # one class per call; otherwise the classes are kept as they are
    kept = [(r, q) for r, q in zip(results, qualities if aligned else [""] * len(results), strict=True)
            if r.get("error_type") != "declined"]
    return [r for r, _ in kept], [q for _, q in kept] if aligned else qualities, errors


def _reads_record(registry: ToolRegistry, result: ToolResult) -> bool:
    """A successful read of one patient's record (not a search for patients, not a write)."""
    if result["tool_name"] not in registry:
        return False
    spec = registry[result["tool_name"]]
    return spec.record and not spec.patient_search and not spec.writes and result["status"] == "success"


def sources(state: AgentState) -> list[Source]:
    """Citations of the successful tool calls, without duplicates."""
    seen: set[str] = set()
    out: list[Source] = []
    for result in state.get("tool_results", []):
        if result["status"] != "success":
            continue
        for source in result["sources"]:
            key = source.get("url") or source.get("title")
            if key and key not in seen:
                seen.add(key)
                out.append(source)
    return out


def follow_ups(state: AgentState, registry: ToolRegistry, offline: bool = False) -> list[str]:
    """Up to three next questions, by rule (no model call): :func:`suggestions`' requests, unchecked (the synthesize
    node offers only those the rules decide surely: :mod:`docgemma.agent.button_check`)."""
    return [text for text, _tool in suggestions(state, registry, offline)][:3]


def suggestions(state: AgentState, registry: ToolRegistry, offline: bool = False) -> list[Suggestion]:
    """The next questions, each with the tool it is for, by rule (no model call): each tool the turn did not try
    suggests its own (``ToolSpec.follow_up``) from the turn's drugs and patient, the patient record's first. Never
    the question just asked, nor the look-up the turn already tried (even when it failed). ``offline``: the knowledge
    services cannot be reached from here (:func:`docgemma.tools.http.known_offline`), so only the patient
    record's tools are offered. The open "studies on this topic" comes only after a turn that did not fail:
    after a wrong patient id it has nothing to do with what happened."""
    asked = _normalised(state.get("user_query", ""))
    if (state.get("route_decision") or {}).get("rule") == "closing":
        return []  # "thanks, that's all": nothing new is offered
    if (state.get("route_decision") or {}).get("rule") == "no_allergy_statement":
        return no_allergy_offers(state, registry)
    if state.get("scope") in ("greeting", "off_topic"):
        return [q for q in _topics(registry, offline) if _normalised(q[0]) != asked]
    if state.get("undecided"):
        return closest_actions(state, registry, offline)
    tried = {r["tool_name"] for r in state.get("tool_results", [])}
    patient, named = suggested_patient(state)
    facts = TurnFacts(
        drugs=_single_drugs(state["extracted_entities"]["drug_mentions"]),
        patient_name=patient,
        tried_roles=frozenset(role for name in tried if name in registry for role in registry[name].roles),
    )
    search = _search_tool(registry)
    out: list[Suggestion] = [(f"Find patient {named}", search)] if named and search else []
    for spec in _offered(registry, offline):
        if spec.follow_up and spec.name not in tried:
            out += [(text, spec.name) for text in spec.follow_up(facts)]
    failed = any(r["status"] != "success" and r.get("error_type") != "declined"
                 for r in state.get("tool_results", []))
    literature = next((s.name for s in registry if Role.LITERATURE in s.roles), None)
    if not out and not offline and not failed and literature:
        out.append(("Find recent studies on this topic", literature))
    return [q for q in out if _normalised(q[0]) != asked]


def no_allergy_offers(state: AgentState, registry: ToolRegistry) -> list[Suggestion]:
    """The writes a message that only says there is no allergy may mean ("sulfa - negative"), for the active patient:
    the coded "no known drug allergy" entry (a drug or class named, or none), and the removal of the label of each
    substance named (its card asks for the reason, never guessed). None without an active patient."""
    statement = no_allergy_statement(state.get("user_query", ""))
    add, remove = registry.first(Role.ALLERGY_ENTRY), registry.first(Role.ALLERGY_REMOVAL)
    if statement is None or state.get("active_patient") is None:
        return []
    out: list[Suggestion] = [("Record NKDA for this patient", add.name)] if statement.drugs and add else []
    if remove is not None:
        out += [(f"Remove the {substance} allergy label for this patient", remove.name)
                for substance in statement.substances]
    return out


def _search_tool(registry: ToolRegistry) -> str | None:
    return next((s.name for s in registry if s.patient_search), None)


def _single_drugs(drugs: Iterable[str]) -> tuple[str, ...]:
    """The drugs a follow-up may name: one drug each, never a class (issue 46: "What are the FDA safety warnings for
    anti-bacterial agents?", pressed, ran nothing)."""
    return tuple(d for d in drugs if not is_class_name(d))


def suggested_patient(state: AgentState) -> tuple[str | None, str | None]:
    """(the patient a suggestion may name, a patient the message named whom the turn did not find). The active
    patient, unless the message names another by name or id and the turn ended without switching to them: then no
    button is for the active patient (the clinician asked about someone else), and the one named is offered."""
    patient = state.get("active_patient")
    if patient is None:
        return None, None
    entities = state["extracted_entities"]
    named = other_patient_named(entities, patient)
    # An id counts when the record's roster knows it as a patient's (an id may be a record item's: "what's the
    # apixaban (<id>) for?" is about the active patient).
    patients = set((entities.get("patient_aliases") or {}).values())
    if named or any(i != patient["id"] and i in patients for i in entities["patient_ids"]):
        return None, named
    return patient["name"], None


def closest_actions(state: AgentState, registry: ToolRegistry, offline: bool = False) -> list[Suggestion]:
    """Requests the rules act on, nearest to what the message named (a patient's name, its drugs, the active
    patient), for a turn no rule was sure of; the example requests when it named nothing (offline: only what the
    patient record can answer)."""
    entities = state["extracted_entities"]
    facts = TurnFacts(drugs=_single_drugs(entities["drug_mentions"]), patient_name=suggested_patient(state)[0],
                      tried_roles=frozenset())
    search = _search_tool(registry)
    out: list[Suggestion] = [(f"Find patient {name}", search) for name in entities["patient_names"][:1] if search]
    for spec in _offered(registry, offline):
        if spec.follow_up:
            out += [(text, spec.name) for text in spec.follow_up(facts)]
    asked = _normalised(state.get("user_query", ""))
    unique = dict.fromkeys(q for q in [*out, *_topics(registry, offline)] if _normalised(q[0]) != asked)
    return list(unique)


def _offered(registry: ToolRegistry, offline: bool) -> list[ToolSpec]:
    """The tools whose follow-ups may be offered, the record's first (then in registry order); offline, only
    the record's (every other tool asks a public service)."""
    return [s for s in sorted(registry, key=lambda s: not s.record) if s.record or not offline]


def _topics(registry: ToolRegistry, offline: bool) -> tuple[Suggestion, ...]:
    """The example requests for a turn that named nothing: each asks a knowledge service, so none offline (nor one
    whose tool this registry lacks)."""
    if offline:
        return ()
    tools = (registry.first(role) for role in _TOPIC_ROLES)
    return tuple((text, spec.name) for text, spec in zip(TOPIC_SUGGESTIONS, tools, strict=True) if spec)


def _normalised(question: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", question.lower()).split())
