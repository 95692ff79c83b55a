"""One ingredient resolver for every drug check: a product string as a clinician or a record writes it
("Augmentin 625 mg", "amoxicillin trihydrate 500mg caps", "piperacillin and tazobactam", "co-amoxiclav",
"Allergy to Penicillin V") → its ingredients and their drug classes, or an explicit "could not resolve".

The allergy check (prescription write check and the summary's flag), the interaction tool and argument
grounding all call :meth:`IngredientResolver.resolve`, so a product is the same drug everywhere. The class
table and product names are in :mod:`.drug_classes`; beyond it the DrugDictionary (MeSH, DrugBank, NHS names)
resolves names, and INN stems place an ingredient the class lists do not name.

A resolver may be given a label lookup (``LabelLookup``; the tools layer provides one over openFDA, which
this layer cannot import): an FDA label's ``openfda.substance_name`` and ``openfda.pharm_class_epc`` then
identify a product the local table cannot, and add the label's classes to one it can. Offline, the local
table decides alone; a product it cannot identify stays unresolved, and the checks say so instead of passing.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from docgemma.clinical.drug_classes import (
    CLASSES,
    CONTRAINDICATED_AFTER,
    FORM_WORDS,
    NON_DRUG_ALLERGENS,
    PRODUCTS,
    RELATED_INGREDIENTS,
    SALT_WORDS,
    SYNONYMS,
    UMBRELLA_WORDS,
    DrugClass,
)
from docgemma.clinical.entities import DrugDictionary

BY_KEY: dict[str, DrugClass] = {c.key: c for c in CLASSES}
_MEMBER_CLASSES: dict[str, frozenset[str]] = {}
for _class in CLASSES:
    for _member in _class.members:
        _MEMBER_CLASSES[_member] = _MEMBER_CLASSES.get(_member, frozenset()) | {_class.key}
#: Words naming one or more classes in an allergy record (or a class-only product: "a cephalosporin").
CLASS_WORDS: dict[str, tuple[str, ...]] = {w: (c.key,) for c in CLASSES for w in c.words} | UMBRELLA_WORDS
#: Every ingredient name the table knows.
KNOWN = frozenset(_MEMBER_CLASSES) | {i for parts in PRODUCTS.values() for i in parts} | frozenset(SYNONYMS.values())
_STEMS = tuple((re.compile(stem), c.key) for c in CLASSES for stem in c.stems)
_EPC = tuple((re.compile(p, re.IGNORECASE), c.key) for c in CLASSES for p in c.epc)

#: Between the parts of a combination product: '/', '+', '&', ',', ';' (tokens of their own) and these words.
SEPARATOR_WORDS = frozenset({"and", "with", "plus", "w/", "&", "+", "/", ",", ";", "in", "-"})
_TOKEN_RE = re.compile(r"[/+&,;()]|[^\s/+&,;()]+")
_NUMBER_RE = re.compile(r"^(?:#|no\.?)?x?\d[\d.,]*(?:[a-zµ%/]+(?:/\d*[a-z]+)?)?$|^(?:nda|anda|bla)\d+$|"
                        r"^q\d+(?:-\d+)?(?:h|hr|hrs|min)?$|^[()]$")
#: Text around an allergen in a record ("Allergy to penicillin (substance)", "Penicillin allergy").
_ALLERGY_AFFIXES = re.compile(
    r"^\s*(?:h/o|history of|known|suspected|drug)?\s*(?:allerg(?:y|ies|ic)|intoleran(?:ce|t)|adverse reaction|"
    r"reaction|hypersensitivity|sensitivity|anaphylaxis)\s*(?:to|of|:|-)?\s*|"
    r"\s*(?:\((?:substance|product|disorder|finding|medicinal product)\)|allerg(?:y|ies)|intolerance|"
    r"hypersensitivity|sensitivity)\s*$|^\s*(?:product containing|medicinal product containing)\s+|"
    r"\s+(?:-?containing product|product)\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LabelFacts:
    """What an FDA label says a product is (``openfda`` block): its substances and its EPC classes."""

    substances: tuple[str, ...]
    epc: tuple[str, ...]
    brand_names: tuple[str, ...] = ()
    generic_names: tuple[str, ...] = ()


#: name → the label facts of the product of that name, or None (no label, or the service did not answer).
LabelLookup = Callable[[str], "LabelFacts | None"]


@dataclass(frozen=True)
class Resolution:
    """A product (or a recorded allergen) resolved: its ingredients, their classes, and what is unknown."""

    text: str
    #: Generic names (the table's spelling), in the order written.
    ingredients: tuple[str, ...] = ()
    #: Class keys of the ingredients, plus classes named outright ("penicillins") or by the FDA label.
    classes: frozenset[str] = frozenset()
    #: Words that name no drug this resolver knows ("xyzzol"): the product cannot be fully checked.
    unresolved: tuple[str, ...] = ()
    #: A food, latex, venom or environmental allergen: no drug conflicts with it.
    non_drug: bool = False
    #: EPC class names from the FDA label that confirmed or extended this resolution.
    label_classes: tuple[str, ...] = ()

    @property
    def resolved(self) -> bool:
        """Every word accounted for, and at least one ingredient identified (a class alone is not a drug)."""
        return (bool(self.ingredients) or self.non_drug) and not self.unresolved

    @property
    def identified(self) -> bool:
        """As an allergen: a drug, a class ("sulfa drugs") or a non-drug allergen, every word accounted for."""
        return (bool(self.ingredients) or bool(self.classes) or self.non_drug) and not self.unresolved

    @property
    def class_only(self) -> bool:
        """Names a class but no drug ("a cephalosporin", "penicillins")."""
        return bool(self.classes) and not self.ingredients

    def shown(self) -> str:
        """``Augmentin (amoxicillin + clavulanate)``; the text alone when it is its one ingredient."""
        inner = " + ".join(self.ingredients)
        if not inner or inner == self.text.strip().lower():
            return self.text
        return f"{self.text} ({inner})"


@dataclass(frozen=True)
class Conflict:
    """Why a product conflicts with a recorded allergen."""

    kind: Literal["substance", "class", "contraindicated", "related"]
    reason: str

    @property
    def direct(self) -> bool:
        """Same substance or same class (the related-class cross-reactivity is the weaker warning)."""
        return self.kind != "related"


def canonical(name: str) -> str:
    """The table's spelling of one ingredient name (synonyms, case, spacing)."""
    text = " ".join(name.lower().split())
    text = SYNONYMS.get(text, text)
    return SYNONYMS.get(text.replace("sulph", "sulf"), text.replace("sulph", "sulf"))


def classes_of(ingredient: str) -> frozenset[str]:
    """Class keys of one ingredient: the table's member lists, else its INN stem."""
    name = canonical(ingredient)
    if name in _MEMBER_CLASSES:
        return _MEMBER_CLASSES[name]
    word = name.split()[0] if name else ""
    return frozenset(key for stem, key in _STEMS if len(word) >= 6 and word.isalpha() and stem.search(word))


def epc_classes(epc_names: Iterable[str]) -> frozenset[str]:
    """Class keys meant by FDA EPC names ("Penicillin-class Antibacterial [EPC]" → penicillin)."""
    out: set[str] = set()
    for name in epc_names:
        out |= {key for pattern, key in _EPC if pattern.search(name)}
    return frozenset(out)


def _tokens(text: str) -> list[str]:
    cleaned = re.sub(r"[®™©*\"'`]", "", text.lower()).replace("’", "")
    cleaned = re.sub(r"(\d)\s+(mg|mcg|g|ml|%|iu|units?)\b", r"\1\2", cleaned)
    out: list[str] = []
    for token in _TOKEN_RE.findall(cleaned):
        token = token.strip(".:") if token not in ("e.e.s.",) else token
        if "-" in token.strip("-") and not _known_whole(token):
            # "amoxicillin-clavulanate", "tolfenamic acid-acetaminophen": a hyphen between two names
            # separates them, unless the hyphenated word is itself a name ("co-amoxiclav", "z-pak").
            for part in re.split(r"(-+)", token):
                if part:
                    out.append("-" if part.startswith("-") else part)
        elif token:
            out.append(token)
    return out


def _known_whole(token: str) -> bool:
    name = canonical(token)
    return (token in PRODUCTS or name in PRODUCTS or name in KNOWN or token in CLASS_WORDS or token in FORM_WORDS
            or bool(_NUMBER_RE.match(token)) or token in NON_DRUG_ALLERGENS
            or bool(DrugDictionary.exact(token)))


def _ignorable(token: str) -> bool:
    return token in FORM_WORDS or token in SEPARATOR_WORDS or bool(_NUMBER_RE.match(token))


def _strip_salts(words: list[str]) -> list[str]:
    kept = [w for w in words if w not in SALT_WORDS]
    return kept if kept else words


@lru_cache(maxsize=16384)
def _phrase(phrase: str, allow_dictionary: bool) -> tuple[tuple[str, ...], frozenset[str], bool] | None:
    """(ingredients, classes named, non-drug) for one phrase, or None when it names nothing known."""
    for candidate in dict.fromkeys((phrase, " ".join(_strip_salts(phrase.split())))):
        if candidate in PRODUCTS:
            return tuple(canonical(i) for i in PRODUCTS[candidate]), frozenset(), False
        name = canonical(candidate)
        if name in PRODUCTS:
            return tuple(canonical(i) for i in PRODUCTS[name]), frozenset(), False
        if name in KNOWN or name in _MEMBER_CLASSES:
            return (name,), frozenset(), False
        if candidate in CLASS_WORDS:
            return (), frozenset(CLASS_WORDS[candidate]), False
        if candidate in NON_DRUG_ALLERGENS:
            return (), frozenset(), True
        if classes_of(name) and " " not in name:
            return (name,), frozenset(), False
    words = phrase.split()
    if not allow_dictionary or any(_ignorable(w) for w in words):
        return None
    found = DrugDictionary.exact(phrase) or DrugDictionary.exact(" ".join(_strip_salts(words)))
    if not found:
        return None
    name = canonical(found)
    if re.search(r"[/,]|\s-\s|\band\b", name):  # the dictionary spells a combination product: its parts
        parts = tuple(canonical(p) for p in re.split(r"\s*(?:/|,|\band\b|\s-\s)\s*", name) if p.strip())
        return tuple(canonical(" ".join(_strip_salts(p.split()))) for p in parts), frozenset(), False
    return (canonical(" ".join(_strip_salts(name.split()))),), frozenset(), False


def _match(tokens: list[str], allow_dictionary: bool) -> tuple[list[str], set[str], bool, list[str]]:
    """Greedy longest match over ``tokens``: (ingredients, classes named, non-drug, unmatched words)."""
    ingredients: list[str] = []
    classes: set[str] = set()
    non_drug = False
    unmatched: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] in SEPARATOR_WORDS:
            if tokens[i] in ("plus", "with", "+", "&") and not any(not _ignorable(t) for t in tokens[i + 1:]):
                # "Nurofen Plus", "Tylenol with ...": a brand's line extension adds an ingredient it does not name.
                unmatched.append(tokens[i])
            i += 1
            continue
        for j in range(min(len(tokens), i + 6), i, -1):
            span = tokens[i:j]
            joined = " ".join(span)
            # A phrase spans two parts of a combination only as a product's own name ("nurofen plus").
            if any(t in SEPARATOR_WORDS for t in span[1:]) and joined not in PRODUCTS:
                continue
            hit = _phrase(joined, allow_dictionary)
            if hit is not None:
                ingredients += [n for n in hit[0] if n not in ingredients]
                classes |= hit[1]
                non_drug = non_drug or hit[2]
                i = j
                break
        else:
            token = tokens[i]
            if not _ignorable(token) and token not in SALT_WORDS:
                unmatched.append(token)
            i += 1
    return ingredients, classes, non_drug, unmatched


def resolve_local(text: str) -> Resolution:
    """The table's (and the DrugDictionary's) resolution of ``text``, without any label lookup."""
    return _resolve_local(" ".join(text.split()))


@lru_cache(maxsize=8192)
def _resolve_local(text: str) -> Resolution:
    tokens = _tokens(text)
    ingredients, named, non_drug, unmatched = _match(tokens, allow_dictionary=True)
    classes = set(named)
    for ingredient in ingredients:
        classes |= classes_of(ingredient)
    return Resolution(text=text, ingredients=tuple(ingredients), classes=frozenset(classes),
                      unresolved=tuple(unmatched), non_drug=non_drug and not ingredients)


#: How allergy records name an allergen besides its plain name: an abbreviation, a class spelled out, the
#: reaction written after the drug ("ramipril (angioedema)", "ACE inhibitor angioedema") or a syndrome named
#: after the drug ("heparin-induced thrombocytopenia", "aspirin-exacerbated respiratory disease").
_ALLERGY_SPELLINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bpcn\b", re.IGNORECASE), "penicillin"),
    (re.compile(r"^\s*hit(?:\s*(?:type)?\s*(?:ii|2))?\s*$", re.IGNORECASE), "heparin"),
    (re.compile(r"\bnon-?steroidal anti-?inflammator(?:y|ies)(?:\s+(?:drugs?|agents?|medications?|medicines?))?\b",
                re.IGNORECASE), "nsaids"),
    (re.compile(r"(?<=\S)\s*\((?:[^()]*)\)\s*$"), ""),
    (re.compile(r"(?<=[a-z])-(?:induced|exacerbated|associated|related|sensitive)\b.*$", re.IGNORECASE), ""),
    (re.compile(r"\s+(?:angio-?o?edema|anaphylaxis|anaphylactic reaction|rash|hives|urticaria|sjs|ten|dress|"
                r"stevens-johnson syndrome|toxic epidermal necrolysis|bronchospasm)\s*$", re.IGNORECASE), ""),
)


def allergen_text(allergy: str) -> str:
    """The allergen named in an allergy record's text ("Allergy to penicillin (substance)" → "penicillin")."""
    text = allergy
    for pattern, replacement in _ALLERGY_SPELLINGS:
        spelled = pattern.sub(replacement, text).strip()
        text = spelled or text
    for _ in range(3):
        stripped = _ALLERGY_AFFIXES.sub("", text).strip(" .,:;-")
        if stripped == text:
            break
        text = stripped
    return text or allergy


class IngredientResolver:
    """Resolves product strings; with a ``lookup``, an FDA label confirms and extends what the table knows.

    Label answers are cached per name (positive ones for the process, a miss for ``miss_ttl_s``): a write
    check runs again on every replay of the approval node, and the card must not change between replays
    because the network blinked.
    """

    def __init__(self, lookup: LabelLookup | None = None, *, miss_ttl_s: float = 600.0) -> None:
        self.lookup = lookup
        self.miss_ttl_s = miss_ttl_s
        self._cache: dict[str, tuple[LabelFacts | None, float]] = {}
        self._lock = threading.Lock()

    def _facts(self, name: str) -> LabelFacts | None:
        if self.lookup is None or not name.strip():
            return None
        key = name.strip().lower()
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and (cached[0] is not None or now - cached[1] < self.miss_ttl_s):
            return cached[0]
        facts = self.lookup(key)
        with self._lock:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = (facts, now)
        return facts

    def resolve(self, text: str, *, confirm: bool = True) -> Resolution:
        """``text`` resolved by the table; then, with a lookup, by the product's FDA label: a product the table
        cannot identify is identified by a label whose brand or generic name is exactly ``text``; a product it
        can identify gains the label's EPC classes when the label's substances are the same ingredients.
        ``confirm=False`` asks the label only for what the table cannot identify."""
        local = resolve_local(text)
        if self.lookup is None or (local.resolved and not confirm) or local.non_drug:
            return local
        query = " ".join(t for t in _tokens(text) if not _ignorable(t))
        facts = self._facts(query) if query else None
        if facts is None:
            return local
        substances = tuple(dict.fromkeys(
            canonical(" ".join(_strip_salts(s.lower().split()))) for s in facts.substances if s.strip()))
        label_classes = epc_classes(facts.epc)
        if local.resolved:
            if set(substances) != set(local.ingredients):
                return local  # another product's label: it says nothing about this one
            return replace(local, classes=local.classes | label_classes, label_classes=tuple(facts.epc))
        names = {" ".join(n.lower().split()) for n in (*facts.brand_names, *facts.generic_names)}
        if query not in names or not substances:
            return local
        classes = set(label_classes)
        for ingredient in substances:
            classes |= classes_of(ingredient)
        return Resolution(text=local.text, ingredients=substances, classes=frozenset(classes),
                          label_classes=tuple(facts.epc))

    def allergen(self, allergy: str) -> Resolution:
        """A recorded allergy's allergen resolved (the words around it dropped); the label only when the table
        cannot identify it."""
        return replace(self.resolve(allergen_text(allergy), confirm=False), text=allergy)


#: The resolver without a label lookup (the local table): what the record's summary and offline checks use.
LOCAL = IngredientResolver()


def resolve(text: str) -> Resolution:
    """``text`` resolved by the local table (see :class:`IngredientResolver` for the label-backed one)."""
    return LOCAL.resolve(text)


def _names(keys: Iterable[str]) -> str:
    return ", ".join(BY_KEY[k].name for k in sorted(keys))


def conflicts(allergen: Resolution, drug: Resolution) -> list[Conflict]:
    """Why ``drug`` conflicts with a recorded ``allergen``, strongest first (same substance, same class,
    related class); empty when it does not (or when the allergen is not a drug)."""
    if allergen.non_drug:
        return []
    out: list[Conflict] = []
    shared = [i for i in drug.ingredients if i in allergen.ingredients]
    if shared:
        out.append(Conflict("substance", f"{drug.shown()} contains {', '.join(shared)}, the recorded allergen."))
    allergen_classes = set(allergen.classes)
    same = sorted(allergen_classes & set(drug.classes))
    if same and not shared:
        members = [i for i in drug.ingredients if set(classes_of(i)) & set(same)]
        what = ", ".join(members) if members else f"{', '.join(drug.ingredients) or drug.text} (class from the FDA label)"
        out.append(Conflict("class", f"{drug.shown()} contains {what}, of the same drug class as the recorded "
                                     f"allergen ({_names(same)})."))
    for key, ingredient, why in CONTRAINDICATED_AFTER:
        if key in allergen_classes and ingredient in drug.ingredients and not out:
            out.append(Conflict("contraindicated", f"{drug.shown()} contains {ingredient}: {why}."))
    related = {r for key in allergen_classes for r in BY_KEY[key].related} & set(drug.classes) - allergen_classes
    if related and not out:
        notes = "; ".join(BY_KEY[k].related_note for k in sorted(allergen_classes)
                          if set(BY_KEY[k].related) & related and BY_KEY[k].related_note)
        out.append(Conflict("related", f"{drug.shown()} is of a related class ({_names(related)}): cross-reactivity "
                                       f"with the recorded allergy ({_names(allergen_classes)}) is possible"
                                       f"{' — ' + notes if notes else ''}."))
    if not out:
        for a, b, note in RELATED_INGREDIENTS:
            pairs = {(a, b), (b, a)}
            if any((x, y) in pairs for x in allergen.ingredients for y in drug.ingredients):
                out.append(Conflict("related", f"{drug.shown()}: cross-reactivity is possible — {note}."))
    return out

