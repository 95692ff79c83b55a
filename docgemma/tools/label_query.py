"""A drug-label question read off the message: which drugs (a class named with an example means the example)
and what the question is about (the label section that answers it: ``label_sections.TOPICS``).

"What does the label say about valproate in pregnancy?" asks for the pregnancy section, not the boxed warning
alone; "fluoroquinolones like levofloxacin" names a class and the drug to look up.
"""

from __future__ import annotations

import re
from typing import Any

from docgemma.clinical.entities import DrugDictionary

#: Topic words, in priority order: a special population before dosing ("renal dosing" is about the kidney).
TOPIC_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pregnancy", re.compile(r"\bpregnan\w*|\bconception\b|\btrimesters?\b|\bteratogen\w*|\bf(?:o)?etus\b|\bf(?:o)?etal\b",
                             re.I)),
    ("lactation", re.compile(r"\bbreast[- ]?(?:feed\w*|milk)|\blactat\w*|\bnursing (?:mothers?|women|infants?)\b", re.I)),
    ("renal impairment", re.compile(r"\brenal\b|\bkidneys?\b|\bckd\b|\begfr\b|\bcreatinine(?: clearance)?\b|\bcrcl\b|"
                                    r"\b(?:haemo|hemo)?dialysis\b|\besrd\b", re.I)),
    ("hepatic impairment", re.compile(r"\bhepatic\b|\bliver\b|\bcirrho\w*|\bchild[- ]pugh\b|\blfts?\b", re.I)),
    ("children", re.compile(r"\bchild(?:ren)?\b(?![- ]pugh)|\bkids?\b|\bpa?ediatric\w*|\binfants?\b|\bneonat\w*|"
                            r"\bnewborns?\b|\badolescents?\b|\btoddlers?\b", re.I)),
    ("older adults", re.compile(r"\belderly\b|\bolder (?:adults?|patients?|people)\b|\bgeriatric\b|\bfrail\b|"
                                r"\b(?:over|above|aged) (?:65|70|75|80)\b", re.I)),
    ("overdose", re.compile(r"\boverdos\w*|\bpoisoning\b|\btook too many\b|\bingest(?:ed|ion)\b", re.I)),
    ("dosage", re.compile(r"\bdos(?:e|es|ing|age)\b|\bhow much\b|\btitrat\w*|\bmax(?:imum)? (?:daily )?dose\b", re.I)),
    ("interactions", re.compile(r"\binteract\w*", re.I)),
)
#: "fluoroquinolones like levofloxacin", "ACE inhibitors such as lisinopril", "statins (e.g. atorvastatin)".
EXAMPLE_RE = re.compile(r"\s*[,(]?\s*\b(?:like|such as|e\.g\.?|eg|for example|for instance|including|especially|"
                        r"particularly|namely)\b[\s,:]*", re.I)
MAX_DRUGS = 4


def topic(text: str) -> str | None:
    """What a label question is about (None: the general warnings)."""
    return next((name for name, pattern in TOPIC_WORDS if pattern.search(text)), None)


def class_examples(text: str, drugs: list[str]) -> list[str]:
    """``drugs`` without the classes the message names only to give an example of them ("fluoroquinolones like
    levofloxacin" → levofloxacin)."""
    classes: set[str] = set()
    for found in EXAMPLE_RE.finditer(text):
        before = " ".join(text[: found.start()].split()[-4:])
        after = " ".join(text[found.end():].split()[:4])
        if DrugDictionary.find(after):
            classes.update(DrugDictionary.find(before))
    kept = [d for d in drugs if d not in classes]
    return kept or drugs


def drugs_for_label(text: str, drugs: list[str]) -> list[str]:
    """The drugs whose labels the question needs, in the order named (classes replaced by their example)."""
    return class_examples(text, drugs)[:MAX_DRUGS]


def parse(text: str, drugs: list[str], about: str | None = None) -> dict[str, Any]:
    """drug_name / other_drugs / topic for a label question about ``drugs`` (the message's drug mentions); the
    topic is read from ``about`` (the part of the message that asks about the label) when given."""
    named = drugs_for_label(text, drugs)
    out: dict[str, Any] = {}
    if named:
        out["drug_name"] = named[0]
        if len(named) > 1:
            out["other_drugs"] = named[1:]
    subject = topic(text if about is None else about)
    if subject:
        out["topic"] = subject
    return out
