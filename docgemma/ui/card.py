"""The approval card as a form: what will be written, one field per value (drug, dose, frequency, duration;
substance, reaction, severity; note type and text), each with the checks about it beside it, severity said in
words and colour (an emoji alone is an empty box where no emoji font is installed).

Generic over the card's data (``agent.approval.ApprovalCard``): whatever arguments a write tool has become
fields, and whatever warnings its check returns are shown, next to the field they name or at the top. Pure
functions (no Gradio): the layout in ``ui/page.py`` shows what these return.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from docgemma.ui.markup import escape, patient_header
from docgemma.workspace import (  # noqa: F401  (FIELD_LABELS: re-exported)
    FIELD_LABELS,
    NOT_WRITTEN,
    ApprovalCard,
    Tools,
    field_label,
)

#: Form fields the page has room for (the largest write tool has five values besides the patient).
MAX_FIELDS = 6
#: Words in a check that tie it to a field (the drug's own name also ties a check to the drug field).
FIELD_WORDS: Mapping[str, tuple[str, ...]] = {
    "dosage": ("DOSE", "MAXIMUM"),
    "frequency": ("FREQUENCY",),
    "duration": ("DURATION",),
    "route": ("ROUTE",),
    "medication_name": ("ALLERGY CONFLICT", "DUPLICATE ORDER", "INTERACTION"),
    "substance": ("ALREADY RECORDED",),
    "reason": ("REASON NEEDED",),
}
#: Multi-line fields.
LONG_FIELDS = frozenset({"note_text", "notes"})
RECHECK = "Re-check with my changes"
#: Said above the form: what Approve does with values changed in it (it used to ignore them, silently).
FORM_HINT = ("*Approve (and Override & approve) writes the values in the form as they stand. Values you changed are "
             "checked again first: if that check finds anything this card does not show, nothing is written and a "
             "new card shows it.*")


@dataclass
class Check:
    """One finding of the safety review: severe (needs an override) or a warning."""

    text: str
    severe: bool


@dataclass
class Field:
    """One value of the write, as the form shows it."""

    key: str
    label: str
    value: str
    checks: list[Check] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return 4 if self.key in LONG_FIELDS else 1


def _not_checked_texts(card: ApprovalCard) -> set[str]:
    """The findings that only say a listed check could not run ("NOT CHECKED — DOSE RANGE: …"): the card says
    them once, in its list of checks (:func:`checks_markdown`), not again beside a field."""
    return {f"NOT CHECKED — {c['name'].upper()}: {c['detail']}" for c in card.get("checks") or [] if not c.get("ran")}


def _checks(card: ApprovalCard) -> list[Check]:
    severe = set(card.get("severe", []))
    listed_elsewhere = _not_checked_texts(card)
    listed = [Check(w, w in severe) for w in card.get("warnings", []) if w not in listed_elsewhere]
    listed += [Check(s, True) for s in card.get("severe", [])
               if s not in card.get("warnings", []) and s not in listed_elsewhere]
    # Severe first: the finding that refuses a plain approval is the first thing read.
    return sorted(listed, key=lambda c: not c.severe)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def fields(card: ApprovalCard, tools: Tools | None = None) -> tuple[list[Field], list[Check]]:
    """The card's values as form fields with the warnings that name them, and the checks shown at the top: the
    severe ones (said once, above the form) and those that name no field. ``tools`` (the workspace's, from the
    running registry): the write tool's argument names, so that an optional value left out (an allergy's
    severity) is still a field the clinician can fill in; without it the form shows the card's own values."""
    args = dict(card.get("args", {}))
    tool = (tools or {}).get(str(card.get("tool", "")))
    for key in tool.fields if tool else ():
        args.setdefault(key, None)
    # The words no field took are a finding (the check says them), never a field Approve would write (issue 46).
    shown = [Field(k, field_label(k), _shown(v))
             for k, v in args.items() if k != "patient_id" and k not in NOT_WRITTEN][:MAX_FIELDS]
    general: list[Check] = []
    for check in _checks(card):
        if check.severe:  # at the top, once: it is why a plain approval is refused (see header_markdown)
            general.append(check)
            continue
        upper = check.text.upper()
        home = next((f for f in shown if any(w in upper for w in FIELD_WORDS.get(f.key, ()))), None)
        if home is None:  # a check naming the drug or substance itself ("amoxicillin belongs to …")
            home = next((f for f in shown if f.key in ("medication_name", "substance") and f.value
                         and f.value.lower() in check.text.lower()), None)
        (home.checks if home else general).append(check)
    return shown, general


#: A check's heading, as the safety review writes it ("ALLERGY CONFLICT (SEVERE): …"): capitals, a parenthesis.
_HEADING = re.compile(r"^(?P<head>[A-Z][A-Z /-]*[A-Z])(?: \((?P<aside>[^)]*)\))?: (?P<rest>.*)$", re.DOTALL)
#: Severity words in a heading's parenthesis: the coloured label already says them.
_SEVERITY_WORDS = frozenset({"SEVERE", "HIGH", "MODERATE", "LOW", "WARNING"})
#: Abbreviations that stay in capitals when a heading is put in sentence case.
_ABBREVIATIONS = frozenset({"FDA", "INR", "NSAID", "NSAIDS", "QT", "ACE", "GPU"})
SEVERE_LABEL = '<span class="check-severe">Severe</span>'
WARNING_LABEL = '<span class="check-warning">Warning</span>'


def _sentence_case(head: str) -> str:
    words = [w if w in _ABBREVIATIONS else w.lower() for w in head.split(" ")]
    return " ".join(words)[:1].upper() + " ".join(words)[1:]


#: A record entry's reference with its version in a finding ("[AllergyIntolerance/<id>, version 1]": the entry a label
#: removal changes, which the card's id and digest cover).
_ENTRY_REFERENCE = re.compile(r"\s*\[[A-Za-z]+/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}, "
                              r"version ([^\]\s]+)\]")


def check_text(text: str) -> str:
    """A check as the card says it: its capitalised heading in sentence case, a severity in its parenthesis
    left to the coloured label ("ALLERGY CONFLICT (SEVERE): x" → "Allergy conflict: x"), a record entry's reference
    as its version in words (the page showed "[AllergyIntolerance/73738ca2-…, version 1]": a FHIR reference and a
    record id). Only the card's rendering: the check itself keeps its words for the agent, the records and the tests."""
    text = _ENTRY_REFERENCE.sub(r" (record entry version \1)", text)
    found = _HEADING.match(text.strip())
    if not found:
        return text
    aside = found["aside"]
    kept = f" ({aside.lower() if aside.isupper() else aside})" if aside and aside.upper() not in _SEVERITY_WORDS else ""
    return f"{_sentence_case(found['head'])}{kept}: {found['rest']}"


def check_markdown(checks: Sequence[Check]) -> str:
    """Checks in words and colour: "Severe" in red, "Warning" in amber (the classes are styled in ``CSS``), each
    check's text in sentence case (see :func:`check_text`)."""
    return "\n\n".join(f"{SEVERE_LABEL if c.severe else WARNING_LABEL} {escape(check_text(c.text))}" for c in checks)


def header_markdown(card: ApprovalCard, general: Sequence[Check]) -> str:
    """Above the form: what this is, who it is for, the card's notice, the findings that name no field, the checks
    that ran and those that could not (:func:`checks_markdown`), and "No findings" only when every one ran clean."""
    title = f"**Approval needed before writing to the record: {escape(str(card.get('label', 'write')))}**"
    notice = f'\n\n<span class="check-notice">Note</span> {escape(card["notice"])}' if card.get("notice") else ""
    refused = (f'\n\n{SEVERE_LABEL} **A plain approval is refused for this card.** '
               "Give a reason and use *Override & approve*, change the values and re-check, or reject it."
               if card.get("override_required") else "")
    # Every severe finding at the top (it is why a plain approval is refused), then the unplaced checks; a
    # severe finding is not repeated beside its field.
    top = [c for c in _checks(card) if c.severe] + [c for c in general if not c.severe]
    checks = f"\n\n{check_markdown(top)}" if top else ""
    clean = '\n\n<span class="check-ok">No findings</span> Every check listed ran and found nothing for these values.' \
        if all_checks_clean(card) else ""
    ran = checks_markdown(card)
    return f"{title}{refused}{notice}{checks}{ran}{clean}\n\n{patient_header(card.get('patient'))}{FORM_HINT}\n\n"


def _source(detail: str) -> str:
    """A check's source as the card says it, compact: "ingredients and classes: WHO ATC, FDA EPC" → "WHO ATC,
    FDA EPC" (what was consulted, not the sentence around it)."""
    head, sep, rest = detail.partition(": ")
    # A colon inside a parenthesis belongs to the source itself ("US label (methotrexate tablets: once weekly …)"):
    # cutting there left "once weekly, 7.5-25 mg) / ISMP)" on the card, seen in the browser.
    return rest if sep and "(" not in head else detail


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:] if name[:2] != name[:2].upper() else name


def checks_markdown(card: ApprovalCard) -> str:
    """The card's list of checks in clinical words: one line with every check that ran and its source
    ("Checked: allergies and drug classes (WHO ATC, FDA EPC) · dose range (BNF)"), then each check that could
    not run with the reason, as a warning (severe where the check said so). A card that lists no checks says
    that too: silence would read as "checked"."""
    listed = card.get("checks") or []
    if not listed:
        return f"\n\n{WARNING_LABEL} **No safety checks are listed for this write:** nothing was checked automatically."
    severe = set(card.get("severe", []))
    ran = [f"{escape(_lower_first(c['name']))}" + (f" ({escape(_source(c['detail']))})" if c.get("detail") else "")
           for c in listed if c.get("ran")]
    out = f"\n\n**Checked:** {' · '.join(ran)}" if ran else "\n\n**Checked:** nothing (no check could run)"
    for c in listed:
        if not c.get("ran"):
            label = SEVERE_LABEL if f"NOT CHECKED — {c['name'].upper()}: {c['detail']}" in severe else WARNING_LABEL
            out += f"\n\n{label} **Not checked: {escape(_lower_first(c['name']))}** — {escape(c['detail'])}"
    return out


def all_checks_clean(card: ApprovalCard) -> bool:
    """True only when the card lists its checks, every one of them ran, and none found anything: the one case
    in which "No findings" may be said (a check that could not run is never silence)."""
    checks = card.get("checks") or []
    return bool(checks) and all(c.get("ran") for c in checks) and not card.get("warnings") and not card.get("severe")


def card_reference(card: ApprovalCard) -> str:
    """The id (with its version) of the card on the page: a decision names it, and is refused for any other."""
    return str(card.get("card_id", ""))


def edited_args(card: ApprovalCard, values: Sequence[str | None], tools: Tools | None = None) -> dict[str, Any] | None:
    """The arguments the form's fields hold (the fields of :func:`fields` with the same ``tools``), for a re-check
    or an approval; None when the page sent no field values (an API call, which sends the arguments as JSON
    instead). An optional field left empty is left out, and one the clinician emptied is sent as no value (None):
    the card's old value is not kept behind their back."""
    keys = [f.key for f in fields(card, tools)[0]]
    sent = [str(v) if v is not None else "" for v in values[: len(keys)]]
    if not any(v.strip() for v in sent):
        return None
    out: dict[str, Any] = {}
    for key, value in zip(keys, sent, strict=False):
        original = card["args"].get(key)
        if not value.strip():
            if original not in (None, "", []):
                out[key] = None
            continue
        if isinstance(original, list):
            out[key] = [v.strip() for v in value.split(",") if v.strip()]
        else:
            out[key] = value.strip()
    return out


def args_json(card: ApprovalCard | None) -> str:
    """The editable arguments as JSON, the ``/edit`` API's input (the page itself edits the fields)."""
    if card is None:
        return ""
    return json.dumps({k: v for k, v in card["args"].items() if k != "patient_id" and k not in NOT_WRITTEN}, indent=1)


def approval_markdown(card: ApprovalCard, tools: Tools | None = None) -> str:
    """The whole card as text (the header, then each field with its checks): for a front end without the
    form, and for the tests."""
    shown, general = fields(card, tools)
    rows = []
    for f in shown:
        checks = f"  \n{check_markdown(f.checks)}" if f.checks else ""
        rows.append(f"**{escape(f.label)}:** {escape(f.value)}{checks}")
    return header_markdown(card, general) + "\n\n".join(rows)
