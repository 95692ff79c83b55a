"""Issue 43: every write path is the same path. For each way a write reaches the record (the Python API, the
agent's tools over MCP stdio and over HTTP, the page, the CLI) three different orders approved for one patient are
three resources holding exactly those arguments, and a replay of an approval reports its own write, never another
order's (under MCP the tool context was dropped, the key was patient + tool, and atorvastatin was reported "already
saved" under the lisinopril order's id). ``mcp --allow-writes`` writes only the app's signed approvals, with the
checks run again; ``--unattended-writes`` needs a long token and refuses severe findings."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.mcp_client import McpToolClient
from docgemma.tools.registry import ToolContext, ToolRegistry, default_registry
from tests.conftest import free_port, wait_for_port
from tests.integration.test_safe_writes import pid_of, prescriber

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
ORDERS = [
    {"medication_name": "lisinopril", "dosage": "10 mg", "frequency": "once daily"},
    {"medication_name": "atorvastatin", "dosage": "20 mg", "frequency": "once daily"},
    {"medication_name": "amlodipine", "dosage": "5 mg", "frequency": "once daily"},
]
WRITE_TOOLS = ("prescribe_medication", "add_allergy", "save_clinical_note")


def new_orders(ehr: Ehr, pid: str, before: set[str]) -> dict[str, dict[str, Any]]:
    """The patient's MedicationRequests written since ``before`` (ids), by drug."""
    found = [r for r in ehr.client.search("MedicationRequest", [("patient", pid)]) if r["id"] not in before]
    return {r["medicationCodeableConcept"]["text"].lower(): r for r in found}


def dose_of(order: dict[str, Any]) -> str:
    quantity = order["dosageInstruction"][0]["doseAndRate"][0]["doseQuantity"]
    return f"{quantity['value']:g} {quantity['unit']}"


def assert_three_orders(ehr: Ehr, pid: str, before: set[str]) -> dict[str, dict[str, Any]]:
    written = new_orders(ehr, pid, before)
    assert len(written) == 3, sorted(written)
    for order in ORDERS:
        [name] = [n for n in written if order["medication_name"] in n]
        assert dose_of(written[name]) == order["dosage"], (name, dose_of(written[name]))
    return written


def approve_three(registry: ToolRegistry, ehr: Ehr, pid: str) -> list[tuple[dict[str, Any], str]]:
    """Three orders proposed and approved through the Assistant (its own thread each, as three chats would):
    (card, the resource the confirmation names)."""
    done = []
    for i, order in enumerate(ORDERS):
        args = {"patient_id": pid, **order}
        assistant = Assistant(prescriber(args), registry, patient_context=ehr.patient_context,
                              write_check=record_write_check(ehr))
        card = assistant.run_turn(f"t{i}", f"Prescribe {order['medication_name']} {order['dosage']} "
                                           f"{order['frequency']} for patient {pid}")
        assert isinstance(card, dict) and card["kind"] == "approval", card
        result = assistant.resume(f"t{i}", {"action": "approve", "card_id": card["card_id"]})
        assert isinstance(result, TurnResult), result
        [confirmation] = result.writes
        # Never "Already saved earlier" under another order's id.
        assert "Already saved" not in confirmation and order["medication_name"] in confirmation, confirmation
        [resource] = re.findall(r"\[(MedicationRequest/[^\]]+)\]", confirmation)
        done.append((card, resource))
    return done


def replay_reports_its_own(registry: ToolRegistry, done: list[tuple[dict[str, Any], str]]) -> None:
    spec = registry["prescribe_medication"]
    for card, resource in done:
        again = spec.run(spec.args_model(**card["args"]), ToolContext(scope=card["action_id"]))
        assert again["status"] == "success", again
        assert again["data"]["resource"] == resource and not again["data"]["created"]


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


def env_for(data: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "DOCGEMMA_DATA_DIR": str(data), "PYTHONPATH": str(ROOT), "DOCGEMMA_BACKEND": "fake",
            **extra}


def test_python_api_three_orders_three_resources_and_replays_report_their_own(ehr: Ehr) -> None:
    registry = bind_tools(default_registry(), ToolClients(record=ehr))
    pid = pid_of(ehr, "Garcia")
    before = {r["id"] for r in ehr.client.search("MedicationRequest", [("patient", pid)])}
    done = approve_three(registry, ehr, pid)
    written = assert_three_orders(ehr, pid, before)
    assert sorted(r for _, r in done) == sorted(f"MedicationRequest/{o['id']}" for o in written.values())
    replay_reports_its_own(registry, done)


@pytest.fixture
def stdio_client(tmp_path: Path) -> Iterator[McpToolClient]:
    client = McpToolClient(env=env_for(tmp_path))
    try:
        yield client
    finally:
        client.close()


def test_mcp_stdio_three_orders_three_resources_and_replays_report_their_own(tmp_path: Path,
                                                                              stdio_client: McpToolClient) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")  # the record the tool server writes to
    local = bind_tools(default_registry(), ToolClients(record=ehr))
    registry = local.with_executors({name: stdio_client.executor(name) for name in WRITE_TOOLS})
    pid = pid_of(ehr, "Garcia")
    before = {r["id"] for r in ehr.client.search("MedicationRequest", [("patient", pid)])}
    done = approve_three(registry, ehr, pid)
    assert_three_orders(ehr, pid, before)
    replay_reports_its_own(registry, done)


def test_mcp_allow_writes_refuses_an_unapproved_or_forged_write_and_reruns_the_checks(
        tmp_path: Path, stdio_client: McpToolClient) -> None:
    """The probe: co-amoxiclav 6,250 mg hourly for a patient with penicillin anaphylaxis, called straight at
    ``mcp --allow-writes``, was written. Now: no approval → refused; an approval signed with another key →
    refused; a valid approval without an override reason → refused by the re-run checks."""
    from docgemma.tools.mcp_approval import META_KEY, signed_approval

    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    pid = pid_of(ehr, "Mensah")
    before = len(ehr.client.search("MedicationRequest", [("patient", pid)]))
    args = {"patient_id": pid, "medication_name": "co-amoxiclav", "dosage": "6250 mg", "frequency": "every hour"}
    bare = stdio_client.call("prescribe_medication", args)
    assert bare["status"] == "error" and "approval" in str(bare["details"]), bare
    spec = default_registry()["prescribe_medication"]
    dumped = spec.args_model(**args).model_dump()
    forged = {META_KEY: signed_approval("x" * 40, spec.name, dumped, ToolContext(scope="a1"))}
    assert stdio_client.call(spec.name, args, forged)["status"] == "error"
    assert stdio_client.approval_key
    approved = {META_KEY: signed_approval(stdio_client.approval_key, spec.name, dumped, ToolContext(scope="a1"))}
    checked = stdio_client.call(spec.name, args, approved)
    assert checked["status"] == "error" and "severe" in str(checked["details"]).lower(), checked
    other = {**args, "dosage": "500 mg"}  # a signature covers exactly the arguments it was made for
    assert stdio_client.call(spec.name, other, approved)["status"] == "error"
    assert len(ehr.client.search("MedicationRequest", [("patient", pid)])) == before


def serve_mcp(tmp_path: Path, *flags: str, **env: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "docgemma", "mcp", "--transport", "http", "--port", str(port),
                               *flags], env=env_for(tmp_path, **env), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    wait_for_port(port)
    return server, port


def test_mcp_http_three_orders_three_resources_and_replays_report_their_own(tmp_path: Path) -> None:
    key = "k" * 40
    Ehr.embedded(tmp_path / "record.sqlite")  # made (and seeded) before the server opens it
    server, port = serve_mcp(tmp_path, "--allow-writes", DOCGEMMA_MCP_APPROVAL_KEY=key)
    try:
        client = McpToolClient(url=f"http://127.0.0.1:{port}/mcp", approval_key=key)
        try:
            ehr = Ehr.embedded(tmp_path / "record.sqlite")
            local = bind_tools(default_registry(), ToolClients(record=ehr))
            registry = local.with_executors({name: client.executor(name) for name in WRITE_TOOLS})
            pid = pid_of(ehr, "Garcia")
            before = {r["id"] for r in ehr.client.search("MedicationRequest", [("patient", pid)])}
            done = approve_three(registry, ehr, pid)
            assert_three_orders(ehr, pid, before)
            replay_reports_its_own(registry, done)
        finally:
            client.close()
    finally:
        server.terminate()
        server.wait(10)


def test_allow_writes_without_a_key_and_unattended_writes_without_a_long_token_do_not_start(tmp_path: Path) -> None:
    for flags, env, said in [
        (["--allow-writes"], {}, "DOCGEMMA_MCP_APPROVAL_KEY"),
        (["--unattended-writes"], {"DOCGEMMA_MCP_TOKEN": "short"}, "32 or more"),
        (["--unattended-writes"], {}, "32 or more"),
    ]:
        done = subprocess.run([sys.executable, "-m", "docgemma", "mcp", "--transport", "http", "--port",
                               str(free_port()), *flags], env=env_for(tmp_path, **env), capture_output=True,
                              text=True, timeout=120)
        assert done.returncode != 0 and said in done.stderr, (flags, done.stderr[-500:])


def test_unattended_writes_are_checked_and_a_severe_finding_refuses(tmp_path: Path) -> None:
    token = "t" * 40
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    server, port = serve_mcp(tmp_path, "--unattended-writes", DOCGEMMA_MCP_TOKEN=token)
    try:
        client = McpToolClient(url=f"http://127.0.0.1:{port}/mcp", token=token)
        try:
            pid = pid_of(ehr, "Mensah")  # penicillin anaphylaxis
            before = len(ehr.client.search("MedicationRequest", [("patient", pid)]))
            severe = client.call("prescribe_medication", {"patient_id": pid, "medication_name": "co-amoxiclav",
                                                          "dosage": "6250 mg", "frequency": "every hour"})
            assert severe["status"] == "error" and "severe" in str(severe["details"]).lower(), severe
            assert len(ehr.client.search("MedicationRequest", [("patient", pid)])) == before
            fine = client.call("prescribe_medication", {"patient_id": pid, "medication_name": "loratadine",
                                                        "dosage": "10 mg", "frequency": "once daily"})
            assert fine["status"] == "success", fine
        finally:
            client.close()
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    assert b"UNATTENDED" in err  # the mode and each write are logged


def test_page_three_orders_three_resources_and_a_second_click_reports_nothing_new(tmp_path: Path) -> None:
    """The page (the workspace's handlers, the demo rules reading the order off the message)."""
    from tests.unit.test_page_session import App

    app = App.start(tmp_path)
    page, thread = app.page, "web-" + "a" * 32
    pid = pid_of(app.ehr, "Garcia")
    before = {r["id"] for r in app.ehr.client.search("MedicationRequest", [("patient", pid)])}
    history = app.on.restore(thread)[page.chatbot]
    for order in ORDERS:
        shown = app.last(app.on.respond({"text": f"Prescribe {order['medication_name']} {order['dosage']} "
                                                 f"{order['frequency']} for patient {pid}", "files": []},
                                        history, thread, None))
        card = shown[page.card_id]
        assert card, shown[page.chatbot][-1]
        done = app.last(app.on.decide("approve", shown[page.approval_args], shown[page.chatbot], thread, card))
        history = done[page.chatbot]
        said = history[-1]["content"]
        assert "Written to the record" in said and "Already saved" not in said, said
        assert order["medication_name"] in said
    assert_three_orders(app.ehr, pid, before)
    # A second click on the last card (a double click, a replayed request) writes nothing more.
    late = app.last(app.on.decide("approve", shown[page.approval_args], history, thread, card))
    assert late[page.decision_note] and len(new_orders(app.ehr, pid, before)) == 3
    app.store.close()


@pytest.mark.parametrize("transport", ["inprocess", "mcp"])
def test_cli_three_orders_three_resources(tmp_path: Path, transport: str) -> None:
    """``python -m docgemma chat … --approve approve`` on the demo rules, three times for one patient; with
    ``DOCGEMMA_TOOL_TRANSPORT=mcp`` (the probe's setting) the writes go through the stdio tool server."""
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    pid = pid_of(ehr, "Garcia")
    before = {r["id"] for r in ehr.client.search("MedicationRequest", [("patient", pid)])}
    for order in ORDERS:
        done = subprocess.run([sys.executable, "-m", "docgemma", "chat", f"Prescribe {order['medication_name']} "
                               f"{order['dosage']} {order['frequency']} for patient {pid}", "--approve", "approve"],
                              env=env_for(tmp_path, DOCGEMMA_TOOL_TRANSPORT=transport), capture_output=True,
                              text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-800:]
        assert "Written to the record: Saved" in done.stdout and order["medication_name"] in done.stdout, done.stdout
    assert_three_orders(ehr, pid, before)
