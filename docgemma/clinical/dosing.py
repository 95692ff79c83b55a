"""Dose, route and frequency of an order: parsed into a structured FHIR ``Dosage`` where possible. An order
that cannot be parsed keeps its free text (``Dosage.text``). The dose check of the approval card (ranges,
units, age and weight) is :mod:`.dose_check`, its figures :mod:`.dose_table`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

UCUM = "http://unitsofmeasure.org"
SNOMED = "http://snomed.info/sct"

#: Written unit → (UCUM code, display, family). Mass is compared in mg.
UNITS: dict[str, tuple[str, str, str]] = {
    "mg": ("mg", "mg", "mass"), "milligram": ("mg", "mg", "mass"), "milligrams": ("mg", "mg", "mass"),
    "g": ("g", "g", "mass"), "gram": ("g", "g", "mass"), "grams": ("g", "g", "mass"), "gm": ("g", "g", "mass"),
    "mcg": ("ug", "mcg", "mass"), "ug": ("ug", "mcg", "mass"), "µg": ("ug", "mcg", "mass"),
    "microgram": ("ug", "mcg", "mass"), "micrograms": ("ug", "mcg", "mass"),
    "ml": ("mL", "mL", "volume"), "milliliter": ("mL", "mL", "volume"), "millilitre": ("mL", "mL", "volume"),
    "milliliters": ("mL", "mL", "volume"), "millilitres": ("mL", "mL", "volume"),
    "unit": ("[iU]", "units", "units"), "units": ("[iU]", "units", "units"), "iu": ("[iU]", "units", "units"),
    "tablet": ("{tablet}", "tablet", "count"), "tablets": ("{tablet}", "tablet", "count"),
    "tab": ("{tablet}", "tablet", "count"), "tabs": ("{tablet}", "tablet", "count"),
    "capsule": ("{capsule}", "capsule", "count"), "capsules": ("{capsule}", "capsule", "count"),
    "cap": ("{capsule}", "capsule", "count"), "caps": ("{capsule}", "capsule", "count"),
    "puff": ("{puff}", "puff", "count"), "puffs": ("{puff}", "puff", "count"),
    "drop": ("{drop}", "drop", "count"), "drops": ("{drop}", "drop", "count"),
    # Amounts of substance: electrolytes are ordered in these, never in mg.
    "meq": ("meq", "mEq", "meq"), "mmol": ("mmol", "mmol", "mmol"),
    # Never a dose unit: read so that "5 kg" reaches the card as a wrong kind of unit instead of vanishing.
    "kg": ("kg", "kg", "body_mass"),
}
TO_MG = {"mg": 1.0, "g": 1000.0, "ug": 0.001}

#: Route words → SNOMED CT route (qualifier value).
ROUTES: tuple[tuple[str, str, str], ...] = (
    (r"\b(?:oral(?:ly)?|po|by mouth)\b", "26643006", "Oral route"),
    (r"\b(?:iv|intravenous(?:ly)?)\b", "47625008", "Intravenous route"),
    (r"\b(?:im|intramuscular(?:ly)?)\b", "78421000", "Intramuscular route"),
    (r"\b(?:sc|sq|subcut|subcutaneous(?:ly)?)\b", "34206005", "Subcutaneous route"),
    (r"\b(?:sl|sublingual(?:ly)?)\b", "37839007", "Sublingual route"),
    (r"\b(?:pr|rectal(?:ly)?|per rectum)\b", "37161004", "Per rectum"),
    (r"\b(?:topical(?:ly)?)\b", "6064005", "Topical route"),
    (r"\b(?:inhaled|inhalation|inh)\b", "447694001", "Respiratory tract route"),
)

#: A dose as a clinician writes it in a message ("500 mg", "1-2 tablets", "875/125 mg", "20 mmol"): what the
#: order extractor takes as the order's dosage. Wider than :func:`parse_dose` reads (mmol, mEq, mg/kg and sachets
#: are kept as written for the card, not structured).
DOSE_TEXT_RE = re.compile(
    r"(?<![\w/.])(\d+(?:[.,]\d+)?(?:\s*/\s*\d+(?:[.,]\d+)?)?(?:\s*(?:-|to)\s*\d+(?:[.,]\d+)?)?\s*"
    r"(?:mg|mcg|µg|micrograms?|milligrams?|g|grams?|units?|iu|ml|mmol|meq|mg/kg|tablets?|tabs?|capsules?|caps?|"
    r"puffs?|drops?|sachets?)(?![a-z]))",
    re.IGNORECASE,
)

_NUMBER = r"\d+(?:[.,]\d+)?(?:/\d+(?:[.,]\d+)?)?"  # 500, 0.5, 2,5, 1/2 and a combination's 875/125
_UNIT = "(" + "|".join(sorted(map(re.escape, UNITS), key=len, reverse=True)) + r")\b"
#: "500 mg", or a range "1-2 tablets" / "500 to 1000 mg" (checked at its upper end, stored as doseRange).
_DOSE_RE = re.compile(rf"(?<![\d.,/])({_NUMBER})(?:\s*(?:-|–|to)\s*({_NUMBER}))?\s*{_UNIT}", re.IGNORECASE)
_WORDS = {"once": 1, "one": 1, "twice": 2, "two": 2, "three": 3, "thrice": 3, "four": 4, "five": 5, "six": 6}
_PER_DAY_CODES = {"od": 1, "qd": 1, "daily": 1, "mane": 1, "nocte": 1, "qhs": 1, "bid": 2, "bd": 2, "tid": 3,
                  "tds": 3, "qid": 4, "qds": 4}
_PERIOD_UNITS = {"second": "s", "sec": "s", "minute": "min", "min": "min", "hour": "h", "hr": "h", "h": "h",
                 "day": "d", "week": "wk", "month": "mo"}
_HOURS = {"s": 1 / 3600, "min": 1 / 60, "h": 1.0, "d": 24.0, "wk": 168.0, "mo": 720.0}


@dataclass(frozen=True)
class Dose:
    """One dose: a number and a unit (UCUM code, display, family). ``combination`` for a combination strength
    ("875/125 mg"): ``value`` is then the first ingredient's amount and no single quantity is written."""

    value: float
    code: str
    display: str
    family: str
    combination: bool = False

    @property
    def mg(self) -> float | None:
        """The dose in mg when it is a mass."""
        return self.value * TO_MG[self.code] if self.code in TO_MG else None


@dataclass(frozen=True)
class Frequency:
    """``frequency`` doses per ``period`` ``period_unit`` (FHIR Timing.repeat); ``count=1`` for a single dose."""

    frequency: int = 1
    period: float = 1.0
    period_unit: str = "d"
    as_needed: bool = False
    count: int | None = None
    #: False for "as needed" with no schedule: no Timing.repeat, and no daily total can be computed.
    scheduled: bool = True

    @property
    def interval_hours(self) -> float:
        """Hours between doses."""
        return self.period * _HOURS[self.period_unit] / self.frequency

    @property
    def per_day(self) -> float:
        """Doses per day (a single dose counts once)."""
        return 1.0 if self.count == 1 else 24.0 / self.interval_hours


def _is_combination(text: str) -> bool:
    """"875/125", "5/325": two strengths of a combination product, not the fraction "1/2" or "3/4"."""
    if "/" not in text:
        return False
    top, bottom = (float(p.replace(",", ".")) for p in text.split("/", 1))
    return not (0 < top < bottom <= 8)


def _value(text: str) -> float:
    if "/" in text:
        top, bottom = text.split("/", 1)
        if _is_combination(text):
            return float(top.replace(",", "."))
        return float(top) / float(bottom) if float(bottom) else float("inf")
    return float(text.replace(",", "."))


def parse_dose(text: str) -> Dose | None:
    """``"500 mg"`` → Dose(500, mg); a range gives its upper end (see :func:`parse_dose_range`); None when no
    number with a known unit is there."""
    found = parse_dose_range(text)
    return found[1] if found else None


def parse_dose_range(text: str) -> tuple[Dose, Dose] | None:
    """(low, high) doses: the same dose twice for a single value."""
    match = _DOSE_RE.search(text or "")
    if match is None:
        return None
    code, display, family = UNITS[match.group(3).lower()]
    combination = _is_combination(match.group(1))
    low = Dose(_value(match.group(1)), code, display, family, combination)
    high = Dose(_value(match.group(2)), code, display, family, combination) if match.group(2) else low
    return low, high


def dose_refusal(text: str) -> str | None:
    """Why ``text`` cannot be read as one dose without guessing (e.g. no number with a unit, an ambiguous
    separator), for the card's finding; None when :func:`parse_dose` reads it."""
    return None if parse_dose(text) is not None else "it has no number with a unit this system reads (e.g. 500 mg)"


def _number(word: str) -> float | None:
    if word in _WORDS:
        return float(_WORDS[word])
    try:
        return float(word)
    except ValueError:
        return None


def parse_frequency(text: str) -> Frequency | None:
    """Common ways of writing a frequency (``twice daily``, ``bid``, ``every 6 hours``, ``q8h``, ``weekly``,
    ``3 times a day``, ``as needed``, ``once``); None when none is recognised."""
    t = " ".join((text or "").lower().replace("-", " ").split())
    as_needed = bool(re.search(r"\b(?:prn|as needed|when needed|as required)\b", t))
    # A range ("every 4-6 hours", "q4-6h") is checked at its shortest interval: the most the order allows.
    if m := re.search(r"\b(?:every|q)\s*(\d+(?:\.\d+)?)\s+(?:to\s+)?(\d+(?:\.\d+)?)\s*"
                      r"(second|sec|minute|min|hour|hr|h|day|week|month)s?\b", t):
        low = min(float(m.group(1)), float(m.group(2)))
        if low <= 0:
            return None
        return Frequency(1, low, _PERIOD_UNITS[m.group(3)], as_needed)
    if m := re.search(r"\bevery (other|\d+(?:\.\d+)?|one|two|three|four|six|twelve)?\s*"
                      r"(second|sec|minute|min|hour|hr|h|day|week|month)s?\b", t):
        amount = m.group(1)
        period = 2.0 if amount == "other" else (_number(amount) if amount else 1.0)
        if amount == "twelve":
            period = 12.0
        if period is None or period <= 0:
            return None
        return Frequency(1, period, _PERIOD_UNITS[m.group(2)], as_needed)
    if m := re.search(r"\bq\s*(\d+(?:\.\d+)?)\s*(h|hr|hrs|hours?|min|mins|minutes?)\b", t):
        unit = "min" if m.group(2).startswith("min") else "h"
        return Frequency(1, float(m.group(1)), unit, as_needed)
    if m := re.search(r"\b(once|twice|thrice|one|two|three|four|five|six|\d+)\s*(?:times?|x)?\s*(?:a|per|each|every|/)?\s*"
                      r"(day|daily|week|weekly|hour|hourly)\b", t):
        n = _number(m.group(1))
        if n is None or n <= 0 or n != int(n):
            return None
        unit = {"day": "d", "daily": "d", "week": "wk", "weekly": "wk", "hour": "h", "hourly": "h"}[m.group(2)]
        return Frequency(int(n), 1.0, unit, as_needed)
    for code, per_day in _PER_DAY_CODES.items():
        if re.search(rf"\b{code}\b", t):
            return Frequency(per_day, 1.0, "d", as_needed)
    if re.search(r"\b(?:every (?:morning|evening|night)|at (?:night|bedtime)|nightly|in the (?:morning|evening))\b", t):
        return Frequency(1, 1.0, "d", as_needed)
    if re.search(r"\bhourly\b", t):
        return Frequency(1, 1.0, "h", as_needed)
    if re.search(r"\bweekly\b", t):
        return Frequency(1, 1.0, "wk", as_needed)
    if re.search(r"\bmonthly\b", t):
        return Frequency(1, 1.0, "mo", as_needed)
    if re.search(r"\b(?:once|stat|single dose|one dose|one time)\b", t):
        return Frequency(count=1, as_needed=as_needed)
    if as_needed:
        return Frequency(as_needed=True, scheduled=False)
    return None


#: A frequency as a clinician types it, found in a message: every form :func:`parse_frequency` reads, and any
#: "every <n> <unit>" (an implausible one included: it must reach the card, not vanish).
_FREQUENCY_SPAN_RE = re.compile(
    r"\b(?:every\s+(?:other\s+|\d+(?:\.\d+)?(?:\s*(?:-|–|to)\s*\d+(?:\.\d+)?)?\s*|one\s+|two\s+|three\s+|four\s+|"
    r"six\s+|eight\s+|twelve\s+)?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|morning|"
    r"evening|night)"
    r"|q\.?\s*\d+(?:\.\d+)?(?:\s*-\s*\d+)?\s*(?:h|hrs?|hours?|mins?|minutes?)"
    r"|(?:once|twice|thrice|one|two|three|four|five|six|[1-9]\d*)\s*(?:times?|x)\s*(?:a|per|each|every|/)?\s*"
    r"(?:day|daily|week|weekly|hour|hourly)"
    r"|(?:once|twice|thrice)\s+(?:daily|weekly|a\s+day|a\s+week|per\s+day)"
    r"|b\.i\.d\.?|t\.i\.d\.?|q\.i\.d\.?|q\.d\.?|o\.d\.?|bid|tid|qid|qds|tds|bd|od|qd|qhs|qam|qpm|nocte|mane"
    r"|daily|nightly|hourly|weekly|monthly|at night|at bedtime|in the morning|in the evening"
    r"|stat|once|single dose|one dose)\b",
    re.IGNORECASE,
)
_AS_NEEDED_RE = re.compile(r"\b(?:prn|as needed|when needed|as required|if needed)\b", re.IGNORECASE)


def frequency_match(text: str) -> tuple[str, list[tuple[int, int]]] | None:
    """The frequency as written in ``text`` ("every 5 minutes", "tds", "every 6 hours as needed") and where its
    words are; None when it names none."""
    found = _FREQUENCY_SPAN_RE.search(text or "")
    needed = _AS_NEEDED_RE.search(text or "")
    if found is None:
        return (needed.group(0), [needed.span()]) if needed else None
    words, spans = found.group(0), [found.span()]
    if needed and needed.group(0).lower() not in words.lower():
        words += f" {needed.group(0)}"
        spans.append(needed.span())
    return words, spans


def frequency_words(text: str) -> str | None:
    """The frequency as written in ``text`` (see :func:`frequency_match`), or None."""
    found = frequency_match(text)
    return found[0] if found else None


def route_match(text: str) -> re.Match[str] | None:
    """Where ``text`` names a route ("PO", "by mouth"), or None (same vocabulary as :func:`parse_route`)."""
    for pattern, _code, _display in ROUTES:
        found = re.search(pattern, text or "", re.IGNORECASE)
        if found:
            return found
    return None


def route_words(text: str) -> str | None:
    """The words that name a route in ``text``, as written, or None."""
    found = route_match(text)
    return found.group(0) if found else None


def parse_route(text: str) -> tuple[str, str] | None:
    """(SNOMED code, display) of the route named in ``text``, or None."""
    lowered = (text or "").lower()
    for pattern, code, display in ROUTES:
        if re.search(pattern, lowered):
            return code, display
    return None


def dosage_instruction(dosage: str, frequency: str, notes: str | None = None,
                       duration: str | None = None) -> dict[str, Any]:
    """A FHIR R4 ``Dosage``: always the text as ordered (duration included), plus doseQuantity, timing (with the
    course length as ``boundsDuration``) and route where parsed. A combination strength ("875/125 mg") stays
    text only: it is not one quantity."""
    out: dict[str, Any] = {"text": " ".join(filter(None, (dosage, frequency, duration_phrase(duration)))).strip()}
    timing = parse_frequency(frequency)
    route = parse_route(" ".join(filter(None, (dosage, frequency, notes))))
    course = parse_duration(duration or "")
    if timing is not None:
        if timing.count == 1:
            out["timing"] = {"repeat": {"count": 1}}
        elif timing.scheduled:
            out["timing"] = {"repeat": {"frequency": timing.frequency, "period": _plain(timing.period),
                                        "periodUnit": timing.period_unit}}
        if timing.as_needed:
            out["asNeededBoolean"] = True
    if course is not None and course.value is not None and "repeat" in out.get("timing", {}) \
            and "count" not in out["timing"]["repeat"]:
        out["timing"]["repeat"]["boundsDuration"] = course.quantity()
    if route is not None:
        out["route"] = {"coding": [{"system": SNOMED, "code": route[0], "display": route[1]}], "text": route[1]}
    doses = parse_dose_range(dosage)
    if doses is not None and doses[0].combination:
        pass
    elif doses is not None and doses[0] == doses[1]:
        out["doseAndRate"] = [{"doseQuantity": _quantity(doses[0])}]
    elif doses is not None:
        out["doseAndRate"] = [{"doseRange": {"low": _quantity(doses[0]), "high": _quantity(doses[1])}}]
    return out


def duration_phrase(duration: str | None) -> str:
    """"7 days" → "for 7 days"; "until review", "x7d", "long-term" as written; "" for none."""
    if not duration:
        return ""
    text = duration.strip()
    return text if re.match(r"(?i)^(for|until|till|x|long|ongoing|indefinite|lifelong)\b", text) else f"for {text}"


@dataclass(frozen=True)
class Duration:
    """How long an order runs: ``value`` ``unit`` (UCUM d, wk, mo), or words only ("until review")."""

    label: str
    value: float | None = None
    unit: str | None = None

    def quantity(self) -> dict[str, Any]:
        """FHIR Duration (UCUM)."""
        assert self.value is not None and self.unit is not None
        shown = {"d": "days", "wk": "weeks", "mo": "months"}[self.unit]
        return {"value": _plain(self.value), "unit": shown, "system": UCUM, "code": self.unit}


_DURATION_UNITS = {"d": "d", "day": "d", "days": "d", "w": "wk", "wk": "wk", "wks": "wk", "week": "wk",
                   "weeks": "wk", "m": "mo", "mo": "mo", "mos": "mo", "month": "mo", "months": "mo"}
_SHOWN_UNITS = {"d": ("day", "days"), "wk": ("week", "weeks"), "mo": ("month", "months")}
_COUNT = r"(\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|twenty-one|" \
         r"twenty one|thirty|a further|another)"
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "twenty-one": 21,
                "twenty one": 21, "thirty": 30}
_DURATION_RES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"\b(?:for|over)\s+(?:the\s+next\s+|a\s+total\s+of\s+|a\s+further\s+|another\s+)?{_COUNT}\s*"
               r"(days?|weeks?|wks?|months?|mos?)\b", re.IGNORECASE),
    re.compile(r"(?<![\w/])x\s*(\d+(?:\.\d+)?)\s*(d|days?|w|wks?|weeks?|m|months?)\b", re.IGNORECASE),
    re.compile(r"\b(\d+)\s*/\s*(7|52|12)\b(?!\s*(?:mg|mcg|g|ml|units?)\b)(?!/)", re.IGNORECASE),
    re.compile(rf"\b{_COUNT}[\s-]*(days?|weeks?|months?)[\s-]+(?:course|supply|treatment)\b", re.IGNORECASE),
    re.compile(r"\bfor\s+a\s+(fortnight)\b", re.IGNORECASE),
)
_OPEN_DURATION_RE = re.compile(
    r"\b(?:until|till|til)\s+(?:further\s+notice|(?:the\s+)?(?:next\s+)?(?:review|reviewed|seen|follow[- ]?up|"
    r"clinic(?:\s+review)?|discharge|symptoms?\s+(?:resolve|settle)\w*|finished|complete[d]?)(?:\s+in\s+clinic)?)\b"
    r"|\b(?:long[- ]term|ongoing|indefinitely|lifelong|for\s+life)\b",
    re.IGNORECASE,
)


def _count(word: str) -> float | None:
    word = word.lower().strip()
    if word in _COUNT_WORDS:
        return float(_COUNT_WORDS[word])
    try:
        return float(word)
    except ValueError:
        return None


def find_duration(text: str) -> tuple[Duration, str] | None:
    """(the duration, the words as typed) in ``text``: "for 7 days", "x7d", "7/7", "2/52", "for 2 weeks",
    "a 5-day course", "until review"; None when the message gives none."""
    found = duration_match(text)
    return (found[0], found[1].group(0)) if found else None


def duration_match(text: str) -> tuple[Duration, re.Match[str]] | None:
    """The duration in ``text`` and where it is written (see :func:`find_duration`)."""
    for pattern in _DURATION_RES:
        found = pattern.search(text or "")
        if found is None:
            continue
        if found.group(1).lower() == "fortnight":
            return Duration("2 weeks", 2.0, "wk"), found
        if "/" in found.group(0):
            value, unit = float(found.group(1)), {"7": "d", "52": "wk", "12": "mo"}[found.group(2)]
        else:
            amount = _count(found.group(1))
            if amount is None or amount <= 0:
                continue
            value, unit = amount, _DURATION_UNITS[found.group(2).lower()]
        one, many = _SHOWN_UNITS[unit]
        return Duration(f"{_fmt(value)} {one if value == 1 else many}", value, unit), found
    opened = _OPEN_DURATION_RE.search(text or "")
    if opened is not None:
        return Duration(" ".join(opened.group(0).split()).lower()), opened
    return None


def parse_duration(text: str) -> Duration | None:
    """A duration argument ("7 days", "2 weeks", "until review") read back: None when it says none."""
    text = (text or "").strip()
    if not text or text.lower() == "not specified":
        return None
    found = find_duration(text if re.match(r"(?i)^(for|x|until|till|\d+\s*/)", text) else f"for {text}")
    return found[0] if found else Duration(text)


def _quantity(dose: Dose) -> dict[str, Any]:
    return {"value": _plain(round(dose.value, 6)), "unit": dose.display, "system": UCUM, "code": dose.code}


def _plain(value: float) -> float | int:
    return int(value) if value == int(value) else value


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:g}"
