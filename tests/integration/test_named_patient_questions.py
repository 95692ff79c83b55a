"""Issue 26's "Done when": a generated set of record questions naming another patient than the active one — every
demo patient × every way of naming them (Title Case, lower, UPPER, surname first, possessive, with the birth date,
the MRN, ``Patient/<id>``) × the short record questions the app answers by code — gets no answer about the wrong
patient. Each turn runs through the Assistant on the rule stand-in model and the real embedded record, with another
patient active; it must end on the patient named (answer naming them and no one else) or, for a name two patients
share given without a birth date, ask which one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from docgemma.ehr.service import Ehr
from tests.integration.named_patient import Demo, Verdict, demo_patients, judge, named_turn

#: Short record questions with the name before the record word ("<name> allergies?"): the possessive fits here.
NOUN_FORMS = ["{n} allergies?", "{n} meds?", "{n} last kidney function?", "{n} latest INR?", "{n} problems?",
              "{n} vitals?", "{n} latest HbA1c?"]
#: Short record questions with the name elsewhere.
OTHER_FORMS = ["any allergies for {n}?", "does {n} have any allergies?", "what meds is {n} on", "when was {n} last seen?",
               "last creatinine for {n}?", "labs for {n}?", "is {n} on any meds?"]


def _surname_first(p: Demo) -> str:
    given, family = p.name.rsplit(" ", 1)
    return f"{family}, {given}" if p.mrn[-1] in "13579" else f"{family.lower()} {given.lower()}"


#: How the patient is named: (form, how it renders a patient, whether it says which of two namesakes).
NAME_FORMS: list[tuple[str, Callable[[Demo], str], bool]] = [
    ("title", lambda p: p.name, False),
    ("lower", lambda p: p.name.lower(), False),
    ("upper", lambda p: p.name.upper(), False),
    ("surname_first", _surname_first, False),
    ("possessive", lambda p: f"{p.name.lower() if p.mrn[-1] in '02468' else p.name}'s", False),
    ("birth_date", lambda p: f"{p.name.lower()} born {p.birth_date}" if p.mrn[-1] in "13579"
     else f"{p.name} (DOB {p.birth_date})", True),
    ("mrn", lambda p: p.mrn if p.mrn[-1] in "13579" else f"mrn {p.mrn.lower()}", True),
    ("reference", lambda p: f"Patient/{p.id}", True),
]


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")


@pytest.mark.parametrize(("form", "render", "exact"), NAME_FORMS, ids=[f[0] for f in NAME_FORMS])
def test_no_record_question_naming_another_patient_is_answered_about_the_wrong_one(
        ehr: Ehr, form: str, render: Callable[[Demo], str], exact: bool) -> None:
    patients = demo_patients(ehr)
    questions = NOUN_FORMS if form == "possessive" else NOUN_FORMS + OTHER_FORMS
    verdicts: Counter[str] = Counter()
    failures = []
    for i, patient in enumerate(patients):
        active = patients[(i + 1) % len(patients)]  # another patient (for one James Wilson, his namesake)
        namesakes = sum(p.name == patient.name for p in patients) > 1
        target = f"{patient.name} {patient.birth_date}" if namesakes else patient.name
        expected = Verdict.ASKED if namesakes and not exact else Verdict.RIGHT
        for question in questions:
            message = question.format(n=render(patient))
            result, _ = named_turn(ehr, active, message)
            verdict = judge(result, patients, active, target)
            verdicts[verdict.name] += 1
            if verdict is not expected:
                failures.append((message, active.name, verdict.name, result.answer[:160]))
    assert not failures, f"{len(failures)} of {sum(verdicts.values())} ({dict(verdicts)}): {failures[:5]}"


def test_a_name_and_a_birth_date_pick_one_of_two_namesakes_and_a_wrong_date_asks(ehr: Ehr) -> None:
    patients = demo_patients(ehr)
    young = next(p for p in patients if p.name == "James Wilson" and p.birth_date == "1988-11-30")
    result, _ = named_turn(ehr, "Grace Mensah", "James Wilson born 1988-11-30")
    assert result.active_patient == {"id": young.id, "name": "James Wilson"}
    assert "Which one did you mean" not in result.answer
    result, _ = named_turn(ehr, "Grace Mensah", "amina okafor born 1970-01-01, any allergies?")
    assert judge(result, patients, "Grace Mensah", "Amina Okafor") is Verdict.ASKED, result.answer
    assert "Grace Mensah —" not in result.answer


def test_an_unreadable_patient_list_is_said_and_never_replaced_by_the_active_patient(ehr: Ehr) -> None:
    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.agent.events import TurnDone
    from docgemma.tools.binding import ToolClients, bind_tools
    from docgemma.tools.registry import default_registry
    from docgemma.workspace import Workspace

    space = Workspace(Assistant(demo_llm(), bind_tools(default_registry(), ToolClients(record=ehr)),
                                patient_roster=lambda: None), ehr)
    grace = next(p for p in demo_patients(ehr) if p.name == "Grace Mensah")
    space.select_patient("t", {"id": grace.id, "name": grace.name})
    [done] = [e.result for e in space.turn("t", "What allergies does Amina Okafor have?") if isinstance(e, TurnDone)]
    assert "patient list could not be read" in done.answer
    assert "Amina Okafor" in done.answer and "Grace Mensah —" not in done.answer
