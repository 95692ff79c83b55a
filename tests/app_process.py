"""``python app.py`` in a subprocess, as a user, an orchestrator or a load balancer meets it: its output collected,
its "ready" line awaited, SIGTERM with the exit status and the seconds it took."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
START_TIMEOUT_S = 240
READY = "DocGemma Connect is ready: "


class App:
    """``python app.py`` in a subprocess, its output collected line by line."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._collect, args=(stream, lines), daemon=True).start()

    @staticmethod
    def _collect(stream: Any, lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    def ready_url(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for line in self.out:
                if line.startswith(READY):
                    return line.removeprefix(READY)
            assert self.process.poll() is None, "\n".join(self.err[-40:])
            time.sleep(0.1)
        raise TimeoutError("\n".join(self.err[-40:]))

    def stop(self, timeout_s: float) -> tuple[int | None, float]:
        """SIGTERM; the exit status and the seconds it took (None: still running, then killed)."""
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            code = None
            self.process.kill()
            self.process.wait(30)
        time.sleep(0.2)  # the reader threads take the last lines
        return code, time.monotonic() - start


def app_env(tmp_path: Path, port: int, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DOCGEMMA_", "GRADIO_", "SPACES_"))}
    return {**clean, "DOCGEMMA_DATA_DIR": str(tmp_path / "data"), "GRADIO_SERVER_PORT": str(port),
            "DOCGEMMA_BACKEND": "fake", "PYTHONUNBUFFERED": "1",
            **{f"DOCGEMMA_{name}_URL": "http://127.0.0.1:9" for name in ("OPENFDA", "EUTILS", "EUROPEPMC", "CTGOV")},
            **extra}
