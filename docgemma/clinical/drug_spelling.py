"""Drug names the dictionary does not read: one slip of the keyboard ("tiootropium", "fuosemide", "fulclox") or a
drug the dose table knows that the dictionary lacks ("senna", "thiamine", "oxytocin").

Used where a clinician is ASKED (the buttons of an unsure turn, ``agent/ask.py``): the button shows the name spelt
right, and the clinician's click is the confirmation. Never used to act on a message by itself: a misspelt drug
name is a guess until someone confirms it.

A word is read as a drug only when it is exactly one edit (a letter dropped, added, changed, or two neighbours
swapped) from a name of the dose table, a ward shortening, or the dictionary's own fuzzy suggestion: the
dictionary's fuzzy search alone reads "fuosemide" as azosemide and "trimester" as methyltestosterone.
"""

from __future__ import annotations

import re
from functools import lru_cache

from docgemma.clinical.dose_table import TABLE
from docgemma.clinical.drug_shortenings import SHORTENINGS
from docgemma.clinical.entities import DrugDictionary
from docgemma.clinical.function_words import FUNCTION_WORDS

#: Shorter words are too often one edit from an unrelated drug ("dose" / "dosa").
MIN_LENGTH = 6
_WORD_RE = re.compile(r"[A-Za-z][a-z]+")


def one_edit(word: str, name: str) -> bool:
    """True when ``word`` is ``name`` with one letter dropped, added or changed, or two neighbours swapped."""
    if word == name or abs(len(word) - len(name)) > 1:
        return False
    if len(word) == len(name):
        diff = [i for i, (a, b) in enumerate(zip(word, name, strict=True)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and word[diff[0]] == name[diff[1]] and word[diff[1]] == name[diff[0]])
    short, long = (word, name) if len(word) < len(name) else (name, word)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


@lru_cache(maxsize=1)
def _known() -> dict[str, str]:
    """One-word names the table and the shortenings know → the drug's name."""
    names = {row.drug: row.drug for row in TABLE if re.fullmatch(r"[a-z]+", row.drug)}
    names.update({short: drug for short, drug in SHORTENINGS.items() if re.fullmatch(r"[a-z]+", short)})
    return names


@lru_cache(maxsize=4096)
def _fuzzy(word: str) -> str | None:
    """The dictionary's fuzzy suggestion for ``word`` when it is one edit away, lower case."""
    DrugDictionary.warm()
    from drug_named_entity_recognition import find_drugs  # loaded by warm(); imported here to stay optional

    for data, _first, _last in find_drugs([word], is_ignore_case=True, is_fuzzy_match=True):
        name = str(data.get("name", "")).strip().lower()
        # A plural of the word is the word, not a misspelt drug: "lactate" (a lab) is not the salt "lactates".
        if one_edit(word, name) and name not in (word + "s", word + "es") and word not in (name + "s", name + "es"):
            return name
    return None


@lru_cache(maxsize=4096)
def spelt_right(word: str, suggest: bool = True) -> str | None:
    """The drug ``word`` names when the dictionary does not read it (see the module docstring), or None.
    ``suggest``: also the dictionary's own fuzzy suggestion (it reads "happens" as haptens: to ask with, never to
    decide with)."""
    lowered = word.lower()
    if len(lowered) < 4 or lowered in FUNCTION_WORDS or DrugDictionary.find(lowered):
        return None
    known = _known()
    if lowered in known:  # "senna": a drug by its own name
        return known[lowered]
    if len(lowered) < MIN_LENGTH:
        return None
    near = [name for short, name in known.items() if len(short) >= MIN_LENGTH and one_edit(lowered, short)]
    if len(set(near)) == 1:
        return near[0]
    return _fuzzy(lowered) if not near and suggest else None


def unread_drugs(text: str, suggest: bool = True) -> list[tuple[str, str]]:
    """(the word as written, the drug it names) for each word of ``text`` the dictionary did not read as a drug
    (``suggest``: see :func:`spelt_right`)."""
    return [(m.group(0), name) for m in _WORD_RE.finditer(text) if (name := spelt_right(m.group(0), suggest))]
