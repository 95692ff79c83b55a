"""Drugs a child must not be given below a stated age, each with its source: what the named-drug safety line
checks a drug against the active patient's age with. Short and deliberate (contraindications, not dosing: the
dose checks are the prescription card's). An age it cannot read is said, never taken as adult.
"""

from __future__ import annotations

from dataclasses import dataclass

from docgemma.clinical.ingredients import Resolution, classes_of


@dataclass(frozen=True)
class AgeCaution:
    """Below ``under`` years, ``why`` (from ``source``) — for these ingredients or any member of ``classes``."""

    ingredients: tuple[str, ...]
    classes: tuple[str, ...]
    under: int
    why: str
    source: str


CAUTIONS: tuple[AgeCaution, ...] = (
    AgeCaution(("aspirin",), (), 16, "aspirin is not given under 16 (Reye's syndrome) except on specialist advice",
               "BNF, aspirin (Reye's syndrome); MHRA; FDA OTC aspirin label, Reye's syndrome warning"),
    AgeCaution(("codeine", "tramadol"), (), 12, "contraindicated under 12 (life-threatening respiratory depression)",
               "FDA Drug Safety Communication, April 2017; MHRA Drug Safety Update, July 2013 (codeine)"),
    AgeCaution((), ("tetracycline",), 8, "tetracyclines cause permanent tooth discolouration under 8 (BNF: under 12)",
               "tetracycline-class labels, Warnings (tooth development); BNF 5.1.3"),
    AgeCaution((), ("fluoroquinolone",), 18, "fluoroquinolones are not first-line under 18 (musculoskeletal adverse "
               "reactions)", "fluoroquinolone labels (e.g. Cipro, Levaquin), Pediatric use"),
)


def age_cautions(product: Resolution, years: float) -> list[tuple[str, AgeCaution]]:
    """(ingredient, caution) for each ingredient of ``product`` a caution applies to at ``years``."""
    out = []
    for ingredient in product.ingredients:
        for caution in CAUTIONS:
            if years < caution.under and (ingredient in caution.ingredients
                                          or set(classes_of(ingredient)) & set(caution.classes)):
                out.append((ingredient, caution))
    return out
