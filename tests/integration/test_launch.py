"""Starting and stopping the web app as a user, an orchestrator and a Space do, each in a subprocess:

* ``python app.py`` prints its URL and "ready" once the page answers, and a SIGTERM with an event stream open
  (what an open browser holds: Gradio's session heartbeat) ends it within 5 s, exit status 0, no traceback.
* On ZeroGPU (``SPACES_ZERO_GPU`` and a device API, with a stand-in ``spaces`` package: the real one needs a CUDA
  build of torch, see ``tests/fixtures/spaces_stub/SOURCE.md``) the app starts through ``gradio.Blocks.launch``,
  so ``spaces`` reports its wrapped model calls to the device API, the probes still answer, and a turn's model
  calls ask ZeroGPU for a GPU with a duration from their token budget.
* With ``spaces`` importable and no ZeroGPU (every other Space), nothing changes: uvicorn serves, the model calls
  are not wrapped and the prefix cache stays on.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from docgemma.llm.platform import zerogpu_seconds
from tests.app_process import ROOT, App, app_env
from tests.conftest import free_port
from tests.tiny_gemma import build_tiny_gemma3

pytestmark = pytest.mark.slow
SPACES_STUB = ROOT / "tests" / "fixtures" / "spaces_stub"


def open_heartbeat(url: str) -> Any:
    """An event stream like the one an open browser page keeps (Gradio's session heartbeat), first event read."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("GET", "/gradio_api/heartbeat/stream-test-session")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("content-type", "").startswith("text/event-stream")
    assert response.readline()  # the stream is open and sending
    return response


def test_app_says_ready_once_the_page_answers_and_stops_within_5_s_of_sigterm(tmp_path: Path) -> None:
    port = free_port()
    app = App(app_env(tmp_path, port))
    try:
        url = app.ready_url()
        assert url == f"http://127.0.0.1:{port}/"
        assert httpx.get(url, timeout=10).status_code == 200  # said once it answers, so it answers now
        stream = open_heartbeat(url)
        code, seconds = app.stop(timeout_s=10)
    finally:
        if app.process.poll() is None:
            app.process.kill()
    assert code == 0 and seconds < 5, (code, seconds, "\n".join(app.err[-40:]))
    assert "Traceback" not in "\n".join(app.err), "\n".join(app.err)
    assert stream.read() is not None  # the stream was ended by the server, not left hanging


@dataclass
class DeviceApi:
    """ZeroGPU's device API as ``spaces`` calls it: every request recorded, 200 to all."""

    url: str = ""
    requests: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)


@pytest.fixture
def device_api() -> Iterator[DeviceApi]:
    api = DeviceApi()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            api.requests.append((parts.path, parse_qs(parts.query)))
            body = json.dumps({}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield api
    server.shutdown()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))


def test_on_zerogpu_the_app_starts_through_gradio_launch_and_model_calls_ask_for_a_gpu(
        tmp_path: Path, device_api: DeviceApi, tiny_model: Path) -> None:
    from gradio_client import Client

    port = free_port()
    env = app_env(tmp_path, port, DOCGEMMA_BACKEND="transformers", DOCGEMMA_MODEL=str(tiny_model),
                  SPACES_ZERO_GPU="true", SPACES_ZERO_DEVICE_API_URL=device_api.url,
                  PYTHONPATH=os.pathsep.join([str(SPACES_STUB), str(ROOT)]))
    app = App(env)
    try:
        url = app.ready_url()
        # spaces reports to ZeroGPU only from gradio.Blocks.launch, and only once functions were wrapped.
        assert [path for path, _ in device_api.requests] == ["/startup-report"]
        for probe in ("healthz", "readyz", "metrics"):  # the probes are still served, by Gradio's app
            assert httpx.get(f"{url}{probe}", timeout=10).status_code == 200, probe
        Client(url, verbose=False).predict({"text": "What is hypertension?", "files": []}, [], None,
                                           api_name="/respond")
        scheduled = [query for path, query in device_api.requests if path == "/schedule"]
        assert scheduled, device_api.requests  # the turn's model calls went through spaces.GPU
        durations = {int(q["durationSeconds"][0]) for q in scheduled}
        assert durations <= {zerogpu_seconds(max_new_tokens=n) for n in range(1, 4097)}
        assert max(durations) < 120  # asked per call, not the old fixed 120 s for every call
        stream = open_heartbeat(url)
        code, seconds = app.stop(timeout_s=10)
    finally:
        if app.process.poll() is None:
            app.process.kill()
    assert code == 0 and seconds < 5, (code, seconds, "\n".join(app.err[-40:]))
    assert "Traceback" not in "\n".join(app.err), "\n".join(app.err)
    assert stream.read() is not None


def test_spaces_importable_without_zerogpu_changes_nothing(tmp_path: Path, tiny_model: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Gradio Space can import ``spaces``; only ZeroGPU may change how the app serves and calls the model."""
    import gradio as gr

    from docgemma import runtime
    from docgemma.config import Settings
    from docgemma.serve import launch
    from docgemma.ui import server

    monkeypatch.syspath_prepend(str(SPACES_STUB))
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    import spaces  # importable, as on any Space

    launch_before = gr.Blocks.launch
    built: list[Any] = []
    served: list[str] = []
    build_assistant = runtime.build_assistant

    def record_assistant(*args: Any, **kwargs: Any) -> Any:
        built.append(build_assistant(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(runtime, "build_assistant", record_assistant)
    monkeypatch.setattr(server, "serve", lambda *a, **k: served.append("uvicorn"))
    monkeypatch.setattr(server, "serve_through_gradio", lambda *a, **k: served.append("gradio"))
    launch(Settings(backend="transformers", model=str(tiny_model), data_dir=tmp_path / "data", server_port=free_port()))
    llm = built[0].llm
    assert served == ["uvicorn"] and gr.Blocks.launch is launch_before and spaces.decorated_cache == {}
    assert llm.prefix_cache and llm._generate_ids == llm._generate_ids_impl and llm._stream == llm._stream_impl


ZEROGPU_JSON_TURN = """
import json, os, sys
import spaces  # before torch, as the backend does on ZeroGPU
from docgemma.agent.schemas import ResultAssessment
from docgemma.llm.base import Message
from docgemma.llm.transformers_backend import load_transformers_llm

llm = load_transformers_llm(sys.argv[1])
llm.prepare_schemas([ResultAssessment])  # compiled at load, before any worker is forked
messages = [Message(role="user", content="chek warfrin intractions w/ asprin pls")]
out = llm.generate_json(messages, ResultAssessment, temperature=0.0, max_tokens=48)
print(json.dumps({"quality": out.quality, "parent": os.getpid()}))
"""


def test_on_zerogpu_a_constrained_json_call_crosses_into_the_gpu_worker_by_pickle(
        tmp_path: Path, device_api: DeviceApi, tiny_model: Path) -> None:
    """The stand-in ``spaces`` runs each call in a forked worker with its arguments pickled, as the real one
    does: an llguidance logits processor passed in failed every JSON call there (PicklingError). The schema
    crosses instead and the processor is made in the worker."""
    env = {**os.environ, "SPACES_ZERO_GPU": "true", "SPACES_ZERO_DEVICE_API_URL": device_api.url,
           "PYTHONPATH": os.pathsep.join([str(SPACES_STUB), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", ZEROGPU_JSON_TURN, str(tiny_model)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["quality"]  # a validated ResultAssessment came back from the worker
    assert [path for path, _ in device_api.requests] == ["/schedule"]  # one GPU call, through spaces.GPU


def test_the_spaces_stand_in_refuses_what_cannot_be_pickled(device_api: DeviceApi) -> None:
    env = {**os.environ, "SPACES_ZERO_GPU": "true", "SPACES_ZERO_DEVICE_API_URL": device_api.url,
           "PYTHONPATH": str(SPACES_STUB)}
    script = ("import os, spaces, threading\n"
              "f = spaces.GPU(lambda x: os.getpid())\n"
              "assert f(1) != os.getpid()\n"  # ran in another process
              "f(threading.Lock())\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "cannot pickle" in done.stderr, done.stderr[-2000:]
