"""The workspace under the web UI: one patient search (the tool's), the patient panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.ehr.service import Ehr
from docgemma.tools.catalog.search_patient import PatientSearchArgs, search_patient
from docgemma.tools.registry import ToolContext, default_registry
from docgemma.workspace import NO_PATIENT, Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(Assistant(demo_llm(), default_registry()), Ehr.embedded(tmp_path / "record.sqlite"))


def test_the_panel_search_is_the_tool_search(workspace: Workspace) -> None:
    assert workspace.ehr is not None
    for query in ("Mensah", "Grace Mensah", "Garcia"):
        tool = search_patient(workspace.ehr, PatientSearchArgs(name=query), ToolContext())
        found = workspace.search_patients(query)
        assert found and [m["id"] for m in found] == [m["id"] for m in tool["data"]["matches"]], query
    assert found[0]["name"] == "Maria Garcia" and found[0]["birth_date"]
    # Behaviour, not only sameness with the tool: every word of the query must be in the name.
    assert [m["name"] for m in workspace.search_patients("Grace Mensah")] == ["Grace Mensah"]
    assert workspace.search_patients("x") == [] and workspace.search_patients("Nobody Here") == []
    assert workspace.search_patients("Garcia " * 20)  # longer than the tool's limit: cut, not an error


def test_patient_panel_follows_the_active_patient(workspace: Workspace) -> None:
    assert workspace.patient_panel(workspace.active_patient("t")).message == NO_PATIENT
    grace = workspace.search_patients("Mensah")[0]
    assert workspace.select_patient("t", {"id": grace["id"], "name": grace["name"]}) is False  # no earlier patient: no switch
    panel = workspace.patient_panel(workspace.active_patient("t"))
    assert panel.message is None and panel.name == "Grace Mensah" and panel.summary and "penicillin" in panel.summary
    maria = workspace.search_patients("Garcia")[0]
    assert workspace.select_patient("t", {"id": maria["id"], "name": maria["name"]}) is True
    assert workspace.patient_panel(workspace.active_patient("t")).name == "Maria Garcia"


def test_without_a_record_there_is_no_panel(tmp_path: Path) -> None:
    bare = Workspace(Assistant(demo_llm(), default_registry()), None)
    assert bare.search_patients("Garcia") == [] and bare.patient_panel(bare.active_patient("t")).message == NO_PATIENT
