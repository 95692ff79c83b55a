"""The harness of the named-patient tests: one turn through the Assistant (the rule stand-in model, the real
embedded record, the record's roster wired in as the app wires it) with one patient active, and the verdict on its
answer: about the patient the message named, a question back, or wrong (about the active patient, or another)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import TurnDone
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.registry import default_registry
from docgemma.workspace import Workspace


@dataclass(frozen=True)
class Demo:
    """One patient of the demo record."""

    id: str
    name: str
    birth_date: str
    mrn: str


def demo_patients(ehr: Ehr) -> list[Demo]:
    """Every patient of the record, with the demo MRN."""
    out = []
    for patient in ehr.client.search("Patient", [], limit=1000):
        name = patient["name"][0]
        mrn = next(i["value"] for i in patient["identifier"] if i["system"] == "urn:docgemma:demo-mrn")
        out.append(Demo(str(patient["id"]), f"{' '.join(name['given'])} {name['family']}", patient["birthDate"], mrn))
    return sorted(out, key=lambda p: p.mrn)


_SPACES: dict[int, Workspace] = {}


def workspace(ehr: Ehr) -> Workspace:
    """One workspace per record, built as the app builds it (runtime.build_assistant's record wiring)."""
    if id(ehr) not in _SPACES:
        kwargs: dict[str, Any] = {}
        try:
            from docgemma.tools.patient_roster import record_roster
        except ImportError:  # before the roster existed (the held-out set's first pass)
            pass
        else:
            kwargs["patient_roster"] = record_roster(ehr)
        assistant = Assistant(demo_llm(), bind_tools(default_registry(), ToolClients(record=ehr)),
                              patient_context=ehr.patient_context, **kwargs)
        _SPACES[id(ehr)] = Workspace(assistant, ehr)
    return _SPACES[id(ehr)]


_THREADS = iter(range(10**9))


def named_turn(ehr: Ehr, active: str | Demo, message: str) -> tuple[TurnResult, list[Demo]]:
    """One turn of ``message`` in a fresh conversation whose active patient is ``active`` (a patient, or a name:
    the first of that name)."""
    patients = demo_patients(ehr)
    space = workspace(ehr)
    thread = f"named-{next(_THREADS)}"
    first = active if isinstance(active, Demo) else next(p for p in patients if p.name == active)
    space.select_patient(thread, {"id": first.id, "name": first.name})
    done = [e.result for e in space.turn(thread, message) if isinstance(e, TurnDone)]
    assert len(done) == 1, message
    return done[0], patients


class Verdict(enum.Enum):
    RIGHT = "about the patient named"
    ASKED = "asked which patient"
    UNDONE = "not recognised: nobody's record read"
    WRONG = "about another patient"


#: How an answer may mention the active patient without using their record.
_NOT_USED = ("whose record was not used", "Nothing from {name}'s record was used", "earlier messages about {name}",
             "not the active patient, {name}")


def wanted_patients(patients: list[Demo], target: str) -> list[Demo]:
    name, _, born = target.partition(" 19")
    return [p for p in patients if p.name == name and (not born or p.birth_date == "19" + born)]


def judge(result: TurnResult, patients: list[Demo], active: str | Demo, target: str | None) -> Verdict:
    """RIGHT: the turn ends on the named patient (``target``: a name, or "name birth-date" for a namesake; a name
    two patients share can only be ASKED about) and its answer names them and no other patient; WRONG: the answer
    reads another patient's record (the active one's above all), a suggested action names another patient, or the
    turn ends on another patient; ASKED: it asks which patient (or says none is found); UNDONE: it reads no record
    and asks nothing."""
    was = active if isinstance(active, Demo) else next(p for p in patients if p.name == active)
    answer = result.answer
    for phrase in _NOT_USED:
        answer = answer.replace(phrase.format(name=was.name), "")
    named = {p.name for p in patients if p.name in answer}
    now = result.active_patient
    wanted = wanted_patients(patients, target) if target is not None else []
    target_name = wanted[0].name if len(wanted) == 1 else None
    # No button for a patient other than the one named.
    buttons = {p.name for p in patients if any(p.name in action for action in result.follow_ups)}
    if buttons - {target_name, *(w.name for w in wanted)}:
        return Verdict.WRONG
    if (now is not None and len(wanted) == 1 and now["id"] == wanted[0].id != was.id and named == {wanted[0].name}
            and "which one did you mean" not in answer.lower()):
        return Verdict.RIGHT
    reads = {p.name for p in patients
             if f"{p.name} —" in answer or f"**Patient: {p.name}**" in answer or f"Patient Record — {p.name}" in answer}
    # A record answer is about the patient active at its end: the target's name read while a namesake is active is
    # the namesake's record.
    read_namesake = target_name in reads and (now is None or len(wanted) != 1 or now["id"] != wanted[0].id)
    if reads - {target_name} or read_namesake or (now is not None and now["id"] not in {was.id, *(w.id for w in wanted)}):
        return Verdict.WRONG
    if any(w in answer.lower() for w in ("which one", "which patient", "no patient", "did you mean",
                                         "was not found", "give their patient id")):
        return Verdict.ASKED
    return Verdict.UNDONE
