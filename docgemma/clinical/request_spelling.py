"""The words a clinician's request turns on, spelt right when a hurried keyboard slipped ("admisions", "potasium",
"intteract", "reocrd").

Used only where a clinician is ASKED (the buttons of an unsure turn, ``agent/ask.py``): the respelt message is read
again for candidate actions and to fill the buttons in, and the clinician's click is the confirmation. Never used to
act on a message by itself. Drug names have their own reader (``clinical/drug_spelling.py``).

A word is respelt only when it is not itself a known word here, is at least five letters long, and is exactly one
edit (``drug_spelling.one_edit``) from exactly one word of :data:`REQUEST_WORDS`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from docgemma.clinical.drug_spelling import one_edit
from docgemma.clinical.function_words import FUNCTION_WORDS

MIN_LENGTH = 5
#: The record's items, the tools' request words and the writes' verbs, as clinicians write them.
_WORDS = """
admission admissions admitted admit encounter encounters appointment appointments visit visits visited discharge
discharged attended attendance seen timeline history summary summarise summarize overview chart record records
notes medication medications medicine medicines prescription prescriptions tablets allergy allergies allergic
intolerance intolerant reaction reactions problem problems diagnosis diagnoses condition conditions procedure
procedures surgery immunisations immunizations vaccinations vaccines results bloods potassium sodium creatinine
glucose haemoglobin hemoglobin cholesterol platelets troponin ferritin albumin bilirubin calcium magnesium
phosphate lactate urea pressure temperature weight height vitals kidney kidneys renal liver thyroid function
interaction interactions interact interacts combine combination together safety warnings warning
contraindications contraindicated contraindication pregnancy pregnant breastfeeding elderly children dosing
adjustment studies study research evidence literature papers articles systematic review reviews analysis
randomised randomized trials trial recruiting enrolling enrol enroll volunteers prescribe prescribed order start
commence document record recorded please write save note progress clinical analyse analyze interpret image scan
xray x-ray film treating treatment treated indication linked connected related explain explained explains
explaining causing
"""
REQUEST_WORDS: frozenset[str] = frozenset(_WORDS.split())
#: Words of their own one slip from a request word ("atrial" fibrillation is no "trial", "doing" no "dosing"): never
#: respelt (the words of the generated corpus and of the sets written apart that were, read once).
_OWN_WORDS = frozenset({"atrial", "doing", "older", "noted", "wrote", "safely", "analyses", "attender", "explainer",
                        "arial", "stated", "bolder", "border", "folder", "boarder", "recall", "vision", "visitor"})
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z\-]+")


@lru_cache(maxsize=8192)
def respelt_word(word: str) -> str | None:
    """The request word ``word`` is one slip from, lower case; None when it is a known word or near none or several."""
    lowered = word.lower()
    if len(lowered) < MIN_LENGTH or lowered in REQUEST_WORDS or lowered in FUNCTION_WORDS or lowered in _OWN_WORDS:
        return None
    # A plural or a singular is no slip: "blood" is not "bloods" misspelt ("creatinin" is a slip of "creatinine").
    near = {known for known in REQUEST_WORDS if len(known) >= MIN_LENGTH and one_edit(lowered, known)
            and lowered + "s" != known and known + "s" != lowered}
    # "encounterr" is one slip from "encounter" and from "encounters": one word either way (the one of its length).
    if len({known.removesuffix("s") for known in near}) == 1 and len(near) == 2:
        near = {known for known in near if len(known) == len(lowered)} or near
    return near.pop() if len(near) == 1 else None


def respelt(text: str) -> str:
    """``text`` with each slipped request word spelt right (everything else as written)."""
    return _WORD_RE.sub(lambda m: respelt_word(m.group(0)) or m.group(0), text)


def slipped_words(text: str) -> list[str]:
    """The words of ``text`` that are one slip from a request word (what :func:`respelt` would respell)."""
    return [m.group(0) for m in _WORD_RE.finditer(text) if respelt_word(m.group(0))]
