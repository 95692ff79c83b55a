"""A replica whose model runs elsewhere (``DOCGEMMA_BACKEND=openai``, vLLM) imports nothing of the local-model
stack that its image leaves out (requirements.txt minus requirements-server.txt: torch, transformers, …): the app
is built as ``python app.py`` builds it and answers turns (knowledge, record, direct) against a stand-in
OpenAI-compatible server, in a subprocess, and ``sys.modules`` is read at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from tests.conftest import free_port

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
MODEL = "google/medgemma-1.5-4b-it"
SCRIPT = """
import json, sys
from docgemma.config import Settings
from docgemma.ui import server
server.serve = lambda *args, **kwargs: None  # everything python app.py builds, without serving it
from docgemma.serve import launch
settings = Settings.from_env()
launch(settings)
from docgemma.runtime import build_assistant
assistant = build_assistant(settings)
for message in ("What is hypertension?", "Check FDA warnings for dofetilide",
                "Find patient Amina Okafor and check her chart"):
    assistant.run_turn("no-torch", message)
print(json.dumps(sorted(sys.modules)))
"""


class OpenAiStub(BaseHTTPRequestHandler):
    """Lists the model; answers JSON calls with an empty object and text calls with one streamed sentence."""

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self.reply({"data": [{"id": MODEL}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not body.get("stream"):
            self.reply({"choices": [{"message": {"content": "{}"}}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        chunk = {"choices": [{"delta": {"content": "A stand-in answer."}}]}
        self.wfile.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())


@pytest.fixture
def model_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), OpenAiStub)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def requirement_names(name: str) -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / name).read_text().splitlines())
    return {Requirement(line).name.lower() for line in lines if line and not line.startswith("-")}


def test_the_openai_backend_path_imports_nothing_the_server_image_leaves_out(model_server: str,
                                                                              tmp_path: Path) -> None:
    left_out = requirement_names("requirements.txt") - requirement_names("requirements-server.txt")
    assert "torch" in left_out
    modules_of = {module for module, dists in packages_distributions().items()
                  if any(d.lower() in left_out for d in dists)}
    assert {"torch", "transformers"} <= modules_of
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCGEMMA_", "GRADIO_", "SPACES_"))}
    env.update(DOCGEMMA_BACKEND="openai", DOCGEMMA_MODEL=MODEL, DOCGEMMA_OPENAI_BASE_URL=model_server,
               DOCGEMMA_DATA_DIR=str(tmp_path / "data"), GRADIO_SERVER_PORT=str(free_port()), PYTHONPATH=str(ROOT),
               **{f"DOCGEMMA_{n}_URL": "http://127.0.0.1:9" for n in ("OPENFDA", "EUTILS", "EUROPEPMC", "CTGOV")})
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = {name.split(".")[0] for name in json.loads(proc.stdout.strip().splitlines()[-1])}
    assert "docgemma" in loaded and "gradio" in loaded  # the app was really built
    assert loaded & modules_of == set()

