"""The turn's decision, made once (INTENT_CLASSIFY) and carried in the state: the rules and the learned router
together.

A decision is **sure** only when :func:`docgemma.agent.rules.decide` decided and the learned router
(:mod:`docgemma.agent.router_model`) agrees — its most probable label is the rule's intent or first tool. (A
probability threshold chosen on the dev families, 0.76, was required too at first; it left 40 % of the held-out
families and record questions by MRN unsure, and is no longer applied: see docs/decisions.md, "How decisions are made".)
A rule the router does not
back, or the router alone, is **unsure**: a clinically meaningful model decides, shown the candidates; a model
that is not asks the clinician with buttons (:mod:`docgemma.agent.ask`). One exception: the clinician's pick from a
list of patients the assistant itself offered continues the request that needed it, as the rule says (the router
reads the request, not the pick); a tool added after the router was trained is decided by its rule (the router
has no label for it until it is retrained); and a rule that withholds an action or fails safe stands
(:data:`FAIL_SAFE_RULES`), as does a form no reading can mistake that ends at a card or one record item
(:data:`EXPLICIT_RULES`), and a message that is only a greeting or asks what the assistant can do (no action).

``bench/bench_router.py`` measures coverage and precision of sure decisions on template families held out from
the router's training, and on the held-out phrasing sets.
"""

from __future__ import annotations

import re
from typing import NotRequired, TypedDict

from docgemma.agent import rules
from docgemma.agent.button_fill import possible_family_name, possible_name, record_owner
from docgemma.agent.patterns import remaining_tools
from docgemma.agent.router_model import RouterModel, shipped
from docgemma.agent.rules import RuleDecision
from docgemma.agent.state import AgentState
from docgemma.agent.validation import other_patient_named
from docgemma.clinical.drug_spelling import unread_drugs
from docgemma.clinical.entities import DRUG_ALIASES, malformed_patient_ids
from docgemma.clinical.request_spelling import respelt, slipped_words
from docgemma.tools.registry import ToolRegistry
from docgemma.tools.routing import Role

DIRECT = "DIRECT"
#: Rule decisions that withhold an action or fail safe ("don't prescribe yet", "NOT allergic to latex, record
#: that", "sulfa - negative" with no write asked, an id that cannot be a patient's): they stand whatever the router
#: reads, because a veto would turn a refusal into an offer to act (its buttons) on a message that asked for nothing,
#: or for nothing to be written (a statement of no allergy offers only the writes code reads it may mean).
#: A message in another language is told, in it, what this mode understands: no action either, and no model call
#: (the router was trained on English only).
FAIL_SAFE_RULES = frozenset({"negated_write", "no_allergy_statement", "nothing_to_do", "patient_id", "other_language",
                             "closing"})
#: Rules on a form no reading can mistake, that end in the clinician's approval: a dictated note ("Note: …",
#: "Document: …") is the note's card, whatever words the note holds (the router read "aims of care … for health"
#: as a trials search); a question about one record item named by its id ("what came out of the falls visit <id>?").
EXPLICIT_RULES = frozenset({"dictated_note", "record_item"})


class RouteDecision(TypedDict):
    """What INTENT_CLASSIFY decided, carried in the state so that TOOL_SELECT reads it instead of deciding again.

    ``label``: the rule's action ("DIRECT" or the first tool) or None; ``candidates``: the router's most probable
    labels, [label, probability] pairs, best first."""

    sure: bool
    label: str | None
    intent: str | None
    tool: str | None
    reason: str
    rule: str
    scope: str
    probability: float
    candidates: list[list[str | float]]
    #: When a rule read an action but the message left something over (its accounting): the action it read and
    #: what was left over, for the timeline ("a trials search … left over: Nairobi (place)"); absent otherwise.
    read: NotRequired[str]
    left_over: NotRequired[str]
    #: Why a sure rule stood without the classifier's top label, for the timeline's words ("picked": the clinician
    #: picked a patient from the list offered; "plan": the classifier backs what follows the patient search;
    #: "untrained": a resource the classifier was not trained on; "" otherwise). Issue 46: "the clinician picked
    #: from the list offered" was said of every such turn, a typed name included.
    alone: NotRequired[str]


def context_flags(state: AgentState) -> list[str]:
    """What the router reads besides the words: a patient active, an image attached, a patient named or given by
    id, and whether the message names one drug or several (the state says it; the words alone cannot)."""
    entities = state["extracted_entities"]
    flags = ["active"] if state.get("active_patient") else []
    flags += ["image"] if entities["has_image"] else []
    flags += ["named"] if entities["patient_names"] else []
    active = state.get("active_patient")
    # A patient named who is not the active one: found first, whatever the question about them.
    flags += ["other_patient"] if active and other_patient_named(entities, active) else []
    flags += ["patient_id"] if entities["patient_ids"] else []
    drugs = len(entities["drug_mentions"])
    flags += ["drugs2"] if drugs >= 2 else ["drug1"] if drugs == 1 else []
    return flags


_DIGITS_RE = re.compile(r"\d+(?:[.,]\d+)?")


def masked(state: AgentState) -> str:
    """The message with what varies from turn to turn put in a placeholder: each drug it names (and the words
    the drug dictionary aliases), each patient named or given by id, each number. The router learns the shape of
    a request, not the fillers its training turns happened to hold."""
    entities = state["extracted_entities"]
    text = state.get("user_query", "")
    fills = [(name, " zpatient ") for name in entities["patient_names"]]
    # Each word of a name too: "Okafor, Amina" is the roster's Amina Okafor written surname first.
    fills += [(word, " zpatient ") for name in entities["patient_names"] for word in name.split() if len(word) > 1]
    fills += [(alias, " zid ") for alias in (entities.get("patient_aliases") or {})]
    fills += [(pid, " zid ") for pid in entities["patient_ids"]]
    drugs = set(entities["drug_mentions"])
    fills += [(alias, " zdrug ") for alias, drug in DRUG_ALIASES.items() if drug in drugs]
    fills += [(drug, " zdrug ") for drug in drugs]
    for value, placeholder in sorted(fills, key=lambda f: -len(f[0])):
        text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", placeholder, text, flags=re.IGNORECASE)
    return _DIGITS_RE.sub("0", text)


def _explores(tool: str | None, registry: ToolRegistry) -> bool:
    """The tool explores the record from one item (the connections role)."""
    return tool is not None and tool in registry and Role.CONNECTIONS in registry[tool].roles


#: A relative of the patient named in the message ("her son", "mother has …"): what they have is not the patient's.
RELATIVE_RE = re.compile(r"\b(?:son|daughter|mother|mum|mom|father|dad|brother|sister|wife|husband|partner|grand"
                          r"(?:mother|father|son|daughter|ma|pa)|aunt|uncle|cousin|sibling|twin|family\s+member)s?\b",
                          re.IGNORECASE)


#: A parent or carer who tells what happened to the patient (a child), not whose reaction it was: "mum reports hives
#: with aspirin", "per mum he gets a rash with amoxicillin". A spouse is not read so ("his wife says she is allergic"
#: is the wife's), and a relative in the rest of the message is still one ("mum reports her brother gets a rash").
_REPORTER_RE = re.compile(r"\b(?:(?:her|his|their|the)\s+)?(?:mum|mom|mother|dad|father|parents?|carer|guardian)\s+"
                          r"(?:reports?|reported|says|said|states|stated|tells\s+(?:me|us)|told\s+(?:me|us)|mentions?|"
                          r"mentioned|describes?|described|noticed)\b|\b(?:per|according\s+to)\s+(?:her|his|their|the)?\s*"
                          r"(?:mum|mom|mother|dad|father|parents?|carer|guardian)\b", re.IGNORECASE)


def relative_reaction(query: str) -> bool:
    """True when a relative stands in ``query`` other than as the one who reports the patient's reaction."""
    return RELATIVE_RE.search(_REPORTER_RE.sub(" ", query)) is not None


def label_of(decision: RuleDecision | None) -> str | None:
    """The rule's action as the router's label: the first tool, "DIRECT", or None when no rule decided."""
    if decision is None:
        return None
    return decision.tool or DIRECT


def decide(state: AgentState, registry: ToolRegistry, model: RouterModel | None = None) -> RouteDecision:
    """The turn's decision: the rule's, sure when the router backs it (see the module docstring)."""
    router = model or shipped()
    ruled = rules.decide(state, registry)
    ranked = router.ranked(masked(state), context_flags(state), k=len(router.labels))
    top, probability = ranked[0]
    label = label_of(ruled)
    picked = bool(state.get("selected_patient")) and ruled is not None
    # A tool added after the router was trained is one it cannot judge: its rule decides (retrain to check it).
    unknown = label is not None and label not in router.labels
    # An id that cannot be a patient's ("patient ../../etc/passwd") is answered "no patient with id …" by the tool
    # the rule chose: a safe failure, whatever the router reads.
    malformed = bool(malformed_patient_ids(state.get("user_query", "")))
    # A connection question that gives the item's id ("what came out of the falls visit <id>?") names its start.
    item = ruled is not None and _explores(ruled.tool, registry) and bool(state["extracted_entities"]["patient_ids"])
    # A greeting of a few words and nothing else ("cheers", "hey there") asks for no action: answered as one whatever
    # the router reads (a retrained router read "cheers" with a patient active as a record question).
    greeting = ruled is not None and ((ruled.rule == "greeting" and _only_greeting(state.get("user_query", "")))
                                      or ruled.rule == "capabilities")  # "help", "what can you do?": the whole message
    safe = ruled is not None and (ruled.rule in FAIL_SAFE_RULES | EXPLICIT_RULES or malformed or item or greeting)
    # Sure when the router's most probable action is the rule's (no probability threshold: see the docstring).
    # "put codeine on Grace Mensah's allergy list": the rules find the patient named first and then do what was asked;
    # the router, trained on what was asked, backs the plan when its action is the one that follows the search.
    # What the plan does after the patient search, read once (the tool signals are the decision's costliest step).
    after_search = remaining_tools(state, registry)[1:] if ruled is not None and ruled.rule == "patient_name" else []
    then = ruled is not None and top != label and top in after_search
    sure = ruled is not None and (picked or unknown or safe or top == label or then)
    entities = state["extracted_entities"]
    # A closing is the whole message by its own pattern ("cheers, bye" is no patient "Cheers Bye").
    if sure and not picked and not (ruled is not None and ruled.rule == "closing"):
        sure = not _unread_patient(state)
    # A drug the dictionary did not read, spelt one slip away ("the drug is donnepezil"): the rules decided without
    # it (a label question read as a general one), so the message is not accounted for (asked, never guessed).
    # A note is written as the clinician typed it, slips and all (the card shows it): a misspelt drug in it is text.
    noted = [t for t in (after_search or ([label] if label else [])) if t in registry]
    writes_note = bool(noted) and all(Role.NOTE_ENTRY in registry[t].roles for t in noted)
    if sure and not picked and not safe and not writes_note:
        # The dictionary's fuzzy search (milliseconds the first time a word is seen) only where a general answer is
        # decided: a look-up's drugs are read by the dose table's one-slip reading, which costs nothing.
        sure = not misspelt_drugs(state.get("user_query", ""), entities["drug_mentions"], suggest=label == DIRECT)
    # "anallyse the derm photo": a request word spelt one slip away in what was decided as a general question (the
    # rules did not read the request); asked, with the word respelt in the buttons (``ask``).
    if sure and not picked and not safe:
        sure = _reads_the_same_respelt(state, registry, label)
    # "her son is allergic to penicillin, get that documented": a relative's allergy is not the patient's; asked.
    if sure and not picked and ruled is not None and ruled.tool is not None and ruled.tool in registry \
            and Role.ALLERGY_ENTRY in registry[ruled.tool].roles:
        sure = RELATIVE_RE.search(state.get("user_query", "")) is None
    # "open samuel kariuki's reord": the patient is found and nothing would follow, though a request word was written
    # one slip away; asked, with the action respelt in the buttons.
    if sure and not picked and ruled is not None and ruled.rule == "patient_name" and not after_search:
        sure = not slipped_words(state.get("user_query", ""))
    out = RouteDecision(
        sure=sure, label=label, intent=ruled.intent if ruled else None, tool=ruled.tool if ruled else None,
        reason=ruled.reason if ruled else "", rule=ruled.rule if ruled else "",
        scope=ruled.scope if ruled else "clinical", probability=round(probability, 4),
        candidates=[[name, round(p, 4)] for name, p in ranked],
        alone="picked" if picked else "untrained" if unknown else "plan" if then else "",
    )
    return out if ruled is not None else {**out, **_left_over(state, registry)}  # type: ignore[typeddict-item]


def _reads_the_same_respelt(state: AgentState, registry: ToolRegistry, label: str | None) -> bool:
    """A request word written one slip away ("find trails for gout", "anallyse the derm photo") is part of the
    message the rules did not read: the decision stands only when the message, respelt, is decided the same way."""
    query = state.get("user_query", "")
    if not slipped_words(query):
        return True
    return label_of(rules.decide({**state, "user_query": respelt(query)}, registry)) == label


def _unread_patient(state: AgentState) -> bool:
    """The message may name a patient the patterns and the roster did not read: the rules would answer for the
    active patient, so the clinician is asked (fail safe)."""
    query, entities, active = state.get("user_query", ""), state["extracted_entities"], state.get("active_patient")
    # A name in lower case ("what's mei chen's latest bp?"), or a family name alone where only a patient can stand
    # ("is nwosu allergic to anything?").
    if not (entities["patient_names"] or entities["patient_ids"]) and (
            possible_name(query) is not None or possible_family_name(query, active) is not None):
        return True
    # "Document in Banda's record: …": a family name the roster did not read, and not the active patient's.
    return not entities["patient_names"] and record_owner(query, active) is not None


#: The words of a greeting that asks for nothing ("cheers", "hey there", "ok thanks", "good morning all").
_GREETING_WORDS = frozenset({"hi", "hello", "hey", "good", "morning", "afternoon", "evening", "thanks", "thank", "you",
                             "thx", "cheers", "bye", "goodbye", "there", "all", "team", "everyone", "doc", "ok", "okay",
                             "great", "so", "much", "very", "again", "that's", "helpful", "a", "lot"})


def misspelt_drugs(query: str, read: list[str], suggest: bool = True) -> list[str]:
    """The drugs the message names one slip away that the entities did not read (each as its right name;
    ``suggest``: also by the dictionary's fuzzy search, see ``clinical/drug_spelling.py``)."""
    lowered = [d.lower() for d in read]
    return [name for _written, name in unread_drugs(query, suggest=suggest)
            if not any(name in d or d in name for d in lowered)]


def _only_greeting(query: str) -> bool:
    """True when every word of the message is a greeting's (no name, no request)."""
    words = re.findall(r"[a-z']+", query.lower())
    return 0 < len(words) <= 4 and all(w in _GREETING_WORDS for w in words)


def _left_over(state: AgentState, registry: ToolRegistry) -> dict[str, str]:
    """What a rule read before the whole message was accounted for, and what the message left over (the reason it
    did not decide); empty when no rule read an action."""
    before = rules.accounted(state, registry)
    if before is None or before[1].sure:
        return {}
    items = [f"{i.text} ({i.kind})" for i in before[1].left_over]
    return {"read": str(before[0].tool), "left_over": ", ".join(dict.fromkeys(items))}


#: How sure the router must be of another action than an unsure rule's reading to be offered before it: chosen on
#: the dev families (route + tool right counting the first candidate: 95.3 % with the rule always first, 97.7 % at
#: 0.95; the generated test families 98.5 % either way).
ROUTER_FIRST = 0.95


def candidate_labels(decision: RouteDecision, k: int = 3, floor: float = 0.0) -> list[str]:
    """Up to ``k`` actions an unsure turn may mean: the rule's first (it read the message's explicit signals), unless
    the router is all but certain of another (:data:`ROUTER_FIRST`), then the router's, best first (those with a
    probability of at least ``floor``)."""
    names = [decision["label"]] if decision["label"] else []
    names += [str(name) for name, p in decision["candidates"] if float(p) >= floor]
    top, probability = decision["candidates"][0] if decision["candidates"] else (None, 0.0)
    if not decision["sure"] and top is not None and float(probability) >= ROUTER_FIRST:
        names.insert(0, str(top))
    return list(dict.fromkeys(names))[:k]


def _words(label: str | None, registry: ToolRegistry) -> str:
    if label is None:
        return "nothing"
    return "a general answer" if label == DIRECT else registry.label(label)


def _rule_alone(decision: RouteDecision, registry: ToolRegistry) -> str:
    """Why a rule decided without the router's agreement."""
    if decision["rule"] in EXPLICIT_RULES or _explores(decision["tool"], registry):
        return "decided by rule: the request names exactly what it needs (a dictated note, or a record item by its id)"
    if decision["rule"] in FAIL_SAFE_RULES:
        return "decided by rule: nothing is done or written on this request, or an id that is no patient's is said"
    alone = decision.get("alone", "")
    if alone == "picked":
        return "decided by rule: the clinician picked a patient from the list offered"
    if alone == "plan":
        return "decided by rule: the patient is found first, then what was asked"
    if alone == "untrained":
        return "decided by rule (a resource the classifier was not trained on)"
    return "decided by rule: a form no reading mistakes (a greeting, an id that is no patient's, an item by its id)"


def describe(decision: RouteDecision, registry: ToolRegistry) -> str:
    """The timeline's words for the decision, in clinical words (the resources' labels, never tool names)."""
    top, p = decision["candidates"][0]
    if decision["sure"]:
        head = f"decided by rule and classifier (p={float(p):.2f})"
        if top != decision["label"]:
            head = _rule_alone(decision, registry)
        reason = decision["reason"]
        for name in registry.names:  # the rule's reason names tools; the timeline says what they are
            reason = reason.replace(name, registry.label(name))
        # "to decide": this node made none; the answer may still call the model (a greeting's friendly line), and
        # "a greeting (no model call)" above "1 model call" read as untrue (issue 46).
        return f"{head}: {reason} (no model call to decide)"
    router = f"classifier said {_words(str(top), registry)} (p={float(p):.2f})"
    if decision["label"] is None and decision.get("left_over"):
        # Why the rule that read an action did not decide: what of the message its action would not use.
        return (f"unsure: a rule read {_words(decision.get('read'), registry)}, but left over: "
                f"{decision['left_over']}; {router}")
    if decision["label"] is None:
        return f"unsure: no rule decided; {router}"
    return f"unsure: rule said {_words(decision['label'], registry)}, {router}"
