"""The app as a server (docgemma/ui/server.py): the Gradio page on FastAPI with /healthz, /readyz and
/metrics beside it, over real loopback HTTP; the Gradio API names unchanged."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import respx

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.client import FhirClient
from docgemma.ehr.service import Ehr
from docgemma.ops.conversation_store import open_store
from docgemma.ops.health import NotReady, fhir_check, model_check
from docgemma.ops.metrics import Metrics
from docgemma.runtime import build_registry
from docgemma.serve import readiness
from docgemma.tools.ehr_tools import record_write_check
from docgemma.ui.page import build_demo
from docgemma.ui.server import build_app
from docgemma.workspace import Workspace
from tests.conftest import free_port, serve_in_thread

API_NAMES = {"/respond", "/approve", "/edit", "/reject", "/override", "/search_patients", "/select_patient"}


@dataclass
class Served:
    url: str
    ehr: Ehr
    ready: object


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:

    settings = Settings(data_dir=tmp_path, backend="fake")
    store = open_store(settings)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    metrics = Metrics()
    llm = metrics.timed(demo_llm())
    assistant = Assistant(llm, build_registry(settings, ehr, in_process=True), store.checkpointer, settings,
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr), claims=store.claims)
    demo = build_demo(Workspace(assistant, ehr, metrics), "Demo rules · CPU")
    ready = readiness(settings, store, ehr)
    url, stop = serve_in_thread(build_app(demo, ready, metrics))
    yield Served(url, ehr, ready)
    stop()
    store.close()


def test_probes_metrics_and_the_gradio_api_on_one_server(served: Served) -> None:
    from gradio_client import Client

    assert httpx.get(f"{served.url}/healthz").json() == {"status": "alive"}
    ready = httpx.get(f"{served.url}/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "failed": [],
                            "checks": {"model": "ok", "checkpoints": "ok", "fhir": "ok"}}
    client = Client(served.url + "/", verbose=False)
    named = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert named >= API_NAMES
    out = client.predict({"text": "Find patient Amina Okafor and check her chart", "files": []}, [], None,
                         api_name="/respond")
    out = client.predict({"text": "Prescribe metformin 500 mg twice daily for Amina Okafor", "files": []}, out[0],
                         None, api_name="/respond")
    card = out[10]  # the card's reference, which a decision names (the card's form parts come after the note)
    out = client.predict("{}", out[0], card, api_name="/approve")
    assert "Written to the record" in str(out[0])
    again = client.predict("{}", out[0], card, api_name="/approve")
    assert "no pending action" in str(again[9]) or "already handled" in str(again[9])

    text = httpx.get(f"{served.url}/metrics").text
    # The paused turn's calls are counted when it ends (on the replica that resumes it): two patient searches.
    assert 'docgemma_tool_calls_total{status="success",tool="search_patient"} 2.0' in text
    assert 'docgemma_tool_calls_total{status="success",tool="prescribe_medication"} 1.0' in text
    assert 'docgemma_turns_total{kind="turn",outcome="approval_requested"} 1.0' in text
    assert 'docgemma_approvals_total{action="approve",outcome="applied"} 1.0' in text
    assert "docgemma_turns_in_flight 0.0" in text and "docgemma_queue_waiting 0.0" in text
    assert 'docgemma_turn_seconds_count{kind="turn"} 2.0' in text
    # No patient data in the metrics: not the name, not the id, not the drug, not the conversation.
    pid = served.ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    for secret in ("Amina", "Okafor", pid, "metformin", "web-"):
        assert secret not in text


def test_readyz_says_which_part_failed(served: Served, tmp_path: Path) -> None:
    dead = Ehr(FhirClient(f"http://127.0.0.1:{free_port()}/fhir"))
    broken = open_store(Settings(data_dir=tmp_path / "gone"))
    broken.close()  # the database connection is gone
    served.ready.checks["fhir"] = fhir_check(dead)  # type: ignore[attr-defined]
    served.ready.checks["checkpoints"] = readiness(Settings(), broken, None).checks["checkpoints"]  # type: ignore[attr-defined]
    answer = httpx.get(f"{served.url}/readyz")
    assert answer.status_code == 503
    body = answer.json()
    assert body["failed"] == ["checkpoints", "fhir"] and body["checks"]["model"] == "ok"
    assert "FHIR server unreachable" in body["checks"]["fhir"]
    assert "does not answer" in body["checks"]["checkpoints"]
    assert httpx.get(f"{served.url}/healthz").status_code == 200  # alive, only not ready


@respx.mock
def test_model_readiness_on_vllm_needs_the_served_model() -> None:
    settings = Settings(backend="openai", model="google/medgemma-1.5-4b-it", openai_base_url="http://vllm:8000/v1")
    check = model_check(settings, lambda: True)
    route = respx.get("http://vllm:8000/v1/models")
    route.mock(return_value=httpx.Response(200, json={"data": [{"id": "google/medgemma-1.5-4b-it"}]}))
    check()
    route.mock(return_value=httpx.Response(200, json={"data": [{"id": "other"}]}))
    with pytest.raises(NotReady, match=r"does not serve 'google/medgemma-1\.5-4b-it'"):
        check()
    route.mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(NotReady, match="model server unreachable"):
        check()
    with pytest.raises(NotReady, match="not loaded"):
        model_check(Settings(backend="fake"), lambda: False)()


@pytest.mark.slow
def test_app_py_serves_the_probes_and_stops_promptly_with_a_session_open(tmp_path: Path) -> None:
    """The entry point itself: ``python app.py`` answers the probes, and SIGTERM stops it within the 10 s grace
    even while a browser session holds Gradio's event stream open (it used to wait for the client to leave)."""
    import os
    import subprocess
    import sys

    from gradio_client import Client

    port = free_port()
    dead = f"http://127.0.0.1:{free_port()}"
    env = {**os.environ, "DOCGEMMA_BACKEND": "fake", "DOCGEMMA_DATA_DIR": str(tmp_path), "GRADIO_SERVER_PORT": str(port),
           "DOCGEMMA_OPENFDA_URL": dead, "DOCGEMMA_EUTILS_URL": dead}
    app = subprocess.Popen([sys.executable, "app.py"], cwd=Path(__file__).parents[2], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        assert httpx.get(f"{url}/readyz").json()["checks"] == {"model": "ok", "checkpoints": "ok", "fhir": "ok"}
        assert httpx.get(f"{url}/metrics").headers["content-type"].startswith("text/plain")
        client = Client(url + "/", verbose=False)
        client.predict({"text": "What is hypertension?", "files": []}, [], None, api_name="/respond")
        app.terminate()
        start = time.monotonic()
        app.wait(30)
        assert time.monotonic() - start < 20
        client.close()
    finally:
        app.kill()
        app.wait(10)
