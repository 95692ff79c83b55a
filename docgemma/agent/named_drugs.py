"""Safety wherever a drug is named: each drug the clinician's message names, while a patient is active, is checked
by code against that patient's record — recorded allergies (same substance, same class, a related class, or a drug
or allergen the check cannot identify), active orders (a duplicate, the same class, an interaction from the local
table or the ANSM thesaurus, :mod:`docgemma.clinical.interactions`) and age (:mod:`docgemma.clinical.age_cautions`) —
and each conflict is one line said FIRST in the answer, whatever route the turn took (a question, an unrecognised request, a
look-up, a record question, a write): "Safety: co-amoxiclav contains amoxicillin, a penicillin — Grace Mensah has a
recorded penicillin allergy (anaphylaxis)." The model never writes these lines, and a record that cannot be read is
said, never taken as clean.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from docgemma.clinical import pregnancy, renal
from docgemma.clinical.age_cautions import age_cautions
from docgemma.clinical.allergy import allergy_findings, reactions
from docgemma.clinical.body_weight import age_years
from docgemma.clinical.entities import DrugDictionary
from docgemma.clinical.ingredients import (
    BY_KEY,
    LOCAL,
    IngredientResolver,
    Resolution,
    allergen_text,
    classes_of,
    conflicts,
    resolve_local,
)
from docgemma.clinical.interactions import INTERRUPTING, interactions_between
from docgemma.clinical.patient import PatientRef
from docgemma.fhir import display_text
from docgemma.tools.write_checks import PatientFacts

PREFIX = "Safety: "
#: Closes each line said of a message that orders nothing (a question, a plan): the line names what it belongs to.
#: Issue 46: "Safety: apixaban duplicates Margaret Oduya's active order" stood over a question, as if ordered.
QUESTION_TAIL = " (said of a drug your message names; nothing was ordered)"
#: An interaction the tables grade "minor" (the ANSM thesaurus' "à prendre en compte") is listed on an order's card
#: only: above an answer it would be noise (about 230 such pairs among 75 common drugs) that buries what matters.
SAID = frozenset({"contraindicated", "major", "moderate"})
#: First letters of an upper-case abbreviation read with a vowel sound ("an NSAID", "an ACE inhibitor").
_VOWEL_LETTERS = "AEFHILMNORSX"


def one_of(class_key: str) -> str:
    """"a penicillin", "an NSAID", "an opioid (morphine type)": one member of a class, with its article."""
    name = BY_KEY[class_key].name
    head, paren, tail = name.partition(" (")
    words = head.split()
    words[-1] = words[-1][:-1] if words[-1].endswith("s") else words[-1]
    single = " ".join(words) + (f" ({tail}" if paren else "")
    first = words[0]
    vowel = first[0] in _VOWEL_LETTERS if first.isupper() else first[0].lower() in "aeiou"
    return f"{'an' if vowel else 'a'} {single}"


def _allergy_phrase(allergy: dict[str, Any]) -> str:
    """"a recorded penicillin allergy (anaphylaxis)"."""
    allergen = allergen_text(display_text(allergy)).strip() or display_text(allergy)
    what = f"a recorded allergy to {allergen}" if allergen.lower().endswith("s") else f"a recorded {allergen} allergy"
    shown = [r.lower() for r in reactions(allergy)]
    if not shown and allergy.get("criticality"):
        shown = [f"criticality {allergy['criticality']}"]
    return what + (f" ({', '.join(shown)})" if shown else "")


def _contains(written: str, ingredient: str, class_key: str | None) -> str:
    """"co-amoxiclav contains amoxicillin, a penicillin" (the drug as the clinician wrote it)."""
    same = written.lower() == ingredient or resolve_local(written).ingredients == (ingredient,)
    head = written if same else f"{written} contains {ingredient}"
    return head + (f", {one_of(class_key)}" if class_key else "")


def _allergy_lines(written: str, product: Resolution, who: str, facts: PatientFacts,
                   resolver: IngredientResolver) -> list[str]:
    out: list[str] = []
    for allergy in facts.allergies:
        allergen = resolver.allergen(display_text(allergy))
        found = conflicts(allergen, product)
        if found:
            shared = [i for i in product.ingredients if i in allergen.ingredients]
            same = sorted(set(allergen.classes) & set(product.classes))
            member = next((i for i in product.ingredients if set(classes_of(i)) & set(same)), None)
            if found[0].kind == "substance":
                text = _contains(written, shared[0], None)
            elif found[0].kind == "class" and member:
                text = _contains(written, member, same[0])
            elif found[0].kind == "related":
                related = sorted(set(product.classes) - set(allergen.classes))
                text = (_contains(written, product.ingredients[0], related[0]) if related and product.ingredients
                        else written)
            else:
                text = found[0].reason.rstrip(".")
            tail = ": cross-reactivity is possible" if found[0].kind == "related" else ""
            out.append(f"{PREFIX}{text} — {who} has {_allergy_phrase(allergy)}{tail}.")
    for finding in allergy_findings(product, facts.allergies, resolver):
        if finding.kind == "unverified" and not product.class_only:  # a class named is not a drug to identify
            named = "; ".join(display_text(a) for a in facts.allergies)
            out.append(f"{PREFIX}{written} was NOT checked against {who}'s recorded allergies ({named}): "
                       + ("it could not be identified as known ingredients." if not product.resolved else
                          "a recorded allergen could not be identified as a drug or drug class."))
    return out


def _order_lines(written: str, product: Resolution, who: str, facts: PatientFacts, own: bool = False,
                 question: bool = False) -> list[str]:
    """``own``: the question is about the patient's own orders ("why is she on lisinopril?"): the drug named being
    one of them is what was asked about, not a duplicate; ``question``: nothing is ordered, so an order of it
    *would* duplicate one."""
    out: list[str] = []
    for med in facts.medications:
        shown = display_text(med)
        active = resolve_local(shown)
        since = str(med.get("authoredOn") or "")[:10]
        order = f"{who}'s active order {shown}" + (f" (since {since})" if since else "")
        if not active.ingredients:
            if product.ingredients:
                out.append(f"{PREFIX}{written} was NOT checked against {order}: it could not be identified.")
            continue
        shared = [i for i in product.ingredients if i in active.ingredients]
        if shared:
            # A product with more in it than her order ("janumet" beside her metformin) is a duplicate all the same.
            if not (own and set(product.ingredients) <= set(active.ingredients)):
                verb = "would duplicate" if question else "duplicates"
                out.append(f"{PREFIX}{written} {verb} {order}: both contain {', '.join(shared)}.")
            continue
        same = sorted({c for i in product.ingredients for c in classes_of(i)}
                      & {c for i in active.ingredients for c in classes_of(i)})
        if same:
            out.append(f"{PREFIX}{written} is {one_of(same[0])}, the same class as {order}.")
        for found in interactions_between(product.ingredients, active.ingredients):
            i = found.interaction
            if i.severity not in SAID:
                continue
            out.append(f"{PREFIX}{written} with {order}: {i.severity} interaction — {i.effect} "
                       f"(source: {i.source}).")
    return out


def _age_lines(written: str, product: Resolution, who: str, facts: PatientFacts) -> list[str]:
    years = age_years(facts.birth_date) if facts.birth_date else None
    if years is None:
        return []
    return [f"{PREFIX}{written} — {who} is {int(years)}: {caution.why} (source: {caution.source})."
            for _ingredient, caution in age_cautions(product, years)]


def named(query: str, mentions: Iterable[str]) -> list[tuple[str, Resolution]]:
    """The drugs the message names, as written, each resolved once (the written words first: "co-amoxiclav";
    then the name the entity extraction gave)."""
    wanted = list(mentions)
    pairs = [(w, n) for w, n in DrugDictionary.mentions(query) if n in wanted]
    pairs += [(n, n) for n in wanted if n not in {p[1] for p in pairs}]
    out: dict[tuple[str, ...], tuple[str, Resolution]] = {}
    for written, name in pairs:
        product = resolve_local(written)
        if not product.identified:  # a class named as written ("NSAID") is kept as that class
            product = resolve_local(name)
        key = product.ingredients or (name,)
        out.setdefault(key, (written, product))
    return list(out.values())


def _skipped(product: Resolution, skip: list[Resolution]) -> bool:
    return any(set(product.ingredients) & set(s.ingredients)
               or (product.class_only and set(product.classes) & set(s.classes)) for s in skip)


def safety_lines(query: str, mentions: Iterable[str], patient: PatientRef, facts: PatientFacts | None,
                 skip: Iterable[Resolution] = (), resolver: IngredientResolver = LOCAL,
                 asked_about: str | None = None, own_orders: bool = False, question: bool = False) -> list[str]:
    """Every conflict of the drugs ``query`` names (``mentions``: the extracted names) with ``patient``'s record
    (``facts``; None: the record could not be read, which is said); ``skip``: allergens not to check (of an
    allergy being recorded this turn: naming it is not a plan to give it); ``asked_about``: a patient the
    message names who is not ``patient`` — the drugs are for them, so ``patient``'s record is not used and the
    line says they were not checked; ``own_orders``: the question is about what the patient's own orders are for
    (a connection question), so a drug named that is one of them is no duplicate; ``question``: the message orders
    nothing (a question, a plan), and each line about her active orders says so (:data:`QUESTION_TAIL`)."""
    drugs = [(w, p) for w, p in named(query, mentions) if not _skipped(p, list(skip))]
    if not drugs:
        return []
    if asked_about:
        listed = ", ".join(w for w, _p in drugs)
        return [f"{PREFIX}{listed} was NOT checked against {asked_about}'s record: {asked_about} is not the active "
                "patient, and no single record of that name was found."]
    who = patient["name"]
    if facts is None:
        listed = ", ".join(w for w, _p in drugs)
        return [f"{PREFIX}{who}'s record could not be read, so {listed} was NOT checked against their allergies, "
                "active medicines or age."]
    out: list[str] = []
    for written, product in drugs:
        out += _allergy_lines(written, product, who, facts, resolver)
        # A line about her orders is said of the message it belongs to: an allergy or age line is true either way.
        out += [line + QUESTION_TAIL if question else line
                for line in _order_lines(written, product, who, facts, own_orders, question)]
        out += _age_lines(written, product, who, facts)
        out += _pregnancy_and_kidney_lines(written, product, who, facts)
    return list(dict.fromkeys(out))


def _pregnancy_and_kidney_lines(written: str, product: Resolution, who: str, facts: PatientFacts) -> list[str]:
    """The pregnancy, breastfeeding and kidney findings of the prescription check, for a drug only named."""
    record = pregnancy.status(facts.conditions, facts.observations, facts.gender, age_years(facts.birth_date))
    found = [f.text for f in pregnancy.findings(written, product.ingredients, product.classes, record)]
    found += [f.text for f in renal.findings(written, product.ingredients, renal.latest(facts.observations))]
    return [f"{PREFIX}{who}: {text}" for text in found]


MESSAGE_CHECK = "Interactions with drugs the message names"


def order_interactions(query: str, mentions: Iterable[str], ordered: str) -> list[tuple[str, bool]]:
    """The interactions of the drug being ordered (``ordered``, as the card names it) with the other drugs the
    message names ("start naproxen; she buys ibuprofen and takes her sister's apixaban"): (finding, severe) each,
    from the local table; a drug the message names that is the order itself is no interaction."""
    product = resolve_local(ordered)
    out: list[tuple[str, bool]] = []
    for written, other in named(query, mentions):
        if not other.ingredients or set(other.ingredients) & set(product.ingredients):
            continue
        for hit in interactions_between(product.ingredients, other.ingredients):
            i = hit.interaction
            out.append((f"INTERACTION WITH A DRUG YOUR MESSAGE NAMES ({i.severity.upper()}): {ordered} with {written} "
                        f"— {i.effect} (source: {i.source}).", i.severity in INTERRUPTING))
    return list(dict.fromkeys(out))
