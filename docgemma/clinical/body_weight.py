"""A patient's age and latest recent body weight, as the dose check needs them: age in whole years from the
birth date, and weight from FHIR Observations (LOINC 29463-7 body weight, 3141-9 measured body weight) in kg,
g or lb, with the date it was taken.

"Recent" is 3 months, and 1 month under 2 years: an infant's weight rises by about a tenth within a month, so
an older weight would understate a mg/kg dose; from 2 years growth is slow enough that a weight of a clinic
visit this season still gives a mg/kg figure within about 5%.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

WEIGHT_CODES = frozenset({"29463-7", "3141-9"})
_TO_KG = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "[lb_av]": 0.45359237, "lbs": 0.45359237}
ADULT_YEARS = 18


def today() -> date:
    """Today's date (one place, so that a test can fix the day a record's weight is judged from)."""
    return date.today()


@dataclass(frozen=True)
class Weight:
    """A body weight in kg and the day it was measured ("" when the record gives no date)."""

    kg: float
    taken: str

    def shown(self) -> str:
        return f"{self.kg:g} kg on {self.taken or 'an unknown date'}"


def age_years(birth_date: str, on: date | None = None) -> float | None:
    """Age in years (whole years; a fraction under 1 year, so that a neonate is told apart); None when the
    birth date cannot be read."""
    try:
        born = date.fromisoformat((birth_date or "")[:10])
    except ValueError:
        return None
    now = on or today()
    years = now.year - born.year - ((now.month, now.day) < (born.month, born.day))
    if years < 0:
        return None
    return float(years) if years >= 1 else (now - born).days / 365.25


def recent_days(age: float) -> int:
    """How old a weight may be and still count (see the module's note)."""
    return 30 if age < 2 else 90


def _weight(observation: dict[str, Any]) -> Weight | None:
    codes = {c.get("code") for c in (observation.get("code") or {}).get("coding") or [] if isinstance(c, dict)}
    quantity = observation.get("valueQuantity") or {}
    if not codes & WEIGHT_CODES or observation.get("status") == "entered-in-error" or not isinstance(quantity, dict):
        return None
    unit = str(quantity.get("code") or quantity.get("unit") or "").lower()
    factor = _TO_KG.get(unit if unit != "[lb_av]" else "lb")
    value = quantity.get("value")
    if factor is None or not isinstance(value, (int, float)) or value <= 0:
        return None
    return Weight(round(float(value) * factor, 2), str(observation.get("effectiveDateTime") or "")[:10])


def latest_weight(observations: list[dict[str, Any]]) -> Weight | None:
    """The newest readable body weight of ``observations`` (any age), or None."""
    weights = [w for w in map(_weight, observations) if w is not None]
    return max(weights, key=lambda w: w.taken) if weights else None


def recent_weight(observations: list[dict[str, Any]], age: float, on: date | None = None) -> Weight | None:
    """The newest body weight taken within :func:`recent_days` of ``on`` (today); None when there is none."""
    found = latest_weight(observations)
    if found is None:
        return None
    try:
        taken = date.fromisoformat(found.taken)
    except ValueError:
        return None
    return found if 0 <= ((on or today()) - taken).days <= recent_days(age) else None
