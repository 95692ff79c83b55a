"""A combination product's strength written in its name with no unit, the UK way ("co-amoxiclav 500/125 tablets",
"co-trimoxazole 400/80"): read per ingredient, in mg, only where that reading cannot make a wrong dose look fine.

The numbers are read as mg only when every ingredient then falls inside its per-dose range in mg (the dose
table's largest single dose, down to :data:`PLAUSIBLE_FRACTION` of it). A unit misread is a factor of 1000
(micrograms, grams): an inhaler's "250/50" (micrograms) read as mg is far above any single dose, a "4/0.5" (grams)
far below any strength, and both are refused, so the dose stays "cannot be checked". Which number belongs to which
ingredient is not taken from the order the ingredients are named in (co-trimoxazole is named trimethoprim first
and written sulfamethoxazole first): every assignment is tried, and when several fit, the one with the most of the
ingredient the dose is checked as is taken, the stricter check (the dose table has upper limits only). Data and
pure functions; the card's words are :mod:`.dose_check`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import permutations

from docgemma.clinical.dose_table import DoseLimit, part_max_mg, reference_ingredient, same_ingredient

__all__ = ["PLAUSIBLE_FRACTION", "NameStrength", "unitless_strength"]

#: The smallest strength in mg an ingredient is read at, as a fraction of its largest single dose: a strength below
#: a fiftieth of the most given at once is not a strength of that medicine in mg (a gram product read as mg lands
#: a thousand times too low; 50 leaves a margin of 20 each way against a factor of 1000).
PLAUSIBLE_FRACTION = 50.0
#: Two or three numbers joined by "/" and followed by no unit ("500/125", "500/125 tablets"); "875/125 mg" has one.
_UNITLESS_RE = re.compile(
    r"(?<![\w.,/])(?P<numbers>\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?){1,2})(?![\w.,/%])"
    r"(?!\s*(?:mgs?|mcg|µg|ug|micrograms?|milligrams?|g|gm|grams?|units?|iu|mls?|l|mmol|meq|%)(?![a-z]))",
    re.IGNORECASE)


@dataclass(frozen=True)
class NameStrength:
    """The unitless strength a name writes (``written``, "500/125") and how it was read: ``amounts`` (ingredient,
    mg) with ``reference_mg``, the amount of the ingredient the dose is checked as; or ``refused``, why not."""

    written: str
    amounts: tuple[tuple[str, float], ...] = ()
    reference_mg: float = 0.0
    #: Several assignments fitted and the stricter one was taken (said on the card).
    uncertain: bool = False
    refused: str = ""

    def shown(self) -> str:
        """"amoxicillin 500 mg + clavulanate 125 mg"."""
        return " + ".join(f"{name} {mg:g} mg" for name, mg in self.amounts)


def unitless_strength(name: str, ingredients: tuple[str, ...], row: DoseLimit) -> NameStrength | None:
    """The strength ``name`` writes without a unit for the combination ``ingredients`` checked by ``row`` (see the
    module's note); None when the name writes none (or the row is not a combination's)."""
    found = _UNITLESS_RE.search(name or "")
    if found is None or "+" not in row.drug or len(ingredients) < 2:
        return None
    written = re.sub(r"\s+", "", found.group("numbers"))
    numbers = [float(n) for n in written.split("/")]
    if len(numbers) != len(ingredients):
        return NameStrength(written, refused=f"'{written}' gives {len(numbers)} numbers for {len(ingredients)} "
                                             "ingredients")
    ranges: dict[str, tuple[float, float]] = {}
    for ingredient in ingredients:
        most = part_max_mg(ingredient, row)
        if most is None:
            return NameStrength(written, refused=f"'{written}' has no unit, and no per-dose range in mg is known here "
                                                 f"for {ingredient}")
        ranges[ingredient] = (most / PLAUSIBLE_FRACTION, most)
    fitting = [tuple(zip(ingredients, order, strict=True)) for order in dict.fromkeys(permutations(numbers))
               if all(ranges[i][0] <= mg <= ranges[i][1] for i, mg in zip(ingredients, order, strict=True))]
    if not fitting:
        named = ", ".join(f"{i} {lo:g}-{hi:g} mg" for i, (lo, hi) in ranges.items())
        return NameStrength(written, refused=f"'{written}' has no unit, and read as mg it does not put every ingredient "
                                             f"within its per-dose range ({named}): it may be micrograms or grams")
    reference = reference_ingredient(row)
    best = max(fitting, key=lambda amounts: _reference_mg(amounts, reference))
    uncertain = len({_reference_mg(a, reference) for a in fitting}) > 1
    return NameStrength(written, best, _reference_mg(best, reference), uncertain)


def _reference_mg(amounts: tuple[tuple[str, float], ...], reference: str) -> float:
    return next(mg for name, mg in amounts if same_ingredient(name, reference))
