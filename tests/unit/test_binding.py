"""Tools are bound by their own declaration (``ToolSpec.binding``): ``bind_tools`` builds each executor from the
client the tool names, leaves a tool whose client was not built unbound (it answers ``not_configured``), gives a
write check the clients it takes, and refuses a declaration naming no client; an installed distribution's entry
point that names no tool stops the app instead of being dropped."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.outcome import success
from docgemma.tools.plugins import PluginError, installed_tools
from docgemma.tools.registry import default_registry
from docgemma.tools.spec import ToolContext, ToolRegistry, client_binding


def test_only_the_tools_whose_client_was_built_are_bound(tmp_path: Path) -> None:
    registry = bind_tools(default_registry(), ToolClients(record=Ehr.embedded(tmp_path / "record.sqlite")))
    bound = {spec.name for spec in registry if spec.executor is not None}
    needs_nothing = {s.name for s in default_registry() if s.binding is not None and s.binding.needs is None}
    assert needs_nothing == {"analyze_medical_image"}  # the turn's model and image come in its context
    assert bound == {spec.name for spec in default_registry() if spec.record} | needs_nothing
    unbound = registry["check_drug_safety"]
    assert unbound.run(unbound.args_model(drug_name="warfarin"), ToolContext())["error_type"] == "not_configured"


def test_a_write_check_is_given_the_clients_it_takes() -> None:
    resolver = object()
    registry = bind_tools(default_registry(), ToolClients(resolver=resolver))  # type: ignore[arg-type]
    check = registry["add_allergy"].pre_write_check
    assert isinstance(check, partial) and check.keywords == {"resolver": resolver}
    assert registry["save_clinical_note"].pre_write_check is None


def test_a_declared_need_that_no_client_answers_is_an_error() -> None:
    def run(client: Any, args: BaseModel, context: ToolContext) -> Any:
        return success({})

    spec = replace(default_registry()["check_drug_safety"], binding=client_binding("fax_machine", run, str))
    with pytest.raises(KeyError, match="fax_machine"):
        bind_tools(ToolRegistry((spec,)), ToolClients())


def test_an_entry_point_that_names_no_tool_stops_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "broken_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[docgemma.tools]\nnot_a_tool = docgemma.tools.registry:CATALOG\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match="not_a_tool"):
        installed_tools()
