"""A tool installed by another distribution, through the ``docgemma.tools`` entry-point group, and nothing else:
this file is the whole change. It holds the tool (shaped like a ``tools/catalog/`` module: arguments, extractor,
executor, ``SPEC``) and installs it the way pip would, as a distribution's ``entry_points.txt`` on ``sys.path``.
No module of the package names it, yet the golden runner's registry runs it (oracle mode), the app's running
registry (``runtime.build_registry``) binds it, and the page shows it by its label, with its approval card's
form built from its own arguments, and the approved write lands through it."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.routing import Request
from docgemma.tools.spec import ToolContext, ToolSpec, client_binding

NAME = "request_lab_test"
LABEL = "Lab Test Request"
requested: list[dict[str, Any]] = []


class LabTestArgs(BaseModel):
    patient_id: str
    test_name: str
    #: Optional: the card's form shows it even when the proposal leaves it out.
    priority: Literal["routine", "urgent"] | None = None


def lab_test_args(request: Request) -> dict[str, Any]:
    """``test_name`` ("a renal panel lab test" → "renal panel") and the patient."""
    out: dict[str, Any] = {"patient_id": request.patient_id} if request.patient_id else {}
    named = re.search(r"\b(?:an?\s+)?([a-z ]+?)\s+lab test\b", request.query, re.IGNORECASE)
    if named:
        out["test_name"] = re.sub(r"^(?:order|request)\s+(?:an?\s+)?", "", named.group(1), flags=re.IGNORECASE)
    return out


def request_lab_test(record: object, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Kept in a list (the test checks the binding and the page, not a laboratory system)."""
    assert isinstance(args, LabTestArgs) and record is not None
    requested.append(args.model_dump())
    return success({"requested": args.test_name, "patient_id": args.patient_id})


SPEC = ToolSpec(
    NAME,
    LABEL,
    "Request a laboratory test for a patient. Use when a clinician orders a lab test.",
    LabTestArgs,
    "Order a renal panel lab test for patient abc-123.",
    writes=True,
    needs_patient=True,
    record=True,
    keywords=("lab test",),
    extract=lab_test_args,
    binding=client_binding("record", request_lab_test, lambda data: f"Requested: {data['requested']}"),
)


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A distribution on ``sys.path`` whose entry point names this module's SPEC (what ``pip install`` leaves)."""
    dist = tmp_path / "site" / "docgemma_lab_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: docgemma-lab-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[docgemma.tools]\n{NAME} = {__name__}:SPEC\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    requested.clear()
    yield


def test_the_installed_tool_is_in_the_registry_after_the_catalog(installed: None) -> None:
    from docgemma.tools.registry import CATALOG, installed_registry

    registry = installed_registry()
    assert registry.names[-1] == NAME and len(registry.names) == len(CATALOG) + 1


def test_it_answers_in_the_graph_in_oracle_mode(installed: None, tmp_path: Path) -> None:
    from docgemma.eval.golden import run_file

    case = {"single_turn": [{
        "user_input": "Order a renal panel lab test for patient abc-123", "expected_intent": "TOOL_NEEDED",
        "expected_tool": NAME, "expected_args": {"patient_id": "abc-123", "test_name": "renal panel"},
        "mock_tool_result": {"status": "success", "data": {"requested": "renal panel"}},
    }]}
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(case))
    out = io.StringIO()
    assert run_file(path, None, out=out, report=io.StringIO()) == 0
    record = json.loads(out.getvalue().splitlines()[0])
    assert record["tool"] == NAME and record["tools"] == [NAME] and all(record["checks"].values()), record
    assert record["decided_by_rule"] == {"intent_classify": True, "tool_select": True}  # routed by its keywords


def test_the_page_shows_it_by_label_with_its_form_and_the_write_lands(installed: None, tmp_path: Path) -> None:
    import gradio as gr

    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.config import Settings
    from docgemma.ehr.service import Ehr
    from docgemma.runtime import build_registry
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.ui.page import Handlers, layout
    from docgemma.workspace import Workspace

    settings = Settings(data_dir=tmp_path / "data", backend="fake")
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    registry = build_registry(settings, ehr, in_process=True)  # the app's running registry
    assert registry[NAME].executor is not None  # bound to the record, as its SPEC declares
    assistant = Assistant(demo_llm(registry), registry, settings=settings, patient_context=ehr.patient_context,
                          write_check=record_write_check(ehr))
    with gr.Blocks():
        page = layout()
    on = Handlers(Workspace(assistant, ehr), page, settings, "Demo rules · CPU", None, None)
    grace = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    merged: dict[Any, Any] = {}
    for update in on.respond({"text": f"Order a renal panel lab test for patient {grace}", "files": []}, [], "t1",
                             None):
        merged.update(update)
    assert LABEL in merged[page.approval_md] or LABEL in str(merged[page.chatbot])
    boxes = [merged[box] for box in page.field_boxes]
    shown = {b["label"]: b["value"] for b in boxes if b.get("visible")}
    assert shown == {"Test name": "renal panel", "Priority": ""}, shown  # its own arguments, the optional one too
    timeline = str(merged[page.timeline])
    assert LABEL in timeline and NAME not in timeline
    card = merged[page.card_id]
    done: dict[Any, Any] = {}
    for update in on.decide("approve", "", merged[page.chatbot], "t1", card):
        done.update(update)
    assert requested == [{"patient_id": grace, "test_name": "renal panel", "priority": None}]
    assert NAME not in str(done[page.chatbot])
