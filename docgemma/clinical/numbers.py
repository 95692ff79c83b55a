"""Reading a number as a clinician types it in an order, by locale-safe rules: read it when only one reading is
possible, refuse it (with the reason and the form to write instead) when it could mean two numbers. Never guess.

The rules (English-language orders):

* ``500``, ``0.5``, ``2.5``: plain digits; a sign (``-5``, ``−5``, ``minus 5``) is kept, so that a negative dose
  is seen as one (the dose checks call it implausible) instead of losing its sign.
* ``½``, ``2½``: a vulgar fraction is read.
* ``5,000``, ``12,500``, ``1,000,000``, ``1,000.5``: a comma before groups of exactly three digits, after a
  first group of 1-3 digits that does not start with 0, is a thousands separator.
* ``2,5``, ``0,25``, ``0,250``: any other single comma before 1-3 digits is a decimal comma (``1,5000``: refused).
* ``1.000``, ``5.000``, ``12.500`` (a dot before exactly three digits, after 1-3 digits not starting with 0):
  refused. In English text it is 1 (trailing zeros: an ISMP error-prone form), in much of Europe 1000.
  ``0.125`` and ``1000.5`` are decimals.
* ``5 000``, ``5'000``: refused. A space between digit groups may join two numbers ("2 500 mg tablets").
* ``.5``: refused. A number without its leading zero is read as 5 (ISMP error-prone form): write ``0.5``.
* ``1e4``, ``1x10^4``, ``10^3``: refused, with the plain number it would be: no dose is written that way.
* words (``five thousand``, ``two hundred and fifty``, ``one and a half``, ``half``, ``a thousand``, ``six point
  eight``, ``zero point two five``) are read by a small parser; any other word sequence (``five five``,
  ``thousand hundred``) is refused, and so is a number in words that the dose pattern would catch only the tail of.
* several separators in any other arrangement (``1,5,00``, ``1.000,5``, ``1.000.000``): refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SMALL_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_SMALL = {w: i for i, w in enumerate(_SMALL_WORDS)}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                                 "ninety"))}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMBER_WORD = "|".join(sorted([*_SMALL, *_TENS, *_SCALES, "half", "quarter"], key=len, reverse=True))
#: A number in words: "five thousand", "two hundred and fifty", "twenty-five", "one and a half", "a thousand".
WORDS = (rf"(?:(?:a|an)\s+)?(?:{_NUMBER_WORD})(?:(?:\s+and\s+a\s+|\s+and\s+|\s+a\s+|\s+point\s+|\s+|-)"
         rf"(?:{_NUMBER_WORD}))*(?![\w-])")
#: A number word (or "point", "and") just before a number in words: the number began earlier than the match.
NUMBER_WORD_BEFORE = re.compile(rf"\b(?:{_NUMBER_WORD}|point|and|a|an)[\s,]*-?\s*$", re.IGNORECASE)
_DIGITS = (r"(?:\d{1,3}(?:[\u00a0\u202f' ]\d{3})+(?![\d.,])"  # 5 000, 5'000: refused
           r"|\d+(?:[.,]\d+)*"                                 # 500, 2,5, 5,000, 1.000, 1,000.5
           r"|\d*[½¼¾]"                                        # ½, 2½
           r"|[.,]\d+)"                                        # .5: refused
           r"(?:\s*(?:[eE][-+]?\d+|[x×*]\s*10\s*(?:\^|\*\*)\s*[-+]?\d+|\^\s*[-+]?\d+))?")  # exponents: refused
#: One number as typed (digits in any of the forms above, or words), with its sign: for the dose patterns.
NUMBER = rf"(?:(?:[-−](?=[\d.,])|(?:minus|negative)\s+)?(?:{_DIGITS}|\b{WORDS}))"
_EXPONENT_RE = re.compile(r"^(.*?)\s*(?:[eE]([-+]?\d+)|[x×*]\s*10\s*(?:\^|\*\*)\s*([-+]?\d+)|\^\s*([-+]?\d+))$")


@dataclass(frozen=True)
class Refused:
    """A number that cannot be read without guessing, and why (with the form to write instead)."""

    reason: str


def read_number(text: str) -> float | Refused:
    """The value of one typed number (see the module docstring for the rules), or why it is refused."""
    t = " ".join(text.strip().split())
    negative = bool(re.match(r"(?:[-−]|minus\s|negative\s)", t, re.IGNORECASE))
    t = re.sub(r"^(?:[-−]\s*|(?:minus|negative)\s+)", "", t, flags=re.IGNORECASE)
    value = _unsigned(t)
    if isinstance(value, Refused):
        return value
    return -value if negative else value


def _unsigned(t: str) -> float | Refused:
    exponent = _EXPONENT_RE.match(t)
    if exponent and re.search(r"\d", exponent.group(1)):
        mantissa = _unsigned(exponent.group(1))
        power = int(next(g for g in exponent.groups()[1:] if g is not None))
        plain = f"{mantissa * 10 ** power:,.10g}".replace(",", "") if isinstance(mantissa, float) else "digits"
        if exponent.group(4) is not None:  # "10^3": the base is the number before the caret
            plain = f"{mantissa ** power:.10g}" if isinstance(mantissa, float) else "digits"
        return Refused(f"'{t}' is written as a power of ten: write the dose in plain digits ({plain})")
    if vulgar := re.fullmatch(r"(\d*)([½¼¾])", t):
        return float(vulgar.group(1) or 0) + {"½": 0.5, "¼": 0.25, "¾": 0.75}[vulgar.group(2)]
    if re.fullmatch(r"[a-z][a-z\s-]*", t, re.IGNORECASE):
        return read_words(t)
    if re.fullmatch(r"\d{1,3}(?:[\u00a0\u202f' ]\d{3})+", t):
        joined = re.sub(r"\D", "", t)
        return Refused(f"'{t}' has a space or apostrophe between digits, which may join two numbers "
                       f"(e.g. 2 × 500): write {joined} if one number is meant")
    if re.fullmatch(r"[.,]\d+", t):
        return Refused(f"'{t}' has no leading zero and is easily read as {t[1:]} (ISMP error-prone form): "
                       f"write 0.{t[1:]}")
    return _separated(t)


def _separated(t: str) -> float | Refused:
    """Digits with commas and dots (see the module docstring)."""
    if re.fullmatch(r"\d+", t):
        return float(t)
    if re.fullmatch(r"[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?", t):  # 5,000 / 12,500 / 1,000.5: thousands
        return float(t.replace(",", ""))
    if re.fullmatch(r"\d+,\d{1,3}", t):  # 2,5 / 0,25: a decimal comma (5,000 was read above)
        return float(t.replace(",", "."))
    if re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", t):
        whole, decimals = t.split(".")
        return Refused(f"'{t}' could be {float(t):g} or {int(whole + decimals)} (a dot is a decimal point in "
                       f"English and a thousands separator in much of Europe): write {float(t):g} or "
                       f"{int(whole + decimals)}")
    if re.fullmatch(r"\d+\.\d+", t):
        return float(t)
    return Refused(f"'{t}' mixes separators in a way that has no single reading: write the number in plain digits "
                   "with at most one decimal point")


def read_words(text: str) -> float | Refused:
    """A number in words: units, tens, "hundred", "thousand", "million", "half" ("half", "one and a half",
    "a half"); any other sequence is refused (never guessed)."""
    words = [w for w in re.split(r"[\s-]+", text.lower().strip()) if w]
    refused = Refused(f"'{text}' is not a number in words this system reads: write it in digits")
    if "point" in words:
        # "six point eight", "zero point two five": a whole part, then one digit word per decimal place.
        at = words.index("point")
        units = _whole_words([w for w in words[:at] if w != "and"]) if words[:at] else None
        places = words[at + 1:]
        if units is None or not places or any(_SMALL.get(w, 10) > 9 for w in places):
            return refused
        return float(f"{int(units)}.{''.join(str(_SMALL[w]) for w in places)}")
    if words and words[-1] == "half":
        whole = [w for w in words[:-1] if w not in ("a", "an", "and")]
        if words[:-1] and words[:-1][-1] not in ("a", "and", "an") and whole:
            return refused  # "two half": not a number
        base = _whole_words(whole) if whole else 0.0
        return refused if base is None else base + 0.5
    if words and words[0] in ("a", "an"):
        words = ["one", *words[1:]]
    value = _whole_words([w for w in words if w != "and"])
    return refused if value is None else value


def _whole_words(words: list[str]) -> float | None:
    """A whole number in words, or None when the words are not one (wrong order, a word twice in a place)."""
    total, group, last, scale_above = 0, 0, "", 10**12
    for word in words:
        if word in _SMALL and last in ("", "tens", "hundred", "scale"):
            group, last = group + _SMALL[word], "small"
        elif word in _TENS and last in ("", "hundred", "scale"):
            group, last = group + _TENS[word], "tens"
        elif word == "hundred" and last in ("small",) and 0 < group < 10:
            group, last = group * 100, "hundred"
        elif word in ("thousand", "million") and last in ("small", "tens", "hundred") and _SCALES[word] < scale_above:
            total, group, last, scale_above = total + group * _SCALES[word], 0, "scale", _SCALES[word]
        else:
            return None
    return float(total + group) if last else None
