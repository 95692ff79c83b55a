"""Dose, route and frequency of an order: parsed into a structured FHIR ``Dosage`` where possible. An order
that cannot be parsed keeps its free text (``Dosage.text``). The dose check of the approval card (ranges,
units, age and weight) is :mod:`.dose_check`, its figures :mod:`.dose_table`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from docgemma.clinical.numbers import NUMBER, NUMBER_WORD_BEFORE, WORDS, Refused, read_number

UCUM = "http://unitsofmeasure.org"
SNOMED = "http://snomed.info/sct"

#: Written unit → (UCUM code, display, family). Mass is compared in mg.
UNITS: dict[str, tuple[str, str, str]] = {
    "mg": ("mg", "mg", "mass"), "mgs": ("mg", "mg", "mass"), "milligram": ("mg", "mg", "mass"),
    "milligrams": ("mg", "mg", "mass"),
    "g": ("g", "g", "mass"), "gram": ("g", "g", "mass"), "grams": ("g", "g", "mass"), "gm": ("g", "g", "mass"),
    "mcg": ("ug", "mcg", "mass"), "ug": ("ug", "mcg", "mass"), "µg": ("ug", "mcg", "mass"),
    "microgram": ("ug", "mcg", "mass"), "micrograms": ("ug", "mcg", "mass"),
    "ml": ("mL", "mL", "volume"), "mls": ("mL", "mL", "volume"), "milliliter": ("mL", "mL", "volume"),
    "millilitre": ("mL", "mL", "volume"),
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
    "milliequivalent": ("meq", "mEq", "meq"), "milliequivalents": ("meq", "mEq", "meq"),
    "millimole": ("mmol", "mmol", "mmol"), "millimoles": ("mmol", "mmol", "mmol"),
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

_DOSE_UNITS = (r"mg/kg|mg/m2|mcg/kg|mgs?|mcg|µg|micrograms?|milligrams?|g|grams?|units?|iu|mls?|mmol|meq|millimoles?|"
               r"milliequivalents?|tablets?|"
               r"tabs?|capsules?|caps?|puffs?|drops?|sachets?|kg")
#: A fraction's or a combination strength's second number ("1/2 tablet", "875/125 mg"): plain digits only.
_FRACTION = r"(?:\s*/\s*\d+(?:[.,]\d+)?)?"
_AMOUNT = NUMBER + _FRACTION
#: "a"/"of a" between a number and its unit: "half a tablet".
_ARTICLE = r"(?:\s+(?:a|an|of\s+an?)(?=\s))?"
_COUNT = r"(?:\d+|one|two|three|four|five|six)"
#: A count beside the strength ("2 x 500 mg", "two 500 mg tablets", "500 mg x 2"): the dose given is not the
#: strength written. Kept in the dose text so that the dose is refused, never read as the strength alone; "x7d"
#: and "x 5 days" are a course's length, not a count.
_BEFORE = (rf"(?P<before>\b{_COUNT}\s*[x×*]\s*|\b(?:one|two|three|four|five|six)\s+(?=\d)|\b\d+\s+(?=\d)(?!\d{{3}}(?![\d.,]))"
           r"|\b\d+\s*[,.']\s+(?=\d)|\b\d+\s+[,.'](?=\d))?")
_AFTER = r"(?P<after>\s*[x×*]\s*\d+\b(?!\s*(?:d|days?|w|wks?|weeks?|m|mo|months?|doses?)\b))?"
#: A dose as a clinician writes it in a message ("500 mg", "1-2 tablets", "875/125 mg", "20 mmol", "5,000 mg",
#: "five thousand mg", "-5 mg", "1e4 units", "5 kg", "2 x 500 mg"): what the order extractor takes as the order's
#: dosage, in every number form :mod:`docgemma.clinical.numbers` reads or refuses, so that a form it refuses still
#: reaches the card as typed. Wider than :func:`parse_dose` reads (sachets and doses per kg are kept as written).
DOSE_TEXT_RE = re.compile(
    rf"(?<![\w/.,]){_BEFORE}(?P<amount>{_AMOUNT}(?:(?:\s*(?:{_DOSE_UNITS}))?\s*(?:-|–|to)\s*{_AMOUNT})?){_ARTICLE}\s*"
    rf"(?P<unit>{_DOSE_UNITS})(?![a-z]){_AFTER}",
    re.IGNORECASE,
)

_UNIT = "(?:" + "|".join(sorted(map(re.escape, UNITS), key=len, reverse=True)) + r")\b"
#: "500 mg", or a range "1-2 tablets" / "500 to 1000 mg" / "5mg to 10mg" (checked at its upper end, stored as
#: doseRange); ``per``: a dose per kg or m² of the patient, which is not one dose.
_DOSE_RE = re.compile(rf"(?<![\w.,/]){_BEFORE}(?P<low>{_AMOUNT})"
                      rf"(?:(?:\s*(?P<low_unit>{_UNIT}))?\s*(?:-|–|to)\s*(?P<high>{_AMOUNT}))?{_ARTICLE}\s*(?P<unit>{_UNIT})"
                      rf"(?P<per>\s*/\s*(?:kg|m2|m²))?{_AFTER}", re.IGNORECASE)
_WORDS = {"once": 1, "one": 1, "twice": 2, "two": 2, "three": 3, "thrice": 3, "four": 4, "five": 5, "six": 6}
_PER_DAY_CODES = {"od": 1, "qd": 1, "daily": 1, "mane": 1, "nocte": 1, "qhs": 1, "bid": 2, "bd": 2, "tid": 3,
                  "tds": 3, "qid": 4, "qds": 4}
_PERIOD_UNITS = {"second": "s", "sec": "s", "minute": "min", "min": "min", "m": "min", "hour": "h", "hr": "h",
                 "h": "h", "day": "d", "d": "d", "week": "wk", "month": "mo"}
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
    #: A single dose written as "once" alone (see ``_BARE_ONCE_RE``): the card says how it was read.
    bare_once: bool = False

    @property
    def interval_hours(self) -> float:
        """Hours between doses."""
        return self.period * _HOURS[self.period_unit] / self.frequency

    @property
    def per_day(self) -> float:
        """Doses per day (a single dose counts once)."""
        return 1.0 if self.count == 1 else 24.0 / self.interval_hours

    def described(self) -> str:
        """How the frequency was read, in words for the card: "a single dose", "3 doses a day", "one dose every
        7 days", "no schedule, as needed"."""
        needed = " as needed" if self.as_needed else ""
        if self.count == 1:
            return f"a single dose{needed}"
        if not self.scheduled:
            return "no schedule, as needed"
        if self.interval_hours <= 24 * 1.000001:  # a float's slack: "every 24 hours" is once a day
            per_day = self.per_day
            return f"{per_day:.3g} dose{'' if per_day == 1 else 's'} a day{needed}"
        return f"one dose every {self.interval_hours / 24:.3g} days{needed}"


def _is_combination(top: float, bottom: float) -> bool:
    """"875/125", "5/325": two strengths of a combination product, not the fraction "1/2" or "3/4"."""
    return not (0 < top < bottom <= 8)


def _amount(text: str) -> tuple[float, bool] | Refused:
    """(value, is a combination strength) of one typed amount, or why it cannot be read."""
    if "/" not in text:
        value = read_number(text)
        return value if isinstance(value, Refused) else (value, False)
    top_text, bottom_text = text.split("/", 1)
    top, bottom = read_number(top_text), read_number(bottom_text)
    if isinstance(top, Refused):
        return top
    if isinstance(bottom, Refused):
        return bottom
    if _is_combination(top, bottom):
        return top, True
    return (top / bottom, False) if bottom else Refused(f"'{text.strip()}' divides by zero")


def _read_dose(text: str) -> tuple[Dose, Dose] | Refused | None:
    """(low, high) doses, why the dose text cannot be read, or None when it has no number with a unit."""
    match = _DOSE_RE.search(text or "")
    if match is None:
        return None
    written = " ".join(match.group(0).split())
    if match.group("per"):
        return Refused(f"'{written}' is a dose per body weight or surface area, not one dose: write the dose itself "
                       "(e.g. 500 mg)")
    before = match.group("before") or ""
    if re.fullmatch(r"one\s*|(?:one|1)\s*[x×*]\s*", before, re.IGNORECASE):
        before = ""  # "one 500 mg tablet", "1 x 500 mg": the strength is the dose
    if match.group("after") or re.search(r"[a-z×*]", before, re.IGNORECASE):
        return Refused(f"'{written}' has a count beside the strength: write the dose given at one time (e.g. 1000 mg, "
                       "or 2 tablets of 500 mg)")
    preceding = (text or "")[: match.start()]
    if before or re.search(r"\d[\s,.'\u00a0\u202f]*$", preceding) or (
            re.match(r"[a-z]", match.group("low") or "", re.IGNORECASE) and NUMBER_WORD_BEFORE.search(preceding)):
        return Refused(f"'{written}' is a number in parts (or follows another number): write the dose as one number")
    unit = match.group("unit").lower()
    if match.group("low_unit") and match.group("low_unit").lower() != unit:
        return Refused(f"'{written}' has two units: write the dose in one unit (e.g. 500-1000 mg)")
    code, display, family = UNITS[unit]
    read = [_amount(part) for part in (match.group("low"), match.group("high")) if part]
    refused = next((r for r in read if isinstance(r, Refused)), None)
    if refused is not None:
        return refused
    (low_value, combination), (high_value, _) = read[0], read[-1]  # type: ignore[misc]
    low = Dose(low_value, code, display, family, combination)
    return low, (Dose(high_value, code, display, family, combination) if len(read) > 1 else low)


def parse_dose(text: str) -> Dose | None:
    """``"500 mg"`` → Dose(500, mg); a range gives its upper end (see :func:`parse_dose_range`); None when no
    number with a known unit is there, or when the number cannot be read without guessing (:func:`dose_refusal`)."""
    found = parse_dose_range(text)
    return found[1] if found else None


def parse_dose_range(text: str) -> tuple[Dose, Dose] | None:
    """(low, high) doses: the same dose twice for a single value; None as for :func:`parse_dose`."""
    found = _read_dose(text)
    return None if found is None or isinstance(found, Refused) else found


def dose_refusal(text: str) -> str | None:
    """Why ``text`` cannot be read as one dose without guessing (an ambiguous separator, a number in exponent
    form or in words this system does not read, a dose per kg, no number with a unit), with the form to write
    instead, for the card's finding; None when :func:`parse_dose` reads it. The number rules are
    :mod:`docgemma.clinical.numbers`'."""
    found = _read_dose(text)
    if isinstance(found, Refused):
        return found.reason
    return "it has no number with a unit this system reads (e.g. 500 mg)" if found is None else None


def canonical_dose(text: str) -> str | None:
    """The dose in plain digits ("2.5 mg", "5000 mg") when ``text`` writes its number in a form other than plain
    English digits (words, a decimal comma), so the card shows the number read; None when it is already plain
    or is not read."""
    match = _DOSE_RE.search(text or "")
    found = _read_dose(text)
    if match is None or found is None or isinstance(found, Refused) or found[0].combination:
        return None
    typed = match.group("low") + (match.group("high") or "")
    if not re.search(r"[a-z½¼¾]|\d,\d{1,2}(?!\d)|^0,", typed, re.IGNORECASE):
        return None
    low, high = found
    amount = _fmt_plain(low.value) + ("" if low == high else f"-{_fmt_plain(high.value)}")
    return f"{amount} {match.group('unit')}"


def _fmt_plain(value: float) -> str:
    return f"{value:.10g}"


_TIME_UNIT = r"(second|sec|minute|min|hour|hr|h|day|week|month)s?"
#: How many periods, as typed after "every": "6", "ten", "other", "half an", "a quarter of an".
_PERIODS = (rf"(other|second|third|fourth|\d+(?:st|nd|rd|th)|half(?:\s+an?)?|(?:a\s+)?quarter(?:\s+of)?(?:\s+an?)?|"
            rf"\d+(?:\.\d+)?(?:/\d+)?|{WORDS})")
#: Once a day at a time of day: "once nightly", "at bedtime", "once in the morning", "every evening".
_TIME_OF_DAY_RE = re.compile(r"\b(?:(?:every|each|a|per)\s+(?:morning|evening|night)|at\s+(?:night|bedtime)|nightly|"
                             r"in\s+the\s+(?:morning|evening)|mane|nocte)\b")
#: Twice a day at two times of day: "in the morning and at night", "morning and evening".
_TWO_TIMES_OF_DAY_RE = re.compile(r"\b(?:in\s+the\s+)?mornings?\s+and\s+(?:at\s+|in\s+the\s+)?(?:night|evening|bedtime)s?\b")
#: A single dose: words that say so ("stat", "once only", "single dose").
_SINGLE_DOSE_RE = re.compile(r"\b(?:stat|once\s+only|single\s+dose|one\s+dose|one\s+time\s+only|one\s+off|once\s+now)\b")
#: "once" as the whole frequency (an order's frequency field, "(as needed)" aside): a one-off order, the frequency
#: "Once" of the order entry systems. It could be "once daily" cut short; both readings give one dose in a day, so the
#: daily checks read the same numbers either way, and the card says which reading was written
#: (:attr:`Frequency.bare_once`). "once daily", "once weekly", "once nightly" keep their meanings: they are read
#: before this, and anything else after "once" is not this form.
_BARE_ONCE_RE = re.compile(r"^\s*once\s*$")
_AS_NEEDED_WORDS_RE = re.compile(r"\b(?:prn|as needed|when needed|as required|if needed)\b")
_ORDINALS = {"other": 2.0, "second": 2.0, "third": 3.0, "fourth": 4.0}


def _periods(word: str | None) -> float | None:
    """How many periods "every <word>" names ("" → 1, "other"/"second"/"2nd" → 2, "half an" → 0.5), or None."""
    word = (word or "").strip()
    if not word:
        return 1.0
    if word in _ORDINALS or re.fullmatch(r"\d+(?:st|nd|rd|th)", word):
        return _ORDINALS.get(word) or float(word[:-2])
    if word.startswith("half"):
        return 0.5
    if "quarter" in word:
        return 0.25
    top, _, bottom = word.partition("/")
    value = read_number(top)
    if bottom and isinstance(value, float):
        value = value / float(bottom) if float(bottom) else Refused("divides by zero")
    return value if isinstance(value, float) and value > 0 else None


def _normalised(text: str) -> str:
    """Lower case, "q.i.d." → "qid", hyphens as spaces, and the forms that name a period another way:
    "fortnightly" → "every 2 weeks", "an hour and a half" → "1.5 hours", "alternate days" → "every 2 days"."""
    t = re.sub(r"\b((?:[a-z]\.){1,3}[a-z])\.?(?!\w)", lambda m: m.group(1).replace(".", ""), (text or "").lower())
    t = " ".join(t.replace("-", " ").split())
    for pattern, replacement in ((r"\bfortnightly\b", "every 2 weeks"), (r"\bfortnights?\b", "2 weeks"),
                                 (r"\b(?:an?\s+|one\s+)?hours?\s+and\s+a\s+half\b", "1.5 hours"),
                                 (r"\b(?:on\s+)?alternate\s+days?\b", "every 2 days")):
        t = re.sub(pattern, replacement, t)
    return t


def _interval(t: str, as_needed: bool) -> Frequency | Literal[False] | None:
    """"every 6 hours", "every 4-6 hours" (at its shortest interval: the most the order allows), "every ten
    minutes", "every half an hour", "every 2nd day", "q15m", "q1/2h"; False when the text names no interval."""
    if m := re.search(rf"\b(?:every|q)\s*(\d+(?:\.\d+)?)\s+(?:to\s+)?(\d+(?:\.\d+)?)\s*{_TIME_UNIT}\b", t):
        low = min(float(m.group(1)), float(m.group(2)))
        return Frequency(1, low, _PERIOD_UNITS[m.group(3)], as_needed) if low > 0 else None
    if m := re.search(rf"\bevery\s+(?:{_PERIODS}\s*)?{_TIME_UNIT}\b", t):
        period = _periods(m.group(1))
        return Frequency(1, period, _PERIOD_UNITS[m.group(2)], as_needed) if period else None
    if m := re.search(r"\bq\s*(\d+(?:\.\d+)?(?:/\d+)?)\s*(h|hrs?|hours?|m|mins?|minutes?|d|days?)\b", t):
        unit = _PERIOD_UNITS[re.sub(r"(?<=.)(?:s|rs?|ours?|ins?|inutes?|ays?)$", "", m.group(2))]
        period = _periods(m.group(1))
        return Frequency(1, period, unit, as_needed) if period else None
    return False


def _rate(t: str, as_needed: bool) -> Frequency | Literal[False] | None:
    """A dose per period: "80mg/5min", "/hour", "per hour" (a rate's daily total is that of the dose every
    period); False when the text names none."""
    if m := re.search(rf"(?:/|\bper\s+|\ban?\s+(?=hour))\s*(\d+(?:\.\d+)?)?\s*{_TIME_UNIT}\b", t):
        period = float(m.group(1)) if m.group(1) else 1.0
        return Frequency(1, period, _PERIOD_UNITS[m.group(2)], as_needed) if period > 0 else None
    return False


def _times(t: str, as_needed: bool) -> Frequency | Literal[False] | None:
    """"3 times a day", "twelve times daily", "x3/day", "2/day", "twice hourly", "bid"; False when the text names
    none."""
    if m := re.search(rf"(?:(?<=\bx)|\b)(once|twice|thrice|\d+|{WORDS})\s*(?:times?|x)?\s*"
                      r"(?:a|an|per|each|every|in\s+the|/)?\s*"
                      r"(day|daily|night|nightly|week|weekly|hour|hourly)\b", t):
        n = _WORDS.get(m.group(1)) or read_number(m.group(1))
        if isinstance(n, Refused) or n <= 0 or n != int(n):
            return None
        unit = {"day": "d", "daily": "d", "night": "d", "nightly": "d", "week": "wk", "weekly": "wk", "hour": "h",
                "hourly": "h"}[m.group(2)]
        return Frequency(int(n), 1.0, unit, as_needed)
    for code, per_day in _PER_DAY_CODES.items():
        if re.search(rf"\b{code}\b", t):
            return Frequency(per_day, 1.0, "d", as_needed)
    return False


def parse_frequency(text: str) -> Frequency | None:
    """Common ways of writing a frequency (``twice daily``, ``bid``, ``q.i.d.``, ``every 6 hours``, ``q8h``,
    ``q15m``, ``every five minutes``, ``every half hour``, ``every 2nd day``, ``fortnightly``, ``/5min``,
    ``weekly``, ``twelve times daily``, ``once nightly``, ``morning and evening``, ``as needed``, ``stat``,
    ``once``); None when none is recognised. "once" as the whole frequency is a single dose (``_BARE_ONCE_RE``);
    "continuously" without a rate is not read (a continuous infusion's dose is a rate, e.g. "2 mg/hour", which is
    read as hourly)."""
    t = _normalised(text)
    as_needed = bool(_AS_NEEDED_WORDS_RE.search(t))
    for reader in (_interval, _times, _rate):
        found = reader(t, as_needed)
        if found is not False:
            return found
    if _TWO_TIMES_OF_DAY_RE.search(t):
        return Frequency(2, 1.0, "d", as_needed)
    if _TIME_OF_DAY_RE.search(t):
        return Frequency(1, 1.0, "d", as_needed)
    for word, unit in (("hourly", "h"), ("weekly", "wk"), ("monthly", "mo")):
        if re.search(rf"\b{word}\b", t):
            return Frequency(1, 1.0, unit, as_needed)
    if _SINGLE_DOSE_RE.search(t):
        return Frequency(count=1, as_needed=as_needed)
    if _BARE_ONCE_RE.match(_AS_NEEDED_WORDS_RE.sub(" ", t)):
        return Frequency(count=1, as_needed=as_needed, bare_once=True)
    return Frequency(as_needed=True, scheduled=False) if as_needed else None


_SPAN_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|fortnights?|months?)"
#: A frequency as a clinician types it, found in a message: every form :func:`parse_frequency` reads, any
#: "every <up to three words> <unit>" and any "<number> times a <period>" (an implausible or unreadable one
#: included: it must reach the card as typed, not vanish), and "continuous(ly)".
_FREQUENCY_SPAN_RE = re.compile(
    r"\bonce\s+(?:(?:a|per|each|every)\s+)?(?:nightly|night|morning|evening|at\s+(?:night|bedtime)|"
    r"in\s+the\s+(?:morning|evening)|daily|weekly|a\s+day|a\s+week|per\s+day|only|now)\b"
    r"|\b(?:in\s+the\s+)?mornings?\s+and\s+(?:at\s+|in\s+the\s+)?(?:night|evening|bedtime)s?\b"
    rf"|\bevery\s+(?:other|second|third|fourth|\d+(?:st|nd|rd|th))\s+{_SPAN_UNIT}\b"
    rf"|\b(?:every|each)\s+(?:[\w.\-–/]+\s+){{0,4}}?(?:\d+(?:\.\d+)?\s*)?(?:{_SPAN_UNIT}|morning|evening|night)\b"
    r"(?:\s+and\s+a\s+half)?"
    r"|\bq\.?\s*\d+(?:[./]\d+)?(?:\s*-\s*\d+)?\s*(?:h|hrs?|hours?|m|mins?|minutes?|d|days?)\b"
    r"|(?:\bx\s*|\b)[1-9]\d*\s*(?:x\s*)?/\s*(?:days?|d|weeks?|wk|hours?|h)\b"
    rf"|/\s*(?:\d+(?:\.\d+)?\s*)?(?:mins?|minutes?|h|hrs?|hours?|days?)\b|\bper\s+(?:\d+(?:\.\d+)?\s*)?{_SPAN_UNIT}\b"
    rf"|\b(?:once|twice|thrice|[1-9]\d*|{WORDS})\s*(?:times?|x)\s*(?:a|an|per|each|every|in\s+the|/)?\s*"
    r"(?:day|daily|week|weekly|hour|hourly|night|nightly|morning|evening)\b"
    r"|\b(?:once|twice|thrice)\s+(?:daily|weekly|hourly|a\s+day|a\s+week|per\s+day|an?\s+hour|per\s+hour|an?\s+night)\b"
    r"|\b(?:on\s+)?alternate\s+days?\b"
    r"|\b(?:b\.i\.d\.?|t\.i\.d\.?|q\.i\.d\.?|q\.d\.?|o\.d\.?|bid|tid|qid|qds|tds|bd|od|qd|qhs|qam|qpm|nocte|mane"
    r"|daily|nightly|hourly|weekly|fortnightly|monthly|at night|at bedtime|in the morning|in the evening"
    r"|stat|single dose|one dose|one[- ]off|twice|thrice|continuous(?:ly)?(?:\s+infusion)?)\b"
    # "once" alone is a frequency (one dose) where the order ends with it or goes on with its route, time or the
    # patient; "once cultures are back", "once he is eating" is a conjunction, not the order's frequency.
    r"|\bonce(?=\s*$|\s*[,.;:)!]|\s+(?:only|now|stat|today|tonight|then|for|prn|as\s+(?:needed|required)|before|after|"
    r"at|iv|i\.v\.|im|sc|sq|po|pr|sl|orally|by\s+mouth|intravenous(?:ly)?|intramuscular(?:ly)?|subcut\w*)\b)",
    re.IGNORECASE,
)
_AS_NEEDED_RE = re.compile(r"\b(?:prn|as needed|when needed|as required|if needed)\b", re.IGNORECASE)
_CONTINUOUS_RE = re.compile(r"\bcontinuous(?:ly)?(?:\s+infusion)?\b", re.IGNORECASE)


def frequency_match(text: str) -> tuple[str, list[tuple[int, int]]] | None:
    """The frequency as written in ``text`` ("every 5 minutes", "tds", "every 6 hours as needed", "/hour
    continuous infusion") and where its words are; None when it names none."""
    found = _FREQUENCY_SPAN_RE.search(text or "")
    extra = sorted((m for m in (_AS_NEEDED_RE.search(text or ""), _CONTINUOUS_RE.search(text or "")) if m),
                   key=lambda m: m.start())
    if found is None:
        if not extra:
            return None
        found, extra = extra[0], extra[1:]
    words, spans = found.group(0), [found.span()]
    for more in extra:
        if not (found.start() <= more.start() < found.end()):
            words += f" {more.group(0)}"
            spans.append(more.span())
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
