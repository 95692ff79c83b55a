"""The registry over MCP: the official client lists and calls every tool over stdio and streamable HTTP,
and the results equal the in-process ones."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.config import Settings
from docgemma.llm.fake import FakeLLM
from docgemma.runtime import build_registry
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.mcp_client import McpToolClient
from docgemma.tools.registry import ToolContext, default_registry
from tests.conftest import assess, free_port, intent, select, wait_for_port
from tests.fixture_api import serve

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
RECORD_TOOLS = {"search_patient", "get_patient_chart", "query_patient_data", "explore_connections",
                "get_patient_timeline", "prescribe_medication", "add_allergy", "save_clinical_note",
                "remove_allergy_label"}
CALLS: dict[str, dict[str, Any]] = {
    "check_drug_safety": {"drug_name": "Coumadin"},
    "check_drug_interactions": {"drug_names": ["warfarin", "aspirin"]},
    "search_medical_literature": {"query": "APOB variants"},
    "find_clinical_trials": {"condition": "melanoma", "status": "recruiting"},
    "search_patient": {"name": "Maria Garcia"},
    "get_patient_chart": {"patient_id": "abc-123"},
    "analyze_medical_image": {"query": "any mass?"},
}


@pytest.fixture(scope="module")
def api_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    data_dir = str(tmp_path_factory.mktemp("record"))
    with serve() as base:
        yield {
            **os.environ,
            "DOCGEMMA_DATA_DIR": data_dir,
            "DOCGEMMA_OPENFDA_URL": f"{base}/openfda",
            "DOCGEMMA_EUTILS_URL": f"{base}/eutils",
            "DOCGEMMA_EUROPEPMC_URL": f"{base}/europepmc",
            "DOCGEMMA_CTGOV_URL": f"{base}/ctgov",
        }


def in_process(env: dict[str, str]) -> dict[str, Any]:
    registry = build_registry(Settings.from_env(env), in_process=True)
    return {name: registry[name].run(registry[name].args_model(**args), ToolContext()) for name, args in CALLS.items()}


def check_client(client: McpToolClient, env: dict[str, str], writes: bool) -> None:
    tools = {t.name: t for t in client.list_tools()}
    registry = default_registry()
    expected = {s.name for s in registry if writes or not s.writes}
    assert set(tools) == expected
    for name, tool in tools.items():
        schema = getattr(tool, "input_schema", None) or tool.inputSchema
        model = registry[name].args_model.model_json_schema()
        assert set(schema["properties"]) == set(model["properties"])
        assert set(schema.get("required", [])) == set(model.get("required", []))
        assert tool.description == registry[name].full_desc
        # Structured output with a schema; record tools are a closed world, knowledge sources an open one.
        assert {"status", "data", "error_type"} <= set(tool.output_schema["properties"])
        assert tool.annotations.open_world_hint is (name not in RECORD_TOOLS)
        # Only a change of an entry already on record is more than additive (a label removed).
        assert tool.annotations.destructive_hint is registry[name].updates
    local = in_process(env)
    for name, args in CALLS.items():
        assert client.call(name, args) == local[name], name
    assert local["check_drug_safety"]["status"] == "success"
    assert local["search_patient"]["data"]["matches"][0]["name"] == "Maria Garcia"  # the embedded demo record
    assert local["get_patient_chart"]["error_type"] == "unknown_patient"  # no such patient on the record


def test_stdio(api_env: dict[str, str]) -> None:
    client = McpToolClient(env=api_env, allow_writes=False)
    try:
        check_client(client, api_env, writes=False)
        tools = {t.name: t for t in client.list_tools()}
        limit = getattr(tools["check_drug_safety"], "input_schema", None) or tools["check_drug_safety"].inputSchema
        assert limit["properties"]["drug_name"]["maxLength"] == 60
    finally:
        client.close()


def test_streamable_http_with_writes(api_env: dict[str, str]) -> None:
    port = free_port()
    env = {**api_env, "PYTHONPATH": str(ROOT), "DOCGEMMA_MCP_APPROVAL_KEY": "k" * 40}  # --allow-writes needs it
    server = subprocess.Popen(
        [sys.executable, "-m", "docgemma", "mcp", "--transport", "http", "--port", str(port), "--allow-writes"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        client = McpToolClient(url=f"http://127.0.0.1:{port}/mcp")
        try:
            check_client(client, api_env, writes=True)
        finally:
            client.close()
    finally:
        server.terminate()
        server.wait(10)


def test_agent_turn_through_mcp_matches_in_process(api_env: dict[str, str]) -> None:
    client = McpToolClient(env=api_env)
    try:
        bound = bind_tools(default_registry(), knowledge_clients(Settings()))
        registry = bound.with_executors({"check_drug_safety": client.executor("check_drug_safety")})
        fake = FakeLLM([intent(), select("check_drug_safety"), {"drug_name": "Tikosyn"}, assess(), "Answer."])
        result = Assistant(fake, registry).run_turn("t", "Check FDA warnings for Tikosyn")
        assert isinstance(result, TurnResult) and result.tools[0]["status"] == "success"
        assert "minimum of 3 days" in fake.calls[-1].prompt
    finally:
        client.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "mcp.clinic.example"])
def test_http_refuses_a_non_loopback_host_without_a_token(host: str) -> None:
    """The tool server started on --host 0.0.0.0 with no token, and a client with no credentials read a chart."""
    from docgemma.config import ConfigError
    from docgemma.tools.mcp_server import check_exposure, serve

    with pytest.raises(ConfigError, match="DOCGEMMA_MCP_TOKEN"):
        serve(default_registry(), "http", host=host, port=1)
    check_exposure(host, "a-long-random-token-of-32-characters")  # with a token it may start
    with pytest.raises(ConfigError, match="32 or more"):  # issue 43: a one-character token was accepted
        check_exposure(host, "x")
    check_exposure("127.0.0.1", None)  # loopback needs none
    check_exposure("127.0.0.1", "x")  # nor a long token there


def test_cli_refuses_to_expose_the_tools_without_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from docgemma.__main__ import main

    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DOCGEMMA_MCP_TOKEN", raising=False)
    assert main(["mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "1"]) == 2
    assert "DOCGEMMA_MCP_TOKEN" in capsys.readouterr().err
    assert Settings.from_env({"DOCGEMMA_MCP_TOKEN": "t0k"}).mcp_token == "t0k"


def test_http_with_a_token_refuses_missing_and_wrong_tokens(tmp_path: Path) -> None:
    """Each request to /mcp needs ``Authorization: Bearer <token>``: none, a wrong one, another scheme get 401;
    the right one lists the tools (and an MCP client that sends it works end to end)."""
    from starlette.testclient import TestClient

    from docgemma.tools.mcp_server import http_app

    app = http_app(default_registry(), token="s3cret-token")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret-token"},
                     {"Authorization": "Bearer "}):
            refused = client.post("/mcp", json=hello, headers={**accept, **auth})
            assert refused.status_code == 401, auth
            assert "tools" not in refused.text
        ok = client.post("/mcp", json=hello, headers={**accept, "Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200 and "docgemma-connect" in ok.text


def test_an_mcp_client_with_the_token_reads_through_http(api_env: dict[str, str]) -> None:
    port = free_port()
    env = {**api_env, "PYTHONPATH": str(ROOT), "DOCGEMMA_MCP_TOKEN": "s3cret-token"}
    server = subprocess.Popen([sys.executable, "-m", "docgemma", "mcp", "--transport", "http", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        with pytest.raises(RuntimeError, match="did not start"):
            McpToolClient(url=f"http://127.0.0.1:{port}/mcp")  # no token: the session is refused
        client = McpToolClient(url=f"http://127.0.0.1:{port}/mcp", token="s3cret-token")
        try:
            assert "search_patient" in {t.name for t in client.list_tools()}
        finally:
            client.close()
    finally:
        server.terminate()
        server.wait(10)
