"""The patient search by hospital number ("who is DG-1003?"): the tool finds the patient the number or record id
belongs to, in any case, and says plainly when none has it; in the app the turn shows that patient and makes them
the active one (the sixth set's second look: before, the search read names only and the turn opened a chart)."""

from __future__ import annotations

from pathlib import Path

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import TurnDone
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.catalog.search_patient import format_patients
from docgemma.tools.patient_roster import record_roster
from docgemma.tools.registry import default_registry
from docgemma.tools.spec import ToolContext
from docgemma.workspace import Workspace


def _search(tmp_path: Path, name: str) -> dict:
    registry = bind_tools(default_registry(), ToolClients(record=Ehr.embedded(tmp_path / "record.sqlite")))
    spec = registry["search_patient"]
    outcome = spec.run(spec.args_model(name=name), ToolContext())
    assert outcome["status"] == "success"
    return outcome["data"]


def test_a_hospital_number_in_any_case_finds_its_one_patient(tmp_path: Path) -> None:
    for written in ("DG-1003", "dg-1003"):
        data = _search(tmp_path, written)
        assert [m["name"] for m in data["matches"]] == ["Grace Mensah"] and data["query"] == written


def test_a_record_id_finds_its_patient_and_an_unknown_number_is_said_plainly(tmp_path: Path) -> None:
    grace = _search(tmp_path, "DG-1003")["matches"][0]["id"]
    assert [m["name"] for m in _search(tmp_path, f"Patient/{grace}")["matches"]] == ["Grace Mensah"]
    missing = _search(tmp_path, "DG-9999")
    assert missing["matches"] == []
    assert format_patients(missing) == "No patient has the hospital number or record id 'DG-9999'."


def test_a_name_is_still_searched_by_its_words(tmp_path: Path) -> None:
    assert len(_search(tmp_path, "James Wilson")["matches"]) == 2


def test_who_is_a_number_in_the_app_shows_that_patient_and_makes_them_active(tmp_path: Path) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    registry = bind_tools(default_registry(), ToolClients(record=ehr))
    space = Workspace(Assistant(demo_llm(), registry, patient_context=ehr.patient_context,
                                patient_roster=record_roster(ehr)), ehr)
    result = next(e.result for e in space.turn("t", "who is dg-1005?") if isinstance(e, TurnDone))
    assert [t["tool"] for t in result.tools] == ["search_patient"]
    assert "Kofi Asante" in result.answer
    assert result.active_patient is not None and result.active_patient["name"] == "Kofi Asante"
