"""A connection question names its start in words ("why is she on lisinopril?", "what's linked to her kidney
disease?"): the item is read off the active patient's record by code, and the connections tool runs with no model
call. Before, the embedded default asked "which record item?" for every such question, the buttons' own forms
included ("What is this patient's lisinopril treating?"): the tool never ran on the default."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.eval.train_router import demo_roster
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.connection_start import connection_start
from docgemma.tools.ehr_tools import record_facts
from docgemma.tools.registry import default_registry
from tests.fake_openfda import FakeOpenFDA

AMINA = next(p for p in demo_roster().patients if p.name == "Amina Okafor")


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")


def ask(ehr: Ehr, message: str, thread: str) -> TurnResult:
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=FakeOpenFDA().transport(), record=ehr))
    bot = Assistant(demo_llm(), registry, patient_context=ehr.patient_context, record_facts=record_facts(ehr))
    bot.set_active_patient(thread, {"id": AMINA.id, "name": AMINA.name})
    result = bot.run_turn(thread, message)
    assert isinstance(result, TurnResult), result
    return result


@pytest.mark.parametrize(("message", "kind", "linked"), [
    ("what is her lisinopril for?", "MedicationRequest", "Essential hypertension"),
    ("What is this patient's lisinopril treating?", "MedicationRequest", "Essential hypertension"),
    ("What is linked to this patient's HTN in the record?", "Condition", "lisinopril"),
])
def test_the_item_a_connection_question_names_is_read_off_her_record(ehr: Ehr, message: str, kind: str,
                                                                      linked: str) -> None:
    result = ask(ehr, message, f"conn-{message}")
    assert result.llm_calls == 0, result.timeline
    assert [t["tool"] for t in result.tools] == ["explore_connections"], result.answer
    assert result.tools[0]["args"]["resource_type"] == kind
    assert linked in result.answer
    # Her own order is what was asked about: never called a duplicate of itself.
    assert "duplicates" not in result.answer


def test_a_drug_she_is_not_on_is_said_never_replaced_by_another_item(ehr: Ehr) -> None:
    result = ask(ehr, "why is she on amlodipine?", "conn-not-on")
    assert result.tools == []
    assert result.clarification and "amlodipine is not among Amina Okafor's active medication orders" in result.answer


def _condition(cid: str, text: str) -> dict[str, Any]:
    return {"resourceType": "Condition", "id": cid, "code": {"text": text},
            "clinicalStatus": {"coding": [{"code": "active"}]}}


def _result(oid: str, text: str, when: str) -> dict[str, Any]:
    return {"resourceType": "Observation", "id": oid, "code": {"text": text}, "effectiveDateTime": when}


RECORD = [_condition("c1", "Anemia (disorder)"), _condition("c2", "Chronic obstructive lung disease (disorder)"),
          _condition("c3", "Atrial fibrillation"), _result("o1", "Hemoglobin [Mass/volume] in Blood", "2025-01-02"),
          _result("o2", "Hemoglobin [Mass/volume] in Blood", "2026-03-04"),
          {"resourceType": "MedicationRequest", "id": "m1", "medicationCodeableConcept": {"text": "Apixaban 5 MG"}}]


@pytest.mark.parametrize(("message", "drugs", "start"), [
    ("what's behind her anaemia", [], "c1"),  # British spelling, the record's American one
    ("anything linked to the COPD?", [], "c2"),  # a short form
    ("what is tied to his AF", [], "c3"),
    ("why is the haemoglobin low", [], "o2"),  # the newest result of the one named
    ("is the apixaban for the AF?", ["apixaban"], "m1"),  # the drug's order first
])
def test_the_start_is_the_drug_then_the_condition_then_the_newest_result(message: str, drugs: list[str],
                                                                         start: str) -> None:
    found = connection_start(message, drugs, RECORD)
    assert found is not None and found.fhir_id == start


@pytest.mark.parametrize("message", ["what's going on with her?", "how do her anaemia and COPD relate"])
def test_no_item_or_two_alike_is_no_start(message: str) -> None:
    # Nothing named, or two conditions named alike: the clinician is asked which (nothing is guessed).
    assert connection_start(message, [], RECORD) is None


def test_a_product_that_holds_her_order_is_still_a_duplicate_in_a_connection_question(ehr: Ehr) -> None:
    # Only the drug that is her order is no duplicate of itself: janumet (sitagliptin and metformin) beside her
    # metformin is one, whatever the question (the review of this change found the line hidden).
    result = ask(ehr, "why is she on metformin? thinking of switching to janumet", "conn-janumet")
    assert "janumet would duplicate Amina Okafor's active order metformin" in result.answer


@pytest.mark.parametrize("message", [
    "which of her meds are for which condition?",
    "map her medications to her diagnoses",
    "for this patient, match each med to the condition it's treating",
    "Which of this patient's medications is for which condition?",  # the unsure turn's own button
])
def test_a_question_of_the_whole_record_maps_every_active_order_to_its_recorded_reason(ehr: Ehr, message: str) -> None:
    """Before: the chart opened, or the default asked "which record item?" (every written-apart set has the form)."""
    result = ask(ehr, message, f"map-{message}")
    assert result.llm_calls == 0, result.timeline
    assert [t["tool"] for t in result.tools] == ["explore_connections"], result.answer
    args = result.tools[0]["args"]
    assert args.get("fhir_id") is None and args.get("resource_type") is None
    answer = result.answer
    # Her orders, each with the reason the record gives; one without a reason is said to have none, never matched
    # by guess; and the condition no order names.
    assert answer.index("metformin") < answer.index("Type 2 diabetes") < answer.index("lisinopril")
    assert "Essential hypertension" in answer
    assert re.search(r"atorvastatin 20 MG Oral Tablet \(active, 2019-02-11\)[^\n]*\n    \(no reason recorded on the order\)",
                     answer), answer
    assert answer.index("no active order gives as its reason") < answer.index("Chronic kidney disease")


def test_a_question_that_names_an_item_not_on_record_is_asked_not_answered_with_the_map(ehr: Ehr) -> None:
    result = ask(ehr, "what is linked to her gout?", "map-not-gout")
    assert result.tools == [] and result.clarification, result.answer


@pytest.mark.parametrize("args", [{"fhir_id": "x", "resource_type": None}, {"fhir_id": None, "resource_type": "Condition"}])
def test_an_item_id_without_its_type_is_an_error_never_the_whole_record(ehr: Ehr, args: dict[str, Any]) -> None:
    # The arguments' JSON schema lets each be null on its own (a grammar cannot say "both"): the tool refuses it.
    from docgemma.tools.catalog.explore_connections import explore_connections

    spec = default_registry()["explore_connections"]
    outcome = explore_connections(ehr, spec.args_model(patient_id=AMINA.id, **args), None)  # type: ignore[arg-type]
    assert outcome["status"] == "error" and outcome["error_type"] == "invalid_args"
    whole = spec.args_model(patient_id="p")  # both absent (nulls dropped on the way): the whole record
    assert whole.fhir_id is None and whole.resource_type is None  # type: ignore[attr-defined]
