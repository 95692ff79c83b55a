"""Forms the rules missed or got wrong on the held-out test split's first pass (bench/results_rules_test_firstpass.md),
written here in this file's own words: a named patient is found before a write is made for them, "what came out of
<item>" explores the record's connections, history abbreviations and "overview" read the record, "Document: …" is a
dictated note, "is it ok to prescribe X …?" is a label question. And the near misses that must stay as they were."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.patterns import remaining_tools
from docgemma.agent.rules import decide
from docgemma.clinical.entities import extract_entities, extract_patient_names
from docgemma.tools.registry import default_registry

REG = default_registry()
ACTIVE = {"id": "jm-002", "name": "Joseph Mwangi"}


def state(query: str, active: dict[str, str] | None = None) -> Any:
    return {"user_query": query, "extracted_entities": extract_entities(query), "active_patient": active}


def first(query: str, active: dict[str, str] | None = None) -> tuple[str, str | None] | None:
    d = decide(state(query, active), REG)
    return (d.intent, d.tool) if d else None


@pytest.mark.parametrize(("query", "tools"), [
    ("Samuel Kariuki developed hives with ceftriaxone, please record it", ["search_patient", "add_allergy"]),
    ("Fatima Bello had angioedema on enalapril - document this", ["search_patient", "add_allergy"]),
    ("Find Kofi Asante and start him on paracetamol 250 mg qds", ["search_patient", "prescribe_medication"]),
    ("Look up Amina Okafor, then prescribe metformin 500 mg bd", ["search_patient", "prescribe_medication"]),
])
def test_a_named_patient_is_found_before_a_write_for_them(query: str, tools: list[str]) -> None:
    assert remaining_tools(state(query), REG) == tools


@pytest.mark.parametrize(("text", "names"), [
    ("search for kofi asante", ["kofi asante"]),
    ("has Fatima Bello had her bloods?", ["Fatima Bello"]),
    ("next patient is Samuel Kariuki", ["Samuel Kariuki"]),
    # Not names: lower-case clinical look-ups, an article, a title alone, a capitalised topic as the subject.
    ("look up wells criteria", []), ("find sepsis bundle", []), ("find a doctor", []), ("search for recent trials", []),
    ("Heart Failure is common?", []), ("does Atrial Fibrillation have a cure", []),
])
def test_patient_names_in_more_forms(text: str, names: list[str]) -> None:
    assert extract_patient_names(text) == names


def test_what_came_out_of_a_visit_explores_its_connections() -> None:
    query = "what resulted from the diabetes review encounter 0f3c9a1e-2b7d-4c55-9e0a-7d1b2c3d4e5f?"
    assert first(query, ACTIVE) == ("TOOL_NEEDED", "explore_connections")


@pytest.mark.parametrize(("query", "tool"), [
    ("Hx?", "query_patient_data"), ("PSHx?", "query_patient_data"), ("show me the overview", "get_patient_chart"),
])
def test_history_abbreviations_and_overview_read_the_record(query: str, tool: str) -> None:
    assert first(query, ACTIVE) == ("TOOL_NEEDED", tool)


def test_document_colon_is_a_dictated_note() -> None:
    assert first("Document: reviewed with family, plan agreed, DNACPR discussed", ACTIVE) == \
        ("TOOL_NEEDED", "save_clinical_note")


def test_is_it_ok_to_prescribe_a_drug_is_a_label_question_not_a_write() -> None:
    assert first("Is it okay to give tramadol to a patient with epilepsy?") == ("TOOL_NEEDED", "check_drug_safety")
    assert not {s.name for s in REG if s.writes} & set(remaining_tools(state("is it fine to start lithium in CKD?"),
                                                                        REG))


@pytest.mark.parametrize(("query", "item"), [
    ("what was the metformin (a1b2c3d4-0000-4000-8000-000000000001) started for?",
     ("a1b2c3d4-0000-4000-8000-000000000001", "MedicationRequest")),
    ("anything linked to the CKD dx 0f3c9a1e-2b7d-4c55-9e0a-7d1b2c3d4e5f?",
     ("0f3c9a1e-2b7d-4c55-9e0a-7d1b2c3d4e5f", "Condition")),
])
def test_a_question_about_one_record_item_by_id_explores_from_it(query: str, item: tuple[str, str]) -> None:
    from docgemma.agent.extract import prefill

    assert first(query, ACTIVE) == ("TOOL_NEEDED", "explore_connections")
    args = prefill(REG["explore_connections"], state(query, ACTIVE))
    assert (args["fhir_id"], args["resource_type"]) == item and args["patient_id"] == ACTIVE["id"]


def test_a_bare_id_is_not_taken_for_a_record_item() -> None:
    from docgemma.tools.extract import record_item

    assert record_item("open patient 0f3c9a1e-2b7d-4c55-9e0a-7d1b2c3d4e5f") is None
