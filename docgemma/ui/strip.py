"""The active patient in a compact strip above the chat: name, birth date and the safety flags of the compiled
summary (allergies, allergy conflicts, renal function, anticoagulation, pregnancy, …). On a phone the patient
panel is far below the chat; the strip (sticky there, ``ui/style.py``) keeps whose record it is and what to be
careful of in view while chatting. Pure functions on the summary text (no Gradio)."""

from __future__ import annotations

import re

from docgemma.ui.markup import escape
from docgemma.ui.wording import clinical_text

#: Shown while no patient is active (the panel says how to choose one).
NO_ACTIVE = "*No active patient: pick one in the patient panel, or ask about one by name.*"
#: The summary's own words when it has no flag.
NO_FLAGS = "No allergies or safety flags recorded."
#: Safety-section lines that are no caution (the panel lists them): left out of the strip.
NOT_A_FLAG = ("IMAGES ON RECORD",)
#: Flags about an allergy: shown as severe (red), the others as warnings.
SEVERE_KINDS = ("ALLERGY",)
_FLAG = re.compile(r"^(?P<kind>[A-Z][A-Z ]+[A-Z]): (?P<text>.+)$")
_BORN = re.compile(r"\(born (\d{4}-\d{2}-\d{2})")


def safety_lines(summary_text: str) -> list[str]:
    """The lines of the summary's "## Safety" section (empty when it has none)."""
    lines: list[str] = []
    inside = False
    for line in summary_text.splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## Safety"
            continue
        if inside and line.strip():
            lines.append(line.strip())
    return lines


def flags(summary_text: str) -> list[tuple[str, str, bool]]:
    """The safety flags as (kind in words, what, severe): ``("Allergy", "penicillin — Anaphylaxis, criticality
    high", True)``. A line that names no kind is kept whole, as a warning: a flag is never dropped for its form."""
    out = []
    for line in safety_lines(summary_text):
        if line == NO_FLAGS or line.startswith(NOT_A_FLAG):
            continue
        found = _FLAG.match(line)
        if found is None:
            out.append(("Caution", line, False))
            continue
        kind, text = found.group("kind"), found.group("text").rstrip(".")
        if kind == "ALLERGY":
            text = re.sub(r"^Allergy to ", "", text)
        elif not kind.startswith(SEVERE_KINDS):
            # The finding, without the advice after it ("eGFR 33, falling — review renally cleared drugs"): the
            # strip stays one or two lines on a phone; the panel gives the advice.
            text = text.split(" — ", 1)[0]
        out.append((kind.capitalize(), text, kind.startswith(SEVERE_KINDS)))
    return out


def strip_markdown(name: str | None, summary_text: str | None) -> str:
    """The strip, one run of text: the patient's name and birth date, then each flag with its kind in words and
    colour; the summary's "none recorded" when there is no flag; :data:`NO_ACTIVE` without a patient."""
    if not name or summary_text is None:
        return NO_ACTIVE
    born = _BORN.search(summary_text)
    head = f"**{escape(name)}**" + (f" · born {born.group(1)}" if born else "")
    found = flags(summary_text)
    if not found:
        return f"{head} · {NO_FLAGS}"
    shown = [f'<span class="check-{"severe" if severe else "warning"}">{escape(kind)}</span> '
             f"{escape(clinical_text(text))}" for kind, text, severe in found]
    return " · ".join([head, *shown])
