"""Whose record an answer is about is explicit: an id in the message that is not the active patient switches the
active patient (said in the answer, followed by the panel), every record answer names its patient, and an id that
names no patient (or is no identifier at all) is answered "no patient with id …", never with the active chart.
Run on the real embedded record with the demo model (``DOCGEMMA_BACKEND=fake``) and a scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import TurnDone
from docgemma.clinical.entities import malformed_patient_ids
from docgemma.ehr.service import Ehr
from docgemma.llm.fake import FakeLLM
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.registry import default_registry
from docgemma.workspace import Workspace
from tests.conftest import assess


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")


@pytest.fixture(scope="module")
def ids(ehr: Ehr) -> dict[str, str]:
    out = {}
    for name in ("Joseph Mwangi", "Amina Okafor", "Grace Mensah"):
        found = ehr.client.search("Patient", [("name", name.split()[-1])], limit=5)
        out[name] = str(found[0]["id"])
    return out


def workspace(ehr: Ehr, llm: Any) -> Workspace:
    return Workspace(Assistant(llm, bind_tools(default_registry(), ToolClients(record=ehr))), ehr)


def turn(space: Workspace, thread: str, message: str) -> TurnResult:
    done = [e for e in space.turn(thread, message) if isinstance(e, TurnDone)]
    assert len(done) == 1
    return done[0].result


def test_an_id_of_another_patient_switches_the_active_patient_and_says_so(ehr: Ehr, ids: dict[str, str]) -> None:
    space = workspace(ehr, demo_llm())
    space.select_patient("t", {"id": ids["Joseph Mwangi"], "name": "Joseph Mwangi"})
    result = turn(space, "t", f"What were his last kidney function results? patient {ids['Amina Okafor']}")
    # Amina's results, under Amina's name, and the conversation now says she is the patient.
    assert "1.9" in result.answer and "Amina Okafor" in result.answer
    assert "active patient is now Amina Okafor" in result.answer
    assert "Joseph Mwangi" not in result.answer.replace("about Joseph Mwangi", "")
    assert result.active_patient == {"id": ids["Amina Okafor"], "name": "Amina Okafor"}
    assert space.patient_panel(space.active_patient("t")).name == "Amina Okafor"  # the panel follows
    # The next pronoun means the patient whose data was just shown.
    follow = turn(space, "t", "meds?")
    assert follow.answer.startswith("Amina Okafor — active medications")


def test_a_model_written_record_answer_names_its_patient(ehr: Ehr, ids: dict[str, str]) -> None:
    llm = FakeLLM([assess(), "Creatinine 1.9 mg/dL and eGFR 33: stage 3b, falling."])
    space = workspace(ehr, llm)
    space.select_patient("t", {"id": ids["Joseph Mwangi"], "name": "Joseph Mwangi"})
    result = turn(space, "t", f"How has the kidney function changed over time for patient {ids['Amina Okafor']}?")
    assert [t["tool"] for t in result.tools] == ["query_patient_data"]
    assert "**Patient: Amina Okafor**" in result.answer and "eGFR 33" in result.answer
    assert result.active_patient is not None and result.active_patient["name"] == "Amina Okafor"


@pytest.mark.parametrize("message", [
    "Open the chart for patient ../../etc/passwd",
    "Show the chart of patient id ..%2F..%2Fetc%2Fpasswd",
    "What are the labs for patient 1;DROP TABLE patients",
    "Open the chart for MRN <script>alert(1)</script>",
    "Open the chart for patient *",
    "patient *",
    "any allergies for patient %?",
])
def test_a_malformed_id_is_no_patient_never_the_active_chart(ehr: Ehr, ids: dict[str, str], message: str) -> None:
    space = workspace(ehr, demo_llm())
    space.select_patient("t", {"id": ids["Amina Okafor"], "name": "Amina Okafor"})
    result = turn(space, "t", message)
    assert "No patient with id '" in result.answer, result.answer
    assert "chronic kidney" not in result.answer.lower() and "eGFR" not in result.answer
    assert all(t["error_type"] == "unknown_patient" for t in result.tools)
    assert "<script>" not in result.answer
    assert result.active_patient is not None and result.active_patient["name"] == "Amina Okafor"  # unchanged


@pytest.mark.parametrize("unknown", ["zzz-999", "3f2b1c4e-0000-4000-8000-000000000000"])
@pytest.mark.parametrize("question", ["Open the chart for patient {}", "What are the allergies of patient {}?",
                                      "Show the visits of patient {} this year"])
def test_an_id_on_no_record_is_no_patient_at_the_first_try(ehr: Ehr, ids: dict[str, str], unknown: str,
                                                          question: str) -> None:
    space = workspace(ehr, demo_llm())
    space.select_patient("t", {"id": ids["Amina Okafor"], "name": "Amina Okafor"})
    result = turn(space, "t", question.format(unknown))
    assert f"No patient with id '{unknown}' is on the record" in result.answer, result.answer
    assert "Nothing from Amina Okafor's record was used" in result.answer
    assert len(result.tools) == 1 and result.tools[0]["error_type"] == "unknown_patient"  # no retries
    assert result.active_patient is not None and result.active_patient["id"] == ids["Amina Okafor"]


def test_a_name_of_another_patient_switches_and_says_so(ehr: Ehr, ids: dict[str, str]) -> None:
    space = workspace(ehr, demo_llm())
    space.select_patient("t", {"id": ids["Joseph Mwangi"], "name": "Joseph Mwangi"})
    result = turn(space, "t", "What allergies does Grace Mensah have?")
    assert "active patient is now Grace Mensah" in result.answer and "penicillin" in result.answer
    assert space.patient_panel(space.active_patient("t")).name == "Grace Mensah"


@pytest.mark.parametrize("message", ["Grace Mensah allergies?", "Check Grace Mensah allergies",
                                     "And Grace Mensah's meds?", "allergies of Grace Mensah"])
def test_a_name_before_or_after_a_record_word_switches_too(ehr: Ehr, ids: dict[str, str], message: str) -> None:
    space = workspace(ehr, demo_llm())
    space.select_patient("t", {"id": ids["Joseph Mwangi"], "name": "Joseph Mwangi"})
    result = turn(space, "t", message)
    assert "active patient is now Grace Mensah" in result.answer, result.answer
    assert "Joseph Mwangi —" not in result.answer and space.patient_panel(space.active_patient("t")).name == "Grace Mensah"


@pytest.mark.parametrize("message", ["And Kwame Nobody's kidney function?", "What allergies does Kwame Nobody have?",
                                     "Check Kwame Nobody labs", "Add a penicillin allergy for Kwame Nobody"])
def test_a_named_patient_who_is_not_found_is_asked_about_never_replaced_by_the_active_one(
        ehr: Ehr, ids: dict[str, str], message: str) -> None:
    space = workspace(ehr, demo_llm())
    space.select_patient("t", {"id": ids["Joseph Mwangi"], "name": "Joseph Mwangi"})
    before = len(ehr.client.search("Provenance", [], limit=100_000))
    events = list(space.turn("t", message))
    done = [e.result for e in events if isinstance(e, TurnDone)]
    assert len(done) == 1 and space.pending("t") is None  # no card for Joseph Mwangi
    answer = done[0].answer
    assert "which patient 'Kwame Nobody' is" in answer and "Joseph Mwangi, whose record was not used" in answer
    assert "Joseph Mwangi —" not in answer and "**Patient Record" not in answer
    assert len(ehr.client.search("Provenance", [], limit=100_000)) == before


@pytest.mark.parametrize(("text", "found"), [
    ("Open the chart for patient ../../etc/passwd", ["../../etc/passwd"]),
    ("patient id: x' OR '1'='1", ["x'"]),
    ("Show patient 1;DROP TABLE patients", ["1;DROP"]),
    ("patient 45 years old with chest pain", []),
    ("for the patient who has CKD", []),
    ("patient abc-123", []),
    ("patient O'Brien's chart", []),
    ("the patient's chart", []),
    ("id 95ec8510-867d-5952-bbb9-19da7084909b?", []),
    ("the patient ... then", []),
    ("Find patient Robert'); DROP TABLE resources;--", []),  # a name to search, and find nobody
    ("Find patient Okafor&_count=100000", []),
    ("MRN <script>alert(1)</script>", ["<script>alert(1)</script>"]),
    ("Open the chart for patient *", ["*"]),
    ("allergies of id %", ["%"]),
    ("patient 88% on room air, what next?", []),
])
def test_malformed_ids_are_told_from_ages_words_and_identifiers(text: str, found: list[str]) -> None:
    assert malformed_patient_ids(text) == found


def test_what_is_not_seen_on_screen_is_not_read() -> None:
    from docgemma.agent.visible import visible_text

    assert visible_text("Find patient Am\u200bina Oka\u200dfor") == "Find patient Amina Okafor"
    assert visible_text("\u200b\ufeff\u202e") == ""
    assert visible_text("allergies?\u202egnp.exe\u202c") == "allergies?gnp.exe"
    assert visible_text("a\u0000b\ud800c\nd\te") == "abc\nd\te"
    assert visible_text("Amina Okafor — eGFR 33 💊 café") == "Amina Okafor — eGFR 33 💊 café"
