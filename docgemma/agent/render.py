"""Answers written by code, for a model that is not fit to write medical text (the embedded CPU demo
model): the facts the tools returned and their sources, plainly, and an honest word about what the demo
can and cannot do. Nothing here adds a medical claim the tools did not return."""

from __future__ import annotations

import re

from docgemma.agent.state import ToolResult

DEMO_GREETING = "Hello. I am DocGemma Connect, a clinical decision-support assistant."
_LABEL_RE = re.compile(r"^\[(?P<label>[^\]\n]+)\]\n?")


def patient_of_result(result: ToolResult) -> str | None:
    """The name of the patient whose record a result comes from, when the tool says it."""
    data = result.get("data")
    patient = data.get("patient") if isinstance(data, dict) else None
    name = patient.get("name") if isinstance(patient, dict) else patient
    return str(name) if name else None


def named_patient(text: str, results: list[ToolResult]) -> str:
    """``text`` (a model's answer from record results) with the patient the results belong to named first, when
    the results are one patient's and the text does not name them: a record answer never leaves whose data it
    is to the reader's memory of the conversation."""
    names = list(dict.fromkeys(n for n in (patient_of_result(r) for r in results) if n))
    if len(names) != 1 or names[0].lower() in text.lower():
        return text
    return f"**Patient: {names[0]}**\n\n{text}"


def record_line(result: ToolResult) -> str | None:
    """A record result's one-line statement, naming its patient ("Grace Mensah — allergies on record: …"),
    when the tool wrote one."""
    data = result.get("data")
    line = data.get("brief") if isinstance(data, dict) and result["status"] == "success" else None
    if not line:
        return None
    patient = patient_of_result(result)
    return f"{patient} — {line}" if patient else str(line)[:1].upper() + str(line)[1:]


#: A result's heading where the tool's label names an action, not what was found ("Patient Search" headed a list
#: of patients); the other labels name what they hold ("Patient Record", "Clinical Trials").
#: Keyed by label: a tool's name is spelled only in its own module (``tests/unit/test_tool_names.py``).
_HEADINGS = {"Patient Search": "Patients found", "Patient Data Query": "From the record",
             "Drug Interaction Check": "Drug interactions"}


def result_section(result: ToolResult) -> str:
    """One tool result as a titled section: what it holds (and whose record it is), then the facts."""
    text = result["formatted_result"].strip()
    found = _LABEL_RE.match(text)
    body = text[found.end():] if found else text
    patient = patient_of_result(result)
    heading = _HEADINGS.get(result["tool_label"], result["tool_label"])
    title = f"{heading} — {patient}" if patient else heading
    return f"**{title}**\n\n{body.strip() or 'No details were returned.'}"


def retrieved_facts(results: list[ToolResult], errors: list[str]) -> str:
    """The answer to a tool turn without a model: each successful result and what could not be retrieved. That a
    demo writes no medical text is said once, on the page, not under every answer. The sources are not repeated
    in it: every front end lists the turn's sources under the answer (the page escapes links inside an answer, so
    a list here showed as raw "[title](https://…setid=…)" above the page's own linked "Sources:" line)."""
    parts = [result_section(r) for r in results if r["status"] == "success"]
    if errors:
        parts.append("**Not retrieved**\n\n" + "\n".join(f"- {e}" for e in errors))
    return "\n\n".join(parts)
