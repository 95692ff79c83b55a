"""Web-app figures: time from launch to ready on the embedded default, time to the first streamed answer token
of a turn (gradio_client against ``python app.py``), and time from SIGTERM to the process's exit with its exit
status. The machine's load average is recorded beside them (the figures grow with it).

    python bench/bench_ui.py [--save]     # --save: bench/results/results_ui.json (README and writeup cite it)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "results_ui.json"


def main() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "DOCGEMMA_DATA_DIR": tempfile.mkdtemp()}
    start = time.perf_counter()
    app = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if app.poll() is not None:
                raise SystemExit("app.py exited before it was ready")
            time.sleep(0.25)
        ready_s = time.perf_counter() - start
        from gradio_client import Client

        client = Client(url, verbose=False)
        figures: dict[str, object] = {"launch_to_ready_s": round(ready_s, 1), "cpus": os.cpu_count(),
                                      "load_average_1m_at_start": round(os.getloadavg()[0], 2)}
        for question in ("What is hypertension?", "Check FDA warnings for dofetilide"):
            begin = time.perf_counter()
            job = client.submit({"text": question, "files": []}, [], None, api_name="/respond")
            first_token = None
            for update in job:
                history = update[0]
                if not isinstance(history, list) or not history:
                    continue  # an update that leaves the chat as it is
                last = history[-1]
                if first_token is None and last["role"] == "assistant" and not last.get("metadata"):
                    first_token = time.perf_counter() - begin
            figures[question] = {"first_token_s": round(first_token or -1, 1), "turn_s": round(time.perf_counter() - begin, 1)}
        figures.update(_shutdown(app))
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
    print(json.dumps(figures, indent=1))
    if "--save" in sys.argv[1:]:
        RESULTS.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


def _shutdown(app: subprocess.Popen[bytes]) -> dict[str, object]:
    """SIGTERM as a service manager sends it: seconds to exit, and the exit status (0: a clean stop)."""
    begin = time.perf_counter()
    app.send_signal(signal.SIGTERM)
    try:
        code = app.wait(60)
    except subprocess.TimeoutExpired:
        return {"shutdown_s": None, "shutdown_exit_code": None}
    return {"shutdown_s": round(time.perf_counter() - begin, 1), "shutdown_exit_code": code}


if __name__ == "__main__":
    sys.exit(main())
