"""The prescription card's interaction check: the new drug against each of the patient's active orders, in the
local table of major interactions and the ANSM national thesaurus (:mod:`docgemma.clinical.interactions`, a source
per pair) and, when the FDA
label client is bound (``tools/binding.bind_tools``), in both drugs' labels (their drug-interaction, contraindication
and warning sections naming the other drug, :mod:`docgemma.tools.interactions`). A label service that cannot be
reached is said on the card ("NOT CHECKED"), never taken as "no interactions".
"""

from __future__ import annotations

from typing import Any

from docgemma.clinical.ingredients import Resolution, resolve_local
from docgemma.clinical.interactions import INTERRUPTING, interactions_between
from docgemma.fhir import display_text
from docgemma.tools.drug_labels import DrugLabels
from docgemma.tools.http import HttpError
from docgemma.tools.interactions import for_drug, label_mentions
from docgemma.tools.write_checks import Findings

CHECK = "Interactions with active medicines"
LOCAL_SOURCE = ("local table of interactions that must interrupt (ONC high-priority list, Phansalkar 2012; "
                "anticoagulant, serotonergic, QT, potassium and CYP3A4 pairs; FDA label or BNF source per pair) and "
                "the ANSM Thésaurus des interactions médicamenteuses, Oct 2020 (its own texts, in French)")
# Offline the tables carry the check by themselves (this is for clinics without internet): it ran, and says so.
OFFLINE = f"{LOCAL_SOURCE}; the FDA label service was not reachable, so these tables alone were used"
UNBOUND = f"{LOCAL_SOURCE}; no FDA label service is configured here, so these tables alone were used"


def _local(found: Findings, name: str, product: Resolution, med: dict[str, Any], active: Resolution) -> None:
    shown, since = display_text(med), str(med.get("authoredOn") or "?")[:10]
    if not active.ingredients:
        found.add(f"INTERACTIONS NOT CHECKED WITH AN ACTIVE ORDER: {shown} (since {since}) could not be identified "
                  f"as known ingredients, so {name} was not checked against it; check it by hand.")
        return
    for hit in interactions_between(product.ingredients, active.ingredients):
        i = hit.interaction
        severe = i.severity in INTERRUPTING
        found.add(f"INTERACTION WITH AN ACTIVE ORDER ({i.severity.upper()}): {name} with "
                  f"{shown} (since {since}) — {i.severity}: {i.effect} (source: {i.source}).", severe)


def _labelled(found: Findings, name: str, product: Resolution, medications: list[dict[str, Any]],
              labels: DrugLabels) -> str:
    """The labels' passages naming the other drug, both directions; the detail for the check's line. Raises
    HttpError when the label service does not answer."""
    new_label = for_drug(labels, product, name)
    read = [new_label.shown] if new_label else []
    missing = [] if new_label else [name]
    for med in medications:
        shown = display_text(med)
        active = resolve_local(shown)
        if not active.ingredients:
            continue  # said by the local check: it could not be identified
        med_label = for_drug(labels, active, shown)
        read += [med_label.shown] if med_label else []
        missing += [] if med_label else [shown]
        if set(active.ingredients) & set(product.ingredients):
            continue  # a duplicate order: its own check says so, and a label always names its own drug
        directions = ((new_label, active, shown, med_label), (med_label, product, name, new_label))
        for label, about, about_name, about_label in directions:
            if label is None:
                continue
            kind, passages = label_mentions(label, about, about_name, about_label)
            for passage in passages:
                how = "names" if kind == "name" else "names the class of"
                found.add(f"LABEL INTERACTION: the {label.generic or 'FDA'} label {how} {about_name} "
                          f"[{passage['section']}]: {passage['text']}")
    detail = f"{LOCAL_SOURCE}; FDA labels: {', '.join(read) or 'none found'}"
    return detail + (f"; no FDA label found for {', '.join(missing)}" if missing else "")


def active_order_interactions(found: Findings, name: str, product: Resolution, medications: list[dict[str, Any]],
                              labels: DrugLabels | None) -> None:
    """Add to ``found`` every interaction of ``product`` (ordered as ``name``) with an active order, and the
    check's line: ran (with its sources) or, when the labels could not be read, skipped (a warning)."""
    if not medications:
        found.ran(CHECK, "no active medication orders")
        return
    for med in medications:
        _local(found, name, product, med, resolve_local(display_text(med)))
    if labels is None:
        found.ran(CHECK, UNBOUND)
        return
    try:
        detail = _labelled(found, name, product, medications, labels)
    except HttpError:
        found.ran(CHECK, OFFLINE)
        return
    found.ran(CHECK, detail)
