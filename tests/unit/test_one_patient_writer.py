"""One state field for the active patient, written by one node (issue 29): THREAD_UPDATE, INPUT_ASSEMBLY and
TOOL_EXECUTE propose a change; COMMIT_PATIENT alone writes ``active_patient``."""

from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path
from typing import Any

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.nodes.commit_patient import commit_patient
from docgemma.agent.state import PatientRef
from docgemma.llm.fake import FakeLLM
from docgemma.tools.outcome import success
from tests.conftest import Tools

AGENT = Path(__file__).resolve().parents[2] / "docgemma" / "agent"
KEY = "active_patient"
#: Calls whose keyword arguments are state keys (a state built or updated by keywords).
STATE_CALLS = {"AgentState", "dict", "update"}


def _writes(tree: ast.AST) -> list[int]:
    """Lines that put ``active_patient`` into a dict: a literal's key, a subscript assignment, a keyword."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            lines += [k.lineno for k in node.keys if isinstance(k, ast.Constant) and k.value == KEY]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if isinstance(node.slice, ast.Constant) and node.slice.value == KEY:
                lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in STATE_CALLS:
                lines += [k.value.lineno for k in node.keywords if k.arg == KEY]
    return lines


def _module(func: Any) -> Any:
    module = inspect.getmodule(func)
    assert module is not None
    return module


def _node_function(node: Any) -> Any:
    runnable = node.runnable
    func = getattr(runnable, "func", None) or getattr(runnable, "afunc", None)
    while isinstance(func, functools.partial):
        func = func.func
    return func


def test_only_commit_patient_writes_the_active_patient_in_the_agent() -> None:
    writers = {str(p.relative_to(AGENT)): lines for p in sorted(AGENT.rglob("*.py"))
               if (lines := _writes(ast.parse(p.read_text(encoding="utf-8"))))}
    assert list(writers) == ["nodes/commit_patient.py"], writers


def test_the_compiled_graph_has_one_writer_and_every_proposer_reaches_it(tools: Tools) -> None:
    graph = Assistant(FakeLLM(), tools.registry()).graph
    nodes = {name: _node_function(node) for name, node in graph.builder.nodes.items()}
    writers = [name for name, func in nodes.items() if _writes(ast.parse(inspect.getsource(_module(func))))]
    assert writers == ["commit_patient"] and nodes["commit_patient"] is commit_patient
    into_commit = {edge.source for edge in graph.get_graph().edges if edge.target == "commit_patient"}
    assert into_commit == {"thread_update", "input_assembly", "tool_execute"}


def _updates(assistant: Assistant, thread: str, message: str) -> list[dict[str, Any]]:
    config = {"configurable": {"thread_id": thread}}
    stream = assistant.graph.stream({"user_query": message, "thread_update": None}, config, stream_mode="updates")
    return [chunk for chunk in stream if isinstance(chunk, dict)]


def test_a_tool_s_patient_is_committed_by_the_one_node(fake: FakeLLM, tools: Tools) -> None:
    """At run time too: a search that finds one patient proposes it, and only COMMIT_PATIENT's update carries it;
    the rest of the turn (and the next) sees it as the active patient."""
    assistant = Assistant(fake, tools.registry())
    match = {"id": "aw-001", "name": "Ann Wu", "birth_date": "1960-01-01", "gender": "female"}
    tools.queue("search_patient", success({"query": "Ann Wu", "matches": [match]}))
    updates = _updates(assistant, "t", "Search for patient Ann Wu")
    writers = [node for chunk in updates for node, update in chunk.items() if isinstance(update, dict) and KEY in update]
    assert writers == ["commit_patient"]
    assert assistant.state("t").get("active_patient") == PatientRef(id="aw-001", name="Ann Wu")
    assert assistant.state("t").get("patient_change") is None
    result = assistant.run_turn("t", "What is the mechanism of action of metformin?")
    assert isinstance(result, TurnResult) and result.active_patient == PatientRef(id="aw-001", name="Ann Wu")


def test_a_checkpoint_from_before_the_commit_node_reads_as_before(fake: FakeLLM, tools: Tools) -> None:
    """A conversation stored before COMMIT_PATIENT existed carries the old fields and no ``patient_change``:
    its active patient is read as it was, and the next turn keeps it."""
    assistant = Assistant(fake, tools.registry())
    ann = PatientRef(id="aw-001", name="Ann Wu")
    config = {"configurable": {"thread_id": "old"}}
    old: dict[str, Any] = {KEY: ann, "selected_patient": None, "patient_at_turn_start": ann, "conversation": [], "transcript": []}
    assistant.graph.update_state(config, old, as_node="synthesize")
    assert assistant.state("old").get("active_patient") == ann
    result = assistant.run_turn("old", "What is the mechanism of action of metformin?")
    assert isinstance(result, TurnResult) and result.active_patient == ann


def test_a_proposal_left_by_a_stopped_run_is_cleared_by_the_next_panel_update_not_committed() -> None:
    """Found by review: a run stopped between TOOL_EXECUTE and COMMIT_PATIENT left its proposal; the next panel
    update that carries only a note would have committed it."""
    from docgemma.agent.nodes.thread_update import thread_update

    stale = {"patient": {"id": "p2", "name": "Old Proposal"}, "by": "tool"}
    out = thread_update({"thread_update": {"note": "Image sent to the chat."}, "patient_change": stale,  # type: ignore[typeddict-item]
                         "active_patient": {"id": "p1", "name": "Grace Mensah"}, "transcript": []})
    assert out["patient_change"] is None and KEY not in out
