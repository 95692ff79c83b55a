"""What an approved write's confirmation says besides the record reference: every value written, field by field,
and what the clinician changed from the proposal ("Duration: 5 days → 7 days; Indication: — → chest infection"),
so that the chat never says "the change you approved" of values it did not write. Code writes it, for every model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docgemma.tools.args import NOT_WRITTEN

__all__ = ["CHANGED", "FIELD_LABELS", "WRITTEN", "details", "field_label", "split"]

#: Field names as a clinician says them (the card's form and the confirmation); others are shown by their name.
FIELD_LABELS: Mapping[str, str] = {
    "medication_name": "Drug", "dosage": "Dose", "route": "Route", "frequency": "Frequency",
    "duration": "Duration", "notes": "Notes for the order", "substance": "Substance", "reaction": "Reaction",
    "severity": "Severity (mild, moderate or severe)", "note_type": "Note type", "note_text": "Note text",
}
#: The confirmation's detail lines start with these (after the one-line confirmation of the write).
WRITTEN = "As written: "
CHANGED = "Changed from the proposal: "
NONE = "—"


def field_label(key: str) -> str:
    return FIELD_LABELS.get(key, key.replace("_", " ").capitalize())


def _shown(value: Any) -> str:
    if value in (None, "", []):
        return NONE
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return " ".join(str(value).split())  # one line: a note's line breaks would end the confirmation's line


def details(args: Mapping[str, Any], proposed: Mapping[str, Any] | None) -> str:
    """The lines after a write's confirmation: each value written (the patient is named by the confirmation
    itself), then the changes from ``proposed`` (none when nothing changed or the proposal is unknown)."""
    keys = [k for k in args if k != "patient_id" and k not in NOT_WRITTEN]  # unread words are no written value
    written = " · ".join(f"{field_label(k)}: {_shown(args[k])}" for k in keys if args[k] not in (None, "", []))
    lines = [f"{WRITTEN}{written}"] if written else []
    if proposed is not None:
        changed = [f"{field_label(k)}: {_shown(proposed.get(k))} → {_shown(args.get(k))}"
                   for k in dict.fromkeys([*proposed, *args]) if k != "patient_id" and k not in NOT_WRITTEN
                   and _shown(proposed.get(k)) != _shown(args.get(k))]
        if changed:
            lines.append(f"{CHANGED}{'; '.join(changed)}")
    return "\n".join(lines)


def split(confirmation: str) -> tuple[str, list[str]]:
    """(the one-line confirmation, its detail lines) of a confirmation :func:`details` was added to."""
    head, *rest = confirmation.split("\n")
    kept = [line for line in rest if line.startswith((WRITTEN, CHANGED))]
    if len(kept) != len(rest):  # not ours: an older confirmation, kept whole
        return confirmation, []
    return head, kept
