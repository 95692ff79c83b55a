"""The turn's decision, made once (INTENT_CLASSIFY) and carried in the state: the rules and the learned router
together.

A decision is **sure** only when :func:`docgemma.agent.rules.decide` decided and the learned router
(:mod:`docgemma.agent.router_model`) agrees — its most probable label is the rule's intent or first tool, with a
probability at least the router's threshold (chosen on held-apart template families). A rule the router does not
back, or the router alone, is **unsure**: a clinically meaningful model decides, shown the candidates; a model
that is not asks the clinician with buttons (:mod:`docgemma.agent.ask`). One exception: the clinician's pick from a
list of patients the assistant itself offered continues the request that needed it, as the rule says (the router
reads the request, not the pick).

``bench/bench_router.py`` measures coverage and precision of sure decisions on template families held out from
the router's training, and on the held-out phrasing sets.
"""

from __future__ import annotations

import re
from typing import TypedDict

from docgemma.agent import rules
from docgemma.agent.router_model import RouterModel, shipped
from docgemma.agent.rules import RuleDecision
from docgemma.agent.state import AgentState
from docgemma.clinical.entities import DRUG_ALIASES
from docgemma.tools.registry import ToolRegistry

DIRECT = "DIRECT"


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


def context_flags(state: AgentState) -> list[str]:
    """What the router reads besides the words: a patient active, an image attached, a patient named or given by
    id, and whether the message names one drug or several (the state says it; the words alone cannot)."""
    entities = state["extracted_entities"]
    flags = ["active"] if state.get("active_patient") else []
    flags += ["image"] if entities["has_image"] else []
    flags += ["named"] if entities["patient_names"] else []
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
    fills += [(alias, " zpatient ") for alias in (entities.get("patient_aliases") or {})]
    fills += [(pid, " zid ") for pid in entities["patient_ids"]]
    drugs = set(entities["drug_mentions"])
    fills += [(alias, " zdrug ") for alias, drug in DRUG_ALIASES.items() if drug in drugs]
    fills += [(drug, " zdrug ") for drug in drugs]
    for value, placeholder in sorted(fills, key=lambda f: -len(f[0])):
        text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", placeholder, text, flags=re.IGNORECASE)
    return _DIGITS_RE.sub("0", text)


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
    sure = ruled is not None and (picked or (top == label and probability >= router.threshold))
    return RouteDecision(
        sure=sure, label=label, intent=ruled.intent if ruled else None, tool=ruled.tool if ruled else None,
        reason=ruled.reason if ruled else "", rule=ruled.rule if ruled else "",
        scope=ruled.scope if ruled else "clinical", probability=round(probability, 4),
        candidates=[[name, round(p, 4)] for name, p in ranked],
    )


def candidate_labels(decision: RouteDecision, k: int = 3) -> list[str]:
    """Up to ``k`` actions an unsure turn may mean: the rule's first (it read the message's explicit signals),
    then the router's, best first."""
    names = [decision["label"]] if decision["label"] else []
    names += [str(name) for name, _p in decision["candidates"]]
    return list(dict.fromkeys(names))[:k]


def _words(label: str | None, registry: ToolRegistry) -> str:
    if label is None:
        return "nothing"
    return "a general answer" if label == DIRECT else registry.label(label)


def describe(decision: RouteDecision, registry: ToolRegistry) -> str:
    """The timeline's words for the decision, in clinical words (the resources' labels, never tool names)."""
    top, p = decision["candidates"][0]
    if decision["sure"]:
        head = f"decided by rule and classifier (p={float(p):.2f})"
        if decision["rule"] == "patient_picked" or top != decision["label"]:
            head = "decided by rule: the clinician picked from the list offered"
        return f"{head}: {decision['reason']} (no model call)"
    router = f"classifier said {_words(str(top), registry)} (p={float(p):.2f})"
    if decision["label"] is None:
        return f"unsure: no rule decided; {router}"
    return f"unsure: rule said {_words(decision['label'], registry)}, {router}"
