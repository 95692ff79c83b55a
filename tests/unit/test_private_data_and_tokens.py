"""Issue 43: the data folder is created 0700 and the record and conversation databases 0600 (they were 0755 and
0644); wrong bearer tokens are rate-limited per client address like failed sign-ins (the FHIR and MCP servers
answered every guess at once)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from docgemma.attempt_limit import PER_USER
from docgemma.config import Settings
from docgemma.ehr.api import FhirApi
from docgemma.ehr.server import make_app
from docgemma.ehr.service import Ehr
from docgemma.ehr.store import FhirStore
from docgemma.ops.conversation_store import open_store
from docgemma.tools.mcp_server import http_app
from docgemma.tools.registry import default_registry

TOKEN = "t" * 40


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_folder_is_0700_and_the_databases_0600(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"
    store = open_store(Settings(data_dir=data, backend="fake"))
    Ehr.embedded(data / "record.sqlite")
    try:
        assert mode(data) == 0o700 and mode(data.parent) == 0o700
        assert mode(data / "record.sqlite") == 0o600
        assert mode(Settings(data_dir=data).checkpoint_path) == 0o600
        for extra in data.glob("*.sqlite-*"):  # SQLite's -wal and -shm take the database's mode
            assert mode(extra) == 0o600, extra
    finally:
        store.close()


def test_wrong_tokens_to_the_record_are_rate_limited_per_address(tmp_path: Path) -> None:
    app = make_app(FhirApi(FhirStore(tmp_path / "r.sqlite"), "http://127.0.0.1/fhir"), token=TOKEN)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for i in range(PER_USER):
            assert client.get("/fhir/Patient", headers={"Authorization": f"Bearer guess-{i}"}).status_code == 401
        limited = client.get("/fhir/Patient", headers={"Authorization": f"Bearer {TOKEN}"})
        assert limited.status_code == 429  # even the right token, until the window has passed: no guessing on
        assert client.get("/fhir/metadata").status_code == 200  # the public capability statement stays open


@pytest.mark.parametrize("right_first", [True, False])
def test_wrong_tokens_to_the_mcp_server_are_rate_limited_per_address(right_first: bool) -> None:
    app = http_app(default_registry(), token=TOKEN)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        if right_first:
            assert client.post("/mcp", json=hello, headers={**accept, "Authorization": f"Bearer {TOKEN}"}).status_code == 200
        for i in range(PER_USER):
            assert client.post("/mcp", json=hello, headers={**accept, "Authorization": f"Bearer g{i}"}).status_code == 401
        refused = client.post("/mcp", json=hello, headers={**accept, "Authorization": f"Bearer {TOKEN}"})
        assert refused.status_code == 429
