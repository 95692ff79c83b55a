"""Answers written by code, for a model that is not fit to write medical text (the embedded CPU demo
model): the facts the tools returned and their sources, plainly, and an honest word about what the demo
can and cannot do. Nothing here adds a medical claim the tools did not return."""

from __future__ import annotations

import re

from docgemma.agent.state import ToolResult
from docgemma.tools.outcome import Source

DEMO_NOTE = (
    "*The current model, {model}, is a small demo model that is not fit to write medical text, so this "
    "answer is the retrieved information as the sources returned it, without interpretation.*"
)
DEMO_DIRECT = (
    "The current model, {model}, is a small demo model that runs without a GPU. It cannot answer medical "
    "questions from its own knowledge, and it will not try: an answer from it could be wrong.\n\n"
    "On this demo you can still see every other part of the assistant work on real data: FDA drug labels "
    "(\"Check FDA warnings for dofetilide\"), drug interactions (\"Check interactions between warfarin and "
    "aspirin\"), medical literature and clinical trials, the patient record (\"Find patient Grace Mensah\", "
    "\"What are her active medications?\"), and approved writes (\"Prescribe amoxicillin 500 mg three times "
    "daily for Grace Mensah\"). Answers to medical questions need MedGemma on a GPU or a served model."
)
DEMO_IMAGE = (
    "The current model, {model}, cannot read images (it has no vision) and cannot answer medical questions. "
    "The image was received and is shown in the chat; analysing it needs MedGemma on a GPU."
)
DEMO_GREETING = "Hello. I am DocGemma Connect, a clinical decision-support assistant."
#: No rule was sure of the request and the demo model was not asked to guess (one sentence; the closest
#: actions follow as buttons).
DEMO_UNDECIDED = (
    "On this demo ({model}, not fit to judge medical requests) code acts on requests that name what they need "
    "— a drug's FDA warnings or interactions, the patient's record, studies or trials — and it did not "
    "recognise one here, so nothing was guessed: the closest actions are below."
)
_LABEL_RE = re.compile(r"^\[(?P<label>[^\]\n]+)\]\n?")


def patient_of_result(result: ToolResult) -> str | None:
    """The name of the patient whose record a result comes from, when the tool says it."""
    data = result.get("data")
    patient = data.get("patient") if isinstance(data, dict) else None
    name = patient.get("name") if isinstance(patient, dict) else patient
    return str(name) if name else None


def record_line(result: ToolResult) -> str | None:
    """A record result's one-line statement, naming its patient ("Grace Mensah — allergies on record: …"),
    when the tool wrote one."""
    data = result.get("data")
    line = data.get("brief") if isinstance(data, dict) and result["status"] == "success" else None
    if not line:
        return None
    patient = patient_of_result(result)
    return f"{patient} — {line}" if patient else str(line)[:1].upper() + str(line)[1:]


def result_section(result: ToolResult) -> str:
    """One tool result as a titled section: its clinical label (and whose record it is), then the facts."""
    text = result["formatted_result"].strip()
    found = _LABEL_RE.match(text)
    body = text[found.end():] if found else text
    patient = patient_of_result(result)
    title = f"{result['tool_label']} — {patient}" if patient else result["tool_label"]
    return f"**{title}**\n\n{body.strip() or 'No details were returned.'}"


def retrieved_facts(results: list[ToolResult], errors: list[str], sources: list[Source], model: str) -> str:
    """The answer to a tool turn without a model: each successful result, what could not be retrieved,
    and the sources."""
    parts = [DEMO_NOTE.format(model=model)]
    parts += [result_section(r) for r in results if r["status"] == "success"]
    if errors:
        parts.append("**Not retrieved**\n\n" + "\n".join(f"- {e}" for e in errors))
    linked = [s for s in sources if s.get("title")]
    if linked:
        parts.append("**Sources**\n\n" + "\n".join(
            f"- [{s['title']}]({s['url']})" if s.get("url") else f"- {s['title']}" for s in linked
        ))
    return "\n\n".join(parts)
