"""Forms the rules missed or got wrong on the held-out test split's first pass (bench/results/results_rules_test_firstpass.md),
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
    from docgemma.agent.prefill import prefill

    assert first(query, ACTIVE) == ("TOOL_NEEDED", "explore_connections")
    args = prefill(REG["explore_connections"], state(query, ACTIVE))
    assert (args["fhir_id"], args["resource_type"]) == item and args["patient_id"] == ACTIVE["id"]


def test_a_bare_id_is_not_taken_for_a_record_item() -> None:
    from docgemma.clinical.record_concepts import record_item

    assert record_item("open patient 0f3c9a1e-2b7d-4c55-9e0a-7d1b2c3d4e5f") is None


# Found by a second held-out set (bench/results/results_rules_final_firstpass.md), in this file's own words.


@pytest.mark.parametrize("query", [
    "write a note: reviewed on ward round, pain controlled, safety netting advice given",
    "ok hold the antibiotics. just document: afebrile 48 h, CRP falling, plan oral switch tomorrow",
    "save a progress note: seen with interpreter, consent for LP obtained",
])
def test_a_dictated_note_is_a_note_whatever_its_text_says(query: str) -> None:
    assert remaining_tools(state(query, ACTIVE), REG) == ["save_clinical_note"]


def test_a_clause_that_says_not_to_write_asks_for_no_write() -> None:
    query = "don't prescribe the clarithromycin. just document: INR 3.4, plan amoxicillin if needed"
    assert remaining_tools(state(query, ACTIVE), REG) == ["save_clinical_note"]


def test_an_order_verb_whose_object_is_a_drug_is_an_order_beside_a_note() -> None:
    query = "start dapagliflozin 10 mg od and add a note that sick-day rules were explained"
    assert remaining_tools(state(query, ACTIVE), REG) == ["prescribe_medication", "save_clinical_note"]
    assert "prescribe_medication" not in remaining_tools(state("start a note about warfarin counselling", ACTIVE), REG)


def test_nothing_yet_then_a_check_after_a_dash_runs_the_check() -> None:
    query = "don't order anything yet — just check whether clarithromycin and atorvastatin interact"
    assert first(query, ACTIVE) == ("TOOL_NEEDED", "check_drug_interactions")


@pytest.mark.parametrize(("text", "names"), [
    ("search Fatima Bello", ["Fatima Bello"]), ("could you find Kofi Asante for me?", ["Kofi Asante"]),
    ("have we got a Samuel Kariuki registered?", ["Samuel Kariuki"]), ("Kofi Asante please — 6M, fever", ["Kofi Asante"]),
    ("Amina Okafor — add a note", ["Amina Okafor"]), ("what is Joseph Mwangi taking for his BP?", ["Joseph Mwangi"]),
    ("Is there a Heart Failure clinic?", []), ("is Atrial Fibrillation on the rise?", []),
])
def test_patient_names_in_still_more_forms(text: str, names: list[str]) -> None:
    assert extract_patient_names(text) == names


@pytest.mark.parametrize("query", ["is lithium ok in the first trimester?", "can we still give metformin if eGFR is 25?"])
def test_is_a_drug_ok_in_a_state_is_a_label_question(query: str) -> None:
    assert first(query) == ("TOOL_NEEDED", "check_drug_safety")


def test_ok_then_an_order_verb_is_an_order() -> None:
    assert first("okay rx amoxicillin 500mg tds x 5/7", ACTIVE) == ("TOOL_NEEDED", "prescribe_medication")


def test_a_chart_whose_patient_is_not_an_object_keeps_the_id_asked_for() -> None:
    from docgemma.tools.catalog.get_patient_chart import chart_patient

    ref = chart_patient({"patient_id": "p-9"}, {"patient": "Maria Garcia", "conditions": []}, None)
    assert ref is not None and ref["id"] == "p-9"
