"""Allergy policy for writes and the summary: which drug conflicts with which recorded allergy (same substance,
same drug class, or a related class), and which allergies are severe enough that ordering a conflicting drug
needs an explicit override with a reason rather than a plain approval.
"""

from __future__ import annotations

from typing import Any

#: Drug classes for allergy cross-reactivity (allergy word → class members, generic names).
ALLERGY_CLASSES: dict[str, tuple[str, ...]] = {
    "penicillin": (
        "penicillin",
        "amoxicillin",
        "ampicillin",
        "piperacillin",
        "flucloxacillin",
        "dicloxacillin",
        "cloxacillin",
        "nafcillin",
        "oxacillin",
        "benzylpenicillin",
        "phenoxymethylpenicillin",
        "co-amoxiclav",
    ),
    "cephalosporin": (
        "cefalexin",
        "cephalexin",
        "cefazolin",
        "cefuroxime",
        "ceftriaxone",
        "cefotaxime",
        "cefixime",
        "cefepime",
        "ceftazidime",
        "cefaclor",
        "cefadroxil",
    ),
    "sulfonamide": ("sulfamethoxazole", "sulfadiazine", "sulfasalazine", "trimethoprim-sulfamethoxazole"),
    "sulfa": ("sulfamethoxazole", "sulfadiazine", "sulfasalazine", "trimethoprim-sulfamethoxazole"),
    "nsaid": ("ibuprofen", "naproxen", "diclofenac", "ketorolac", "indomethacin", "celecoxib", "aspirin", "meloxicam"),
    "aspirin": ("aspirin", "ibuprofen", "naproxen", "diclofenac", "ketorolac", "indomethacin"),
}
#: Cross-class reactivity worth a warning (penicillin-allergic patients and cephalosporins: low but real).
RELATED_CLASSES = {"penicillin": ("cephalosporin",)}
#: Reaction words that make an allergy severe whatever its recorded criticality.
SEVERE_REACTIONS = ("anaphyla", "angioedema", "stevens-johnson", "toxic epidermal", "dress")


def allergy_conflict(allergy: str, drug: str) -> str | None:
    """Why ``drug`` conflicts with a recorded ``allergy`` (same substance or drug class), or None."""
    allergy_l, drug_l = allergy.lower(), drug.lower()
    if not drug_l:
        return None
    if drug_l in allergy_l:
        return f"{drug} is the recorded allergen."
    for word, members in ALLERGY_CLASSES.items():
        if word in allergy_l or any(m in allergy_l for m in members):
            if drug_l in members:
                return f"{drug} belongs to the same drug class ({word})."
            for related in RELATED_CLASSES.get(word, ()):
                if drug_l in ALLERGY_CLASSES[related]:
                    return f"{drug} is a {related}: cross-reactivity with {word} allergy is possible."
    return None


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
