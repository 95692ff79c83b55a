"""Allergy policy for writes and the summary: which product conflicts with which recorded allergy (same
substance, same drug class, or a related class — all on ingredients, see :mod:`.ingredients`), which allergies
are severe enough that ordering a conflicting drug needs an explicit override with a reason, and what happens
when the check cannot tell: a product or an allergen it cannot identify is never a silent pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from docgemma.clinical.ingredients import LOCAL, Conflict, IngredientResolver, Resolution, conflicts
from docgemma.fhir import codings, display_text

#: SNOMED CT codes of "no known (drug, food, environmental) allergy" entries: a statement, not an allergen.
NO_KNOWN_ALLERGY = frozenset({"409137002", "716186003", "429625007", "428607008", "428197003"})


def is_no_known_allergy(entry: dict[str, Any]) -> bool:
    """True for a coded "no known (drug) allergy" entry (NKDA, as ``add_allergy`` writes it): no allergen."""
    return any(c.get("code") in NO_KNOWN_ALLERGY for c in codings(entry, ("code",)))

#: Reaction words that make an allergy severe whatever its recorded criticality.
SEVERE_REACTIONS = ("anaphyla", "angioedema", "angio-oedema", "stevens-johnson", "toxic epidermal", "dress",
                    "bronchospasm", "laryngeal", "throat swelling", "hypotension", "collapse")


@dataclass(frozen=True)
class AllergyFinding:
    """One allergy finding on a product: its text for the card, and whether only an override can pass it."""

    kind: Literal["substance", "class", "contraindicated", "related", "unverified"]
    text: str
    severe: bool


def allergy_conflict(allergy: str, drug: str, resolver: IngredientResolver = LOCAL) -> str | None:
    """Why ``drug`` conflicts with a recorded ``allergy`` (text of the strongest conflict), or None."""
    found = conflicts(resolver.allergen(allergy), resolver.resolve(drug))
    return found[0].reason if found else None


def is_direct_conflict(reason: str) -> bool:
    """A same-substance or same-class conflict (not the weaker related-class cross-reactivity)."""
    return "cross-reactivity" not in reason


def reactions(allergy: dict[str, Any]) -> list[str]:
    """The recorded reaction manifestations, as text."""
    out = []
    for reaction in allergy.get("reaction", []) or []:
        for manifestation in reaction.get("manifestation", []) or []:
            text = manifestation.get("text") or next(
                (c.get("display") for c in manifestation.get("coding", []) if c.get("display")), None
            )
            if text:
                out.append(str(text))
    return out


def is_severe(allergy: dict[str, Any]) -> bool:
    """High criticality, a reaction recorded as severe, or an anaphylaxis-class reaction."""
    if str(allergy.get("criticality", "")).lower() == "high":
        return True
    if any(str(r.get("severity", "")).lower() == "severe" for r in allergy.get("reaction", []) or []):
        return True
    return any(word in text.lower() for text in reactions(allergy) for word in SEVERE_REACTIONS)


def severity_unknown(allergy: dict[str, Any]) -> bool:
    """No criticality (or "unable-to-assess") and no reaction severity: nothing says the allergy is mild."""
    criticality = str(allergy.get("criticality", "")).lower()
    graded = any(str(r.get("severity", "")).strip() for r in allergy.get("reaction", []) or [])
    return criticality in ("", "unable-to-assess") and not graded


def needs_override(allergy: dict[str, Any]) -> bool:
    """A direct conflict with this allergy passes only with an override: severe, or of unknown severity
    (an allergy recorded without a grade is not assumed to be mild)."""
    return is_severe(allergy) or severity_unknown(allergy)


def allergy_line(allergy: dict[str, Any]) -> str:
    """``Allergy to penicillin (Anaphylaxis; criticality high)``."""
    details = [", ".join(reactions(allergy))] if reactions(allergy) else []
    if allergy.get("criticality"):
        details.append(f"criticality {allergy['criticality']}")
    return display_text(allergy) + (f" ({'; '.join(details)})" if details else "")


def _label(conflict: Conflict, allergy: dict[str, Any], severe: bool) -> str:
    head = "ALLERGY CONFLICT (SEVERE)" if severe else ("ALLERGY CROSS-REACTIVITY" if not conflict.direct
                                                       else "ALLERGY CONFLICT")
    tail = " Approving needs an explicit override with a reason." if severe else ""
    return f"{head}: recorded allergy '{allergy_line(allergy)}' — {conflict.reason}{tail}"


def allergy_findings(product: Resolution, allergies: list[dict[str, Any]],
                     resolver: IngredientResolver = LOCAL) -> list[AllergyFinding]:
    """Every allergy finding for ordering ``product`` (resolved by ``resolver``), severe ones first.

    * a same-substance or same-class conflict: severe (override with a reason) when the allergy is severe or
      of unknown severity, else a warning;
    * a related-class cross-reactivity (a cephalosporin for a penicillin allergy): a warning;
    * a product the resolver cannot identify, for a patient with any recorded allergy: severe — it could not be
      verified against them;
    * a recorded allergen the resolver cannot identify: the product could not be checked against it — severe
      when that allergy needs an override, else a warning.
    """
    out: list[AllergyFinding] = []
    unidentified: list[dict[str, Any]] = []
    for allergy in allergies:
        allergen = resolver.allergen(display_text(allergy))
        found = conflicts(allergen, product)
        if found:
            best = found[0]
            severe = best.direct and needs_override(allergy)
            out.append(AllergyFinding(best.kind, _label(best, allergy, severe), severe))
        if not allergen.identified:
            unidentified.append(allergy)
    if allergies and not product.resolved:
        unknown = ", ".join(product.unresolved) or "no specific drug named"
        listed = "; ".join(allergy_line(a) for a in allergies)
        out.append(AllergyFinding("unverified", (
            f"NOT VERIFIED AGAINST ALLERGIES: '{product.text}' could not be identified as known ingredients "
            f"(not recognised: {unknown}), so it could not be checked against the recorded allergies ({listed}). "
            "Approving needs an explicit override with a reason."), True))
    for allergy in unidentified:
        if product.non_drug:
            continue
        severe = needs_override(allergy)
        out.append(AllergyFinding("unverified", (
            f"ALLERGY NOT CHECKED: the recorded allergy '{allergy_line(allergy)}' names nothing this check can "
            f"identify as a drug or drug class, so {product.text} could not be checked against it."
            + (" Approving needs an explicit override with a reason." if severe else "")), severe))
    return sorted(out, key=lambda f: not f.severe)
