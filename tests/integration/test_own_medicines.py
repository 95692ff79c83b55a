""""Her other meds" are the active patient's active medication orders, read from the record by code (issue 26,
item 3): the interaction question "is there any interaction between doxycycline and her other meds?" checks
doxycycline with her record's medicines, with no model call (the embedded 135M model once invented "penicillin,
penicillin_a … penicillin_d" for it, in 65 s). A record with no active order, or none readable, asks the clinician.

First pass of the variants before the fix (``decide`` + the extractor): 2 of 5 went to the interaction check with no
drug list (the model was asked for it), one to the drug's label alone ("check citalopram against her other
medicines"), one to a record query ("could tramadol interact with her regular meds?"), one undecided ("does
clarithromycin interact with anything she's on?")."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_facts, record_write_check
from docgemma.tools.registry import default_registry
from tests.fake_openfda import FakeOpenFDA
from tests.integration.test_named_drug_safety import add_patient

VARIANTS = [
    ("is there any interaction between doxycycline and her other meds?", "doxycycline"),
    ("does clarithromycin interact with anything she's on?", "clarithromycin"),
    ("any interactions between fluconazole and her current medications?", "fluconazole"),
    ("check citalopram against her other medicines", "citalopram"),
    ("could tramadol interact with her regular meds?", "tramadol"),
]


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")


def assistant(ehr: Ehr) -> Assistant:
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=FakeOpenFDA().transport(), record=ehr))
    return Assistant(demo_llm(), registry, patient_context=ehr.patient_context,
                     record_facts=record_facts(ehr), write_check=record_write_check(ehr))


def ask(ehr: Ehr, patient: dict[str, str], message: str, thread: str) -> TurnResult:
    bot = assistant(ehr)
    bot.set_active_patient(thread, patient)  # type: ignore[arg-type]
    result = bot.run_turn(thread, message)
    assert isinstance(result, TurnResult), result
    return result


@pytest.mark.parametrize(("message", "drug"), VARIANTS)
def test_her_other_meds_are_her_records_active_orders_with_no_model_call(ehr: Ehr, message: str, drug: str) -> None:
    patient = add_patient(ehr, "Ownmeds", orders=("Warfarin 5 MG Oral Tablet", "Simvastatin 40 MG Oral Tablet"))
    result = ask(ehr, patient, message, f"own-{drug}")
    assert result.llm_calls == 0, result.timeline
    assert [t["tool"] for t in result.tools] == ["check_drug_interactions"]
    assert result.tools[0]["args"]["drug_names"] == [drug, "warfarin", "simvastatin"]
    select = next(e for e in result.timeline if e["node"] == "tool_select")
    assert "active medications from the record: warfarin, simvastatin" in select["detail"]


def test_no_active_order_asks_for_the_other_drug_and_asks_no_model(ehr: Ehr) -> None:
    patient = add_patient(ehr, "Nomeds")
    result = ask(ehr, patient, "is there any interaction between doxycycline and her other meds?", "own-none")
    assert result.llm_calls == 0, result.timeline
    assert not result.tools  # nothing checked half-way
    select = next(e for e in result.timeline if e["node"] == "tool_select")
    assert "no other active medication orders on record" in select["detail"]
    assert result.answer == ("Test Nomeds has no other active medication orders on record. Which medicines should "
                             "doxycycline be checked against?"), result.answer
