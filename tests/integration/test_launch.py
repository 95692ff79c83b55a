"""Starting and stopping the web app as a user, an orchestrator and a Space do, each in a subprocess:

* ``python app.py`` prints its URL and "ready" once the page answers, and a SIGTERM with an event stream open
  (what an open browser holds: Gradio's session heartbeat) ends it within 5 s, exit status 0, no traceback.
* On ZeroGPU (``SPACES_ZERO_GPU`` and a device API, with the real ``spaces`` package on the CPU:
  ``tests/fixtures/zerogpu_site/sitecustomize.py``) the app starts through ``gradio.Blocks.launch``, so ``spaces``
  reports its wrapped model calls to the device API, the probes still answer, and a turn's model calls ask
  ZeroGPU for a GPU with a duration from their token budget, each run in spaces' forked worker.
* With ``spaces`` importable and no ZeroGPU (every other Space), nothing changes: uvicorn serves, the model calls
  are not wrapped and the prefix cache stays on.
"""

from __future__ import annotations

import http.client
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from docgemma.llm.platform import zerogpu_seconds
from tests.app_process import ROOT, App, app_env
from tests.conftest import free_port
from tests.tiny_gemma import build_tiny_gemma3
from tests.zerogpu_cpu import DeviceApi

pytestmark = pytest.mark.slow
ZEROGPU_SITE = ROOT / "tests" / "fixtures" / "zerogpu_site"


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


@pytest.fixture
def device_api() -> Iterator[DeviceApi]:
    api = DeviceApi().start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))


def test_on_zerogpu_the_app_starts_through_gradio_launch_and_model_calls_ask_for_a_gpu(
        tmp_path: Path, device_api: DeviceApi, tiny_model: Path) -> None:
    from gradio_client import Client

    port = free_port()
    env = app_env(tmp_path, port, DOCGEMMA_BACKEND="transformers", DOCGEMMA_MODEL=str(tiny_model),
                  SPACES_ZERO_GPU="true", SPACES_ZERO_DEVICE_API_URL=device_api.url,
                  PYTHONPATH=os.pathsep.join([str(ZEROGPU_SITE), str(ROOT)]))
    app = App(env)
    try:
        url = app.ready_url()
        # spaces reports to ZeroGPU only from gradio.Blocks.launch, and only once functions were wrapped.
        assert device_api.paths() == ["/startup-report"]
        for probe in ("healthz", "readyz", "metrics"):  # the probes are still served, by Gradio's app
            assert httpx.get(f"{url}{probe}", timeout=10).status_code == 200, probe
        Client(url, verbose=False).predict({"text": "What is hypertension?", "files": []}, [], None,
                                           api_name="/respond")
        scheduled = [query for path, query in device_api.requests if path == "/schedule"]
        assert scheduled, device_api.requests  # the turn's model calls went through spaces.GPU
        assert "/allow" in device_api.paths()  # in spaces' forked GPU worker
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

    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    import spaces  # importable, as on any Space (requirements-dev.txt installs the real one)
    from spaces.zero.decorator import decorated_cache

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
    assert served == ["uvicorn"] and gr.Blocks.launch is launch_before and decorated_cache == {} and spaces.GPU
    assert llm.prefix_cache and llm._generate_ids == llm._generate_ids_impl and llm._stream == llm._stream_impl
