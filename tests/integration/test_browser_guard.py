"""Issue 43: servers refuse what a browser could forge. The web app, ``ehr serve`` and the MCP tool server answer
only the host names they serve (421 otherwise: a DNS-rebinding page reads nothing), refuse a write from a foreign
``Origin`` (403) and a write that is not JSON (415); the page's own posts from its own origin still work."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from docgemma.browser_guard import LOOPBACK, host_name, served_names
from docgemma.ehr.api import FhirApi
from docgemma.ehr.server import make_app
from docgemma.ehr.store import FhirStore
from docgemma.tools.mcp_server import http_app
from docgemma.tools.registry import default_registry

ATTACKER = "attacker.example"
ALLERGY = {"resourceType": "AllergyIntolerance", "patient": {"reference": "Patient/p1"},
           "code": {"text": "penicillin"}}


def test_host_names_and_served_names() -> None:
    assert host_name("127.0.0.1:7860") == "127.0.0.1" and host_name("[::1]:80") == "::1"
    assert host_name("LocalHost.") == "localhost" and host_name("::1") == "::1"
    assert LOOPBACK.serves("localhost:7860") and not LOOPBACK.serves(f"{ATTACKER}:7860")
    space = served_names("0.0.0.0", ["user-docgemma.hf.space"])
    assert space.serves("user-docgemma.hf.space") and not space.serves(ATTACKER) and not space.any_host
    assert served_names("0.0.0.0").any_host  # bound everywhere, no names: said in the log, not checked
    assert served_names("10.0.0.5").serves("10.0.0.5:8090") and not served_names("10.0.0.5").serves(ATTACKER)


@pytest.fixture
def fhir(tmp_path: Path) -> Iterator[TestClient]:
    store = FhirStore(tmp_path / "r.sqlite")
    store.upsert([{"resourceType": "Patient", "id": "p1", "name": [{"family": "Mensah", "given": ["Grace"]}]}])
    with TestClient(make_app(FhirApi(store, "http://127.0.0.1:8090/fhir")), base_url="http://127.0.0.1:8090") as c:
        yield c


def test_ehr_serve_refuses_a_foreign_host_origin_and_a_simple_request(fhir: TestClient) -> None:
    """The probe: POST /fhir/AllergyIntolerance, Content-Type text/plain, Origin attacker → 201 Created."""
    rebound = fhir.get("/fhir/Patient", headers={"Host": f"{ATTACKER}:8090"})
    assert rebound.status_code == 421 and "Mensah" not in rebound.text
    simple = fhir.post("/fhir/AllergyIntolerance", content=json.dumps(ALLERGY),
                       headers={"Content-Type": "text/plain", "Origin": f"http://{ATTACKER}"})
    assert simple.status_code == 403
    plain = fhir.post("/fhir/AllergyIntolerance", content=json.dumps(ALLERGY), headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415
    form = fhir.post("/fhir/AllergyIntolerance", data={"x": "1"})
    assert form.status_code == 415
    assert fhir.get("/fhir/AllergyIntolerance").json().get("total", 0) == 0  # nothing was written
    ok = fhir.post("/fhir/AllergyIntolerance", json=ALLERGY, headers={"Content-Type": "application/fhir+json"})
    assert ok.status_code == 201
    assert fhir.get("/fhir/Patient", headers={"Host": "localhost:8090"}).status_code == 200


def test_the_mcp_server_refuses_a_foreign_host_origin_and_a_non_json_post() -> None:
    app = http_app(default_registry())
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.post("/mcp", json=hello, headers={**accept, "Host": ATTACKER}).status_code == 421
        assert client.post("/mcp", json=hello, headers={**accept, "Origin": f"http://{ATTACKER}"}).status_code == 403
        assert client.post("/mcp", content=json.dumps(hello),
                           headers={**accept, "Content-Type": "text/plain"}).status_code == 415
        assert client.post("/mcp", json=hello, headers=accept).status_code == 200


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page as ``serve`` serves it, over the demo record, on a loopback port."""
    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.config import Settings
    from docgemma.ehr.service import Ehr
    from docgemma.ops.metrics import Metrics
    from docgemma.runtime import build_registry
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.ui.page import build_demo
    from docgemma.ui.server import build_app
    from docgemma.workspace import Workspace
    from tests.conftest import serve_in_thread

    data = tmp_path_factory.mktemp("data")
    settings = Settings(data_dir=data, backend="fake")
    ehr = Ehr.embedded(data / "record.sqlite")
    assistant = Assistant(demo_llm(), build_registry(settings, ehr, in_process=True), settings=settings,
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr))
    demo = build_demo(Workspace(assistant, ehr), "Demo rules · CPU")
    url, stop = serve_in_thread(build_app(demo, None, Metrics()))  # type: ignore[arg-type]
    try:
        yield url
    finally:
        stop()


def respond(url: str, text: str, headers: dict[str, str]) -> tuple[int, str]:
    """/respond as the page's own script calls it (queue/join, then the event stream): (join status, events)."""
    config = httpx.get(f"{url}/config").json()
    fn = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "respond")
    session = uuid.uuid4().hex
    joined = httpx.post(f"{url}/gradio_api/queue/join", headers=headers, json={
        "data": [{"text": text, "files": []}, [], None, None], "fn_index": fn, "session_hash": session,
        "event_data": None, "trigger_id": None})
    if joined.status_code != 200:
        return joined.status_code, joined.text
    seen: list[str] = []
    with httpx.stream("GET", f"{url}/gradio_api/queue/data", params={"session_hash": session}, timeout=60,
                      headers={k: v for k, v in headers.items() if k == "Host"}) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                seen.append(line)
                if json.loads(line[5:]).get("msg") == "process_completed":
                    break
    return joined.status_code, "\n".join(seen)


def test_a_dns_rebinding_page_reads_no_chart_from_the_app(app_url: str) -> None:
    """The probe: a page whose name was rebound to 127.0.0.1 posted to /respond and read "ALLERGY: Allergy to
    penicillin…". With its own Host (and its own, same-looking Origin) it now gets 421 and nothing else."""
    port = app_url.rsplit(":", 1)[1]
    rebound = {"Host": f"{ATTACKER}:{port}", "Origin": f"http://{ATTACKER}:{port}"}
    status, text = respond(app_url, "Show the chart of Grace Mensah", rebound)
    assert status == 421 and "llergy" not in text
    assert httpx.get(f"{app_url}/config", headers={"Host": ATTACKER}).status_code == 421
    assert httpx.get(f"{app_url}/", headers={"Host": ATTACKER}).status_code == 421


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_the_pages_own_posts_from_its_own_origin_still_work(app_url: str, name: str) -> None:
    port = app_url.rsplit(":", 1)[1]
    own = {"Host": f"{name}:{port}", "Origin": f"http://{name}:{port}"}
    status, text = respond(app_url, "Show the chart of Grace Mensah", own)
    assert status == 200 and "process_completed" in text
    upload = httpx.post(f"{app_url}/gradio_api/upload", headers=own, files={"files": ("a.txt", b"hello")})
    assert upload.status_code == 200, upload.text
    assert httpx.get(f"{app_url}/", headers=own).status_code == 200


def test_the_app_refuses_a_cross_origin_or_non_json_write(app_url: str) -> None:
    port = app_url.rsplit(":", 1)[1]
    foreign = httpx.post(f"{app_url}/gradio_api/queue/join", json={}, headers={"Origin": f"http://{ATTACKER}"})
    assert foreign.status_code == 403
    other_port = httpx.post(f"{app_url}/gradio_api/queue/join", json={},
                            headers={"Origin": f"http://127.0.0.1:{int(port) + 1}"})
    assert other_port.status_code == 403  # another local server's page is another origin
    plain = httpx.post(f"{app_url}/gradio_api/queue/join", content=b"{}", headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415
    upload = httpx.post(f"{app_url}/gradio_api/upload", files={"files": ("a.txt", b"x")},
                        headers={"Origin": f"http://{ATTACKER}"})
    assert upload.status_code == 403




def test_a_deployments_names_come_from_allowed_hosts_and_the_spaces_host() -> None:
    from docgemma.browser_guard import configured_names
    from docgemma.config import Settings

    settings = Settings.from_env({"DOCGEMMA_ALLOWED_HOSTS": "clinic.example, Docs.Example."})
    names = configured_names(settings.allowed_hosts)
    assert names == ["clinic.example", "docs.example"]
    served = served_names("0.0.0.0", names)
    assert served.serves("clinic.example:443") and not served.serves(ATTACKER)
    assert Settings.from_env({}).allowed_hosts is None


def test_a_spaces_host_is_its_pages_origin_and_restricts_no_host() -> None:
    """A Space is a public server behind Hugging Face's proxy, whose health checks may name it by an internal
    address: its host name is the pages' origin (their writes pass), but no ``Host`` is refused for it (a public
    server is no DNS-rebinding target); a foreign origin's write is still refused."""
    from docgemma.browser_guard import _same_origin, configured_names
    from docgemma.config import Settings

    settings = Settings.from_env({"SPACE_HOST": "user-docgemma.hf.space"})
    served = served_names("0.0.0.0", configured_names(settings.allowed_hosts),
                          public=configured_names(settings.space_host))
    assert served.serves("10.0.3.7:7860") and served.serves("user-docgemma.hf.space")
    assert _same_origin("https://user-docgemma.hf.space", "10.0.3.7:7860", served)
    assert not _same_origin(f"http://{ATTACKER}", "user-docgemma.hf.space", served)
