"""Statements that negate what a write would record: "NOT allergic to latex", "no known drug allergies",
"denies allergies", "latex allergy ruled out", "never had a reaction to amoxicillin" (no allergy to record), and
"stop lisinopril", "no longer on metformin", "doesn't take warfarin any more" (no prescription to write).

The agent's rules read these so that a negated write request never becomes the positive write ("He is NOT
allergic to latex, please record that" is not an allergy entry), and the allergy extractor never takes a
negated substance as the allergen. Finding them is all this module does; what follows is the rules' decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

#: A named thing after "to"/"with"/"on": one to three words, up to the end of the clause.
_WHAT = r"[a-z][\w\-/]*(?:\s+(?!(?:please|and|but|so|then|any\s*more|anymore)\b)[a-z][\w\-/]*){0,2}"
_ALLERGY_NOUN = r"(?:allerg(?:y|ies)|intoleranc(?:e|es)|sensitivit(?:y|ies))"
_NEGATED_ALLERGY_RE = re.compile(
    # "NOT allergic to latex", "not actually allergic", "not penicillin allergic", "isn't allergic"
    r"\b(?:(?:is|are|was|were|am|'s|'re)\s+)?(?:not|n't|no\s+longer|never\s+been)\s+(?:(?:actually|really|truly|"
    r"even)\s+)?(?:(?!(?:severely|very|badly|mildly|seriously|that)\s)[a-z\-]+\s+)?allergic\b(?:\s+to\s+" + _WHAT + r")?"
    r"|\bisn'?t\s+(?:[a-z\-]+\s+)?allergic(?:\s+to\s+" + _WHAT + r")?"
    # "no known drug allergies", "no penicillin allergy", "no reaction to X"
    r"|\bno\s+(?:known\s+|documented\s+|recorded\s+|previous\s+|history\s+of\s+)?(?:[a-z\-]+\s+){0,2}?"
    r"(?:" + _ALLERGY_NOUN + r"|reactions?)\b(?:\s+(?:to|with)\s+" + _WHAT + r")?"
    # "doesn't have a latex allergy", "never had an allergy to X"
    r"|\b(?:doesn'?t|does\s+not|don'?t|do\s+not|didn'?t|did\s+not)\s+have\s+(?:a\s+|an\s+|any\s+)?(?:[a-z\-]+\s+)?"
    + _ALLERGY_NOUN + r"(?:\s+to\s+" + _WHAT + r")?"
    r"|\b(?:nkda|nka|nkfa|nkma)\b"
    # "allergies: none", "allergies: nil known"
    r"|\b" + _ALLERGY_NOUN + r"\s*[:\-–]\s*(?:none|nil|no\s+known|nkda|nka)\b(?:\s+known)?"
    r"|\bden(?:y|ies|ied|ying)\s+(?:any\s+|all\s+)?(?:known\s+)?(?:[a-z\-]+\s+){0,2}?"
    r"(?:allerg(?:y|ies)|reactions?)(?:\s+(?:to|with)\s+" + _WHAT + r")?"
    # "penicillin - none known", "sulfa: negative", "latex - nil": a substance with a negative answer
    r"|\b[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?\s*[-–:]\s*(?:none(?:\s+known)?|nil(?:\s+known)?|negative|no\s+reaction)\b"
    # de-labelling: "allergy label was removed", "delabelled", "tolerated an amoxicillin challenge"
    r"|\b(?:[a-z\-]+\s+){0,2}?(?:allerg(?:y|ies)\s+)?label\s+(?:was\s+|has\s+been\s+|is\s+)?(?:removed|taken\s+off|"
    r"withdrawn)\b|\bde-?labell?(?:ed|ing)?\b(?:\s+(?:of|from)\s+" + _WHAT + r")?"
    r"|\btolerated\s+(?:a\s+|an\s+|the\s+)?(?:[a-z\-]+\s+){0,2}?(?:challenge|test\s+dose|oral\s+challenge|"
    r"course|dose)\b|\b(?:[a-z][\w\-]*\s+){0,2}?(?:challenge|test\s+dose)\s+(?:was\s+)?(?:negative|passed|tolerated)\b"
    r"|\bnever\s+(?:had|has\s+had|reacted|developed)\s+(?:a\s+|an\s+|any\s+)?(?:[a-z]+\s+)?(?:reactions?|allerg\w*)?"
    r"(?:\s*(?:to|with)\s+" + _WHAT + r")"
    # "latex allergy was ruled out", "latex allergy - negative", "the penicillin allergy is false"
    r"|\b(?:[a-z]+\s+)?allerg(?:y|ies)\s*[-–:,]?\s*(?:(?:was|were|has\s+been|have\s+been|is|are)\s+)?(?:ruled\s+out|"
    r"excluded|disproved|disproven|refuted|de-?labell?ed|removed|negative|false|wrong|incorrect|not\s+true|"
    r"not\s+real|mistaken)\b",
    re.IGNORECASE,
)
#: "allergic to penicillin but not (to) latex": the part after "but not" is negated.
_BUT_NOT_RE = re.compile(r"\ballergic\s+to\s+" + _WHAT + r"(?P<neg>\s+(?:and|but)\s+not\s+(?:to\s+)?" + _WHAT + ")",
                         re.IGNORECASE)
_NEGATED_ORDER_RE = re.compile(
    r"\b(?:stop|stopped|discontinue[ds]?|cease[ds]?|withdraw|withhold|suspend|hold|d/c)\s+(?:(?:her|his|their|the|"
    r"taking|giving|using)\s+)*" + _WHAT +
    r"|\bno\s+longer\s+(?:on|taking|takes|using|uses|needs?|prescribed)\s+" + _WHAT +
    r"|\b(?:doesn'?t|does\s+not|don'?t|do\s+not|isn'?t|is\s+not|not)\s+(?:take|taking|on|using|use)\s+" + _WHAT +
    r"\s+(?:any\s*more|anymore|now)\b"
    r"|\b(?:came|come|taken|gone)\s+off\s+(?:(?:her|his|the)\s+)?" + _WHAT +
    r"|\btake\s+(?:her|him|them|the\s+patient)\s+off\s+(?:(?:her|his|the)\s+)?" + _WHAT +
    r"|\b(?:prescribe|order|start|give)\s+(?:nothing|none)\b",
    re.IGNORECASE,
)

Kind = Literal["allergy", "order"]


@dataclass(frozen=True)
class Negation:
    """A negated statement: what it negates (an allergy or an order), its words as typed, where they are."""

    kind: Kind
    words: str
    span: tuple[int, int]


def negations(text: str) -> list[Negation]:
    """The negated allergy and order statements in ``text``, in the order they are written."""
    found = [Negation("allergy", re.sub(r"(?i)^(?:is|are|was|were|am)\s+", "", m.group(0).strip()), m.span())
             for m in _NEGATED_ALLERGY_RE.finditer(text or "")]
    found += [Negation("allergy", m.group("neg").strip(), m.span("neg")) for m in _BUT_NOT_RE.finditer(text or "")]
    found += [Negation("order", m.group(0).strip(), m.span()) for m in _NEGATED_ORDER_RE.finditer(text or "")
              if not any(a <= m.start() < b for a, b in (n.span for n in found))]
    return sorted(found, key=lambda n: n.span)


def without_negations(text: str) -> str:
    """``text`` with its negated statements blanked (same length: positions still point at the same words)."""
    out = text or ""
    for negation in negations(out):
        a, b = negation.span
        out = out[:a] + " " * (b - a) + out[b:]
    return out


def no_allergy_read(said: tuple[str, ...], substances: tuple[str, ...], drugs: bool, patient: str | None) -> str:
    """What a message that only says there is no allergy ("sulfa - negative", "penicillin: none known") was read as,
    that nothing was written, and the writes it may mean for ``patient`` (the active one; None: no patient open)."""
    quoted = " and ".join(f"'{s}'" for s in said)
    drug = any(re.search(r"(?i)\bdrug|\bmedic|\bnk[dm]a\b", s) for s in said)
    what = f"no {' or '.join(substances)} allergy" if substances else f"no known {'drug ' if drug else ''}allergy"
    head = (f"{quoted} {'reads' if len(said) == 1 else 'read'} as a statement that there is {what}, with no write "
            "asked; nothing was written to the record.")
    if not patient:
        return (f"{head} To record it, open the patient's record first, then say what to write: 'record NKDA', or "
                "'remove the <substance> allergy label, reason: …'.")
    meant = []
    if drugs:
        meant.append(f"{patient} has no known drug allergies at all: record NKDA (refused while an active drug allergy "
                     "is on record)")
    if substances:
        meant.append(f"a {' or '.join(substances)} allergy label on {patient}'s record no longer applies: remove it, "
                     "with the reason (a challenge or test passed, or entered in error)")
    if len(meant) == 1:
        return f"{head} If you meant to record it: {meant[0]}. It is checked on its own card."
    return f"{head} If you meant to record it, say which: {'; or '.join(meant)}. Each is checked on its own card."


def not_written(found: list[Negation]) -> str:
    """The one sentence that says what was not written and why."""
    allergies = [f"'{n.words}'" for n in found if n.kind == "allergy"]
    orders = [f"'{n.words}'" for n in found if n.kind == "order"]
    parts = []
    if allergies:
        parts.append(f"{' and '.join(allergies)} {'is' if len(allergies) == 1 else 'are'} not recorded as an allergy")
    if orders:
        parts.append(f"{' and '.join(orders)} {'is' if len(orders) == 1 else 'are'} not a prescription (stopping a "
                     "medication is not something this assistant records)")
    return "; ".join(parts) + "; nothing was written to the record."
