"""check_drug_interactions on FDA drug labels (openFDA ``/drug/label.json``), and the label facts the
ingredient resolver asks for (``openfda.substance_name``, ``openfda.pharm_class_epc``).

NLM's RxNav interaction API was shut down in January 2024, so interactions come from the labels themselves.
Every drug named is resolved to its ingredients first (a brand is looked up by its ingredients; a combination
product by all of them), its newest label is fetched, and for every pair of drugs both directions are read:
the passages of A's label (interactions section first, then contraindications, boxed warning, warnings) that
name B — one of B's ingredients, B's brand, or B's drug class or group ("NSAIDs", "oral anticoagulants";
``drug_classes.INTERACTION_GROUPS``) — and the same of B's label for A. A label that
names the other drug nowhere is reported as exactly that, "does not mention"; it is never called safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel

from docgemma.clinical.drug_classes import INTERACTION_GROUPS, SYNONYMS
from docgemma.clinical.ingredients import BY_KEY, LabelFacts, Resolution, classes_of, resolve_local
from docgemma.tools.drug_labels import DrugLabels
from docgemma.tools.http import HttpError
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.spec import ToolContext

#: Label sections read for mentions of the other drug, in the order a clinician would want them.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("drug_interactions", "Drug interactions"), ("contraindications", "Contraindications"),
    ("boxed_warning", "Boxed warning"), ("warnings_and_cautions", "Warnings and precautions"),
    ("warnings", "Warnings"), ("precautions", "Precautions"), ("do_not_use", "Do not use"),
    ("ask_doctor_or_pharmacist", "Ask a doctor or pharmacist before use"),
)
PASSAGE_CHARS = 300
#: The longest formatted result handed to a prompt: sized with the passages' shared budget (in
#: :func:`check_drug_interactions`) so that every direction of up to six drugs fits.
RESULT_CHARS = 7000
CAVEAT = ("'Does not mention' means only that: the label is silent on that drug. It is not evidence that the "
          "combination is harmless; check another source before relying on it.")
_SAFE_TERM = re.compile(r"[^A-Za-z0-9 \-]")
#: Reverse synonyms: the other spellings a label may use for an ingredient ("paracetamol", "clavulanic acid").
_SPELLINGS: dict[str, set[str]] = {}
for _other, _name in SYNONYMS.items():
    if len(_other) >= 4:
        _SPELLINGS.setdefault(_name, set()).add(_other)


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    parts = [str(v) for v in value] if isinstance(value, list) else ([value] if isinstance(value, str) else [])
    return " ".join(" ".join(parts).split())


def _date(raw: str) -> str:
    return f"{raw[:4]}-{raw[4:6]}-{raw[6:8]}" if len(raw) == 8 and raw.isdigit() else raw or "unknown"


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _around(sentence: str, start: int, end: int, limit: int = PASSAGE_CHARS) -> str:
    """The sentence, or the part of it around the name when it is long (the name always shows)."""
    if len(sentence) <= limit:
        return sentence
    left = max(0, min(start - limit // 3, len(sentence) - limit))
    window = sentence[left:left + limit]
    if left > 0:
        window = "…" + window.split(" ", 1)[-1]
    if left + limit < len(sentence):
        window = window.rsplit(" ", 1)[0] + "…"
    return window


@dataclass(frozen=True)
class InteractionLabel:
    """The parts of one openFDA SPL label this tool reads."""

    generic: str
    brands: tuple[str, ...]
    substances: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]
    effective_date: str
    set_id: str

    @classmethod
    def parse(cls, record: dict[str, Any]) -> InteractionLabel:
        names = record.get("openfda") or {}
        return cls(
            generic=", ".join(names.get("generic_name", [])).lower(),
            brands=tuple(names.get("brand_name", [])),
            substances=tuple(str(s).lower() for s in names.get("substance_name", [])),
            sections=tuple((title, _text(record, key)) for key, title in SECTIONS if _text(record, key)),
            effective_date=_date(str(record.get("effective_time", ""))),
            set_id=str(record.get("set_id", "")),
        )

    @property
    def shown(self) -> str:
        brand = f" ({self.brands[0]})" if self.brands else ""
        return f"{self.generic or 'unnamed'}{brand}, label effective {self.effective_date}"

    @property
    def source(self) -> Source:
        """Citation: the label on DailyMed by set id, with its effective date."""
        brand = f"{self.brands[0]} ({self.generic})" if self.brands else self.generic
        return Source(title=f"FDA drug label: {brand}, effective {self.effective_date}",
                      url="https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?" + urlencode({"setid": self.set_id}))


def _clean(term: str) -> str:
    return " ".join(_SAFE_TERM.sub(" ", term).split())


def label_search(drug: Resolution, given: str) -> str:
    """The openFDA ``search`` for a drug's newest label: its ingredient (a combination: all of them, as
    substances), or — when the resolver does not know it — the name as given; a brand as given is searched
    too ("Coumadin")."""
    name = _clean(given)
    terms: list[str] = []
    ingredients = [_clean(i) for i in drug.ingredients if _clean(i)]
    if len(ingredients) == 1:
        terms.append(f'openfda.generic_name:"{ingredients[0]}"')
    elif ingredients:
        terms.append("(" + " AND ".join(f'openfda.substance_name:"{i}"' for i in ingredients) + ")")
    else:
        terms.append(f'openfda.generic_name:"{name}"')
    spelled = {sep.join(ingredients).lower() for sep in ("-", "/", " and ", " ")}
    if name and name.lower() not in spelled:  # a brand as written ("Coumadin"), not the ingredients spelled out
        terms.append(f'openfda.brand_name:"{name}"')
    return " OR ".join(terms)


def for_drug(labels: DrugLabels, drug: Resolution, given: str) -> InteractionLabel | None:
    """The newest label of the product: among the newest five, one whose substances (or generic name) are
    exactly the product's ingredients, or whose brand is the name as given; None when none is — never
    another product's label (a combination that merely contains the drug, a search that matched elsewhere)."""
    found = [InteractionLabel.parse(r) for r in labels.search(label_search(drug, given))]
    chosen = [lab for lab in found if is_label_of(lab, drug, given)]
    chosen.sort(key=lambda lab: not lab.substances)  # a label that lists its substances says most surely
    return chosen[0] if chosen else None


def label_facts(labels: DrugLabels, name: str) -> LabelFacts | None:
    """What the label of ``name`` (a brand or generic name) says the product is; None when there is no label or
    the service does not answer (the ingredient resolver then keeps to its local table)."""
    term = _clean(name)
    if not term:
        return None
    try:
        records = labels.search(f'openfda.brand_name:"{term}" OR openfda.generic_name:"{term}"')
    except HttpError:
        return None
    for record in records:
        names = record.get("openfda") or {}
        brands = tuple(str(b) for b in names.get("brand_name", []))
        generics = tuple(str(g) for g in names.get("generic_name", []))
        if term.lower() in {" ".join(n.lower().split()) for n in (*brands, *generics)}:
            return LabelFacts(substances=tuple(str(s) for s in names.get("substance_name", [])),
                              epc=tuple(str(e) for e in names.get("pharm_class_epc", [])),
                              brand_names=brands, generic_names=generics)
    return None


def is_label_of(label: InteractionLabel, drug: Resolution, given: str) -> bool:
    """Whether ``label`` is the label of ``drug`` (written ``given``): its substances (or, a label without them,
    its generic name) are exactly the drug's ingredients; for a drug the table cannot identify, its brand is the
    name as given ("a brand named Aspirin" of aspirin with caffeine is not aspirin's label)."""
    wanted = set(drug.ingredients)
    names = label.substances or ((label.generic,) if label.generic else ())
    made_of = {i for s in names for i in resolve_local(s).ingredients}
    brand = " ".join(given.lower().split()) in {" ".join(b.lower().split()) for b in label.brands}
    return made_of == wanted if wanted else brand


def _terms(drug: Resolution, given: str, label: InteractionLabel | None) -> tuple[set[str], set[str]]:
    """(names, class words) a label may use for a drug: its ingredients and their other spellings, the name as
    given, its label's brands and generic name; and the words of its drug classes ("NSAIDs")."""
    names = {given.lower(), *drug.ingredients}
    for ingredient in drug.ingredients:
        names |= _SPELLINGS.get(ingredient, set())
    if label is not None:
        names |= {b.lower() for b in label.brands} | ({label.generic} if label.generic else set())
    classes = {c for i in drug.ingredients for c in classes_of(i)} | set(drug.classes)
    words = {w for key in classes for w in (*BY_KEY[key].words, BY_KEY[key].name.lower()) if len(w) >= 4}
    words |= {w for _group, _source, members, group_words in INTERACTION_GROUPS
              if set(members) & set(drug.ingredients) for w in group_words}
    return {n for n in names if len(n) >= 3}, words


def _find(label: InteractionLabel, names: set[str], words: set[str], limit: int,
          chars: int = PASSAGE_CHARS) -> tuple[str, list[dict[str, str]]]:
    """("name" | "class" | "", passages): sentences of the label naming the drug, else its class."""
    for kind, terms in (("name", names), ("class", words)):
        if not terms:
            continue
        pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, terms), key=len, reverse=True)) + r")\b",
                             re.IGNORECASE)
        found: list[dict[str, str]] = []
        for title, text in label.sections:
            for sentence in re.split(r"(?<!\bSt\.)(?<=[A-Za-z0-9)][.])\s+(?=[A-Z0-9])", text):
                hit = pattern.search(sentence)
                if hit and len(found) < limit:
                    found.append({"section": title, "text": _around(sentence, hit.start(), hit.end(), chars)})
        if found:
            return kind, found
    return "", []


def label_mentions(label: InteractionLabel, drug: Resolution, given: str, drug_label: InteractionLabel | None,
                   limit: int = 1) -> tuple[str, list[dict[str, str]]]:
    """("name" | "class" | "", passages): the passages of ``label`` that name ``drug`` (written ``given``;
    ``drug_label``: its own label, whose brand and generic names count), else its class or group; no passages
    when the label is silent on it."""
    return _find(label, *_terms(drug, given, drug_label), limit)


def check_drug_interactions(labels: DrugLabels, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Every pair of the drugs named, both directions: the passages of each label naming the other drug."""
    given = list(dict.fromkeys(str(n).strip() for n in args.drug_names if str(n).strip()))  # type: ignore[attr-defined]
    drugs = {name: resolve_local(name) for name in given}
    found: dict[str, InteractionLabel | None] = {}
    for name in given:
        try:
            found[name] = for_drug(labels, drugs[name], name)
        except HttpError as exc:
            return failure(exc.error_type)
    terms = {name: _terms(drugs[name], name, found[name]) for name in given}
    limit = 2 if len(given) == 2 else 1
    # Every direction must fit the answer: with many drugs each passage is shorter (the name always shows).
    chars = max(130, min(PASSAGE_CHARS, 4200 // max(1, len(given) * (len(given) - 1))))
    pairs: list[dict[str, Any]] = []
    interactions: list[dict[str, Any]] = []
    not_mentioned: list[str] = []
    checked_any = False
    for a, b in combinations(given, 2):
        directions: list[dict[str, Any]] = []
        for x, y in ((a, b), (b, a)):
            label = found[x]
            if label is None:
                directions.append({"label_of": x, "about": y, "status": "no label"})
                continue
            if not drugs[y].resolved and found[y] is None:
                directions.append({"label_of": label.generic or x, "about": y, "status": "other drug not identified"})
                continue
            checked_any = True
            kind, passages = _find(label, *terms[y], limit, chars)
            if passages:
                directions.append({"label_of": label.generic or x, "about": y, "status": "mentions", "by": kind,
                                   "passages": passages})
                interactions.append({"label_of": label.generic or x, "mentions": y,
                                     "passages": [p["text"] for p in passages]})
            else:
                directions.append({"label_of": label.generic or x, "about": y, "status": "not mentioned"})
                not_mentioned.append(f"{label.generic or x} label does not mention {y}")
        pairs.append({"drugs": [a, b], "directions": directions})
    missing = [name for name in given if found[name] is None]
    if not checked_any:
        return failure("drug_not_in_database", drug=", ".join(missing) or ", ".join(given))
    return success({
        "drugs": [(found[n].generic if found[n] else n) or n for n in given],  # type: ignore[union-attr]
        "checked": [{"name": n, "ingredients": list(drugs[n].ingredients),
                     "label": found[n].shown if found[n] else None} for n in given],  # type: ignore[union-attr]
        "pairs": pairs, "interactions": interactions, "not_mentioned": not_mentioned, "labels_not_found": missing,
        "caveat": CAVEAT,
    }, [lab.source for lab in found.values() if lab is not None])


def format_interactions(data: dict[str, Any]) -> str:
    """Each pair with both directions: the passages that name the other drug, or that the label does not
    mention it, or that no label was found; then the caveat."""
    count = len(data.get("pairs", []))
    names = [c["name"] for c in data.get("checked", [])] or data["drugs"]
    lines = [f"Checked on FDA labels: {', '.join(names)} — {count} pair{'s' if count != 1 else ''}, each in both "
             "directions."]
    for checked in data.get("checked", []):
        made_of = f" = {' + '.join(checked['ingredients'])}" if checked["ingredients"] and \
            " + ".join(checked["ingredients"]) != checked["name"].lower() else ""
        lines.append(f"- {checked['name']}{made_of}: " + (f"label {checked['label']}" if checked["label"]
                                                          else "no FDA label found"))
    for pair in data.get("pairs", []):
        lines.append(f"\n{pair['drugs'][0]} + {pair['drugs'][1]}:")
        for d in pair["directions"]:
            if d["status"] == "mentions":
                how = "names" if d["by"] == "name" else "names the class of"
                quoted = " ".join(f"[{p['section']}] {p['text']}" for p in d["passages"])
                lines.append(f"- The {d['label_of']} label {how} {d['about']}: {quoted}")
            elif d["status"] == "not mentioned":
                lines.append(f"- The {d['label_of']} label does not mention {d['about']}.")
            elif d["status"] == "no label":
                lines.append(f"- No FDA label was found for {d['label_of']}, so its label could not be checked for "
                             f"{d['about']}.")
            else:
                lines.append(f"- {d['about']} could not be identified, so the {d['label_of']} label was not checked "
                             "for it.")
    lines.append(data["caveat"])
    return "\n".join(lines)
