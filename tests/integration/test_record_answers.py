"""Short questions about the active patient's record are answered by code in one line that names the patient,
from the real embedded record: no summary dump, no model call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.ehr.service import Ehr
from docgemma.llm.fake import FakeLLM
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.registry import ToolRegistry, default_registry
from tests.conftest import assess


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ToolRegistry:
    ehr = Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")
    return bind_tools(default_registry(), ToolClients(record=ehr))


def ask(registry: ToolRegistry, llm: Any, patient: str, *questions: str) -> list[TurnResult]:
    assistant = Assistant(llm, registry)
    thread = f"record-{patient}-{id(llm)}"
    found = assistant.run_turn(thread, f"Find patient {patient}")
    assert isinstance(found, TurnResult) and found.active_patient and found.active_patient["name"] == patient
    out = []
    for question in questions:
        result = assistant.run_turn(thread, question)
        assert isinstance(result, TurnResult)
        out.append(result)
    return out


def weak() -> FakeLLM:
    return FakeLLM(name="demo", clinically_meaningful=False)  # nothing queued: asking it would fail the turn


@pytest.mark.parametrize(("patient", "question", "answer"), [
    ("Grace Mensah", "What allergies does she have?",
     "Grace Mensah — allergies on record: penicillin (anaphylaxis, high criticality)"),
    ("Grace Mensah", "What was her last creatinine?", "Grace Mensah — no creatinine results on record"),
    ("Grace Mensah", "any allergies?", "Grace Mensah — allergies on record: penicillin (anaphylaxis, high criticality)"),
    ("Grace Mensah", "meds?", "Grace Mensah — no active medications on record"),
    ("Grace Mensah", "last kidney function?", "Grace Mensah — no kidney function results on record"),
    ("Grace Mensah", "when was she last seen?", "Grace Mensah — last seen 2026-11-03 (Acute illness visit)"),
    ("Joseph Mwangi", "What was his last INR?", "Joseph Mwangi — INR, latest: INR in Platelet poor plasma"),
    ("Joseph Mwangi", "meds?", "Joseph Mwangi — active medications: warfarin sodium 5 MG Oral Tablet"),
    ("Amina Okafor", "last kidney function?", "Amina Okafor — kidney function, latest: "),
])
def test_a_record_question_is_one_line_naming_the_patient(registry: ToolRegistry, patient: str, question: str,
                                                         answer: str) -> None:
    [result] = ask(registry, weak(), patient, question)
    assert result.answer.startswith(answer), result.answer
    assert "\n" not in result.answer and result.llm_calls == 0
    assert "small demo model" not in result.answer  # not the retrieved-facts dump


def test_a_meaningful_model_is_not_asked_to_restate_a_short_answer(registry: ToolRegistry) -> None:
    llm = FakeLLM([assess(), "Found Grace Mensah.", assess()])  # the search turn; the record read's result class
    [result] = ask(registry, llm, "Grace Mensah", "What allergies does she have?")
    assert result.answer == "Grace Mensah — allergies on record: penicillin (anaphylaxis, high criticality)"
    assert [c.kind for c in llm.calls] == ["json", "text", "json"]  # no answer written by the model


def test_a_question_asking_for_a_judgement_goes_to_a_meaningful_model(registry: ToolRegistry) -> None:
    llm = FakeLLM([assess(), "Found Amina Okafor.", assess(), "Her creatinine has risen from 1.6 to 1.9 mg/dL."])
    [result] = ask(registry, llm, "Amina Okafor", "How has her kidney function changed over the past year?")
    # The model's words, under the name of the patient whose record they come from.
    assert result.answer == "**Patient: Amina Okafor**\n\nHer creatinine has risen from 1.6 to 1.9 mg/dL."
