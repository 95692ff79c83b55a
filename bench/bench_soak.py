"""Soak: does the web app's memory level off over many sessions? ``python app.py`` with the demo model
(``DOCGEMMA_BACKEND=fake``) on the embedded record, in its own process; each session is a new gradio_client
(its own Gradio session, as a new browser tab is) that finds a patient, reads the chart and asks a record
question; the app's resident memory (``VmRSS``) is sampled every ``--every`` sessions.

    flock /tmp/docgemma-heavy.lock python bench/bench_soak.py [--sessions 200] [--every 20] [--save]

``--src DIR`` runs another checkout's ``app.py`` (the code before a fix). With ``--save`` the figures go to
``bench/results/results_soak.json`` under ``--label`` (default ``after``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "results_soak.json"
TURNS = ("Find patient Amina Okafor and check her chart", "What were her last kidney function results?",
         "What is hypertension?")


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(src: Path, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "DOCGEMMA_DATA_DIR": str(data / "data"),
           "GRADIO_TEMP_DIR": str(data / "gradio"), "DOCGEMMA_BACKEND": "fake", "PYTHONPATH": str(src)}
    for name in ("OPENFDA", "EUTILS", "EUROPEPMC", "CTGOV"):  # no network: the soak measures the app
        env[f"DOCGEMMA_{name}_URL"] = "http://127.0.0.1:9"
    app = subprocess.Popen([sys.executable, "app.py"], cwd=src, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "healthz", timeout=1).status_code == 200 and httpx.get(url, timeout=5).status_code == 200:
                return app, url
        except httpx.HTTPError:
            pass
        if app.poll() is not None:
            raise SystemExit("app.py exited before it was ready")
        time.sleep(0.25)
    app.kill()
    raise SystemExit("app.py was not ready within 180 s")


def session(url: str) -> None:
    """One session: a new Gradio session, the turns of :data:`TURNS`, each carrying the chat so far."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    history: list[object] = []
    for turn in TURNS:
        out = client.predict({"text": turn, "files": []}, history, None, api_name="/respond")
        history = out[0]
    client.close()  # as a tab closes: the heartbeat ends, and the app may drop the session


def soak(src: Path, sessions: int, every: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="docgemma-soak-") as tmp:
        app, url = start_app(src, Path(tmp))
        try:
            session(url)  # warm-up: imports, first compile of the summary, caches
            samples = [{"sessions": 0, "rss_mb": round(rss_mb(app.pid), 1), "s": 0.0}]
            start = time.perf_counter()
            for n in range(1, sessions + 1):
                session(url)
                if n % every == 0:
                    samples.append({"sessions": n, "rss_mb": round(rss_mb(app.pid), 1),
                                    "s": round(time.perf_counter() - start, 1)})
                    print(f"{n:>4} sessions  {samples[-1]['rss_mb']:>7.1f} MB  {samples[-1]['s']:>6.1f} s", flush=True)
        finally:
            app.terminate()
            app.wait(20)
    rss = [float(s["rss_mb"]) for s in samples]  # type: ignore[arg-type]
    half = len(rss) // 2
    return {
        "sessions": sessions, "turns_per_session": len(TURNS), "turns": list(TURNS), "sample_every": every,
        "samples": samples,
        "growth_first_half_mb": round(rss[half] - rss[0], 1),
        "growth_second_half_mb": round(rss[-1] - rss[half], 1),
        "per_100_sessions_last_half_mb": round((rss[-1] - rss[half]) / max(1, sessions - half * every) * 100, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--src", type=Path, default=ROOT, help="checkout whose app.py to run")
    parser.add_argument("--label", default="after")
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args(argv)
    figures = soak(args.src, args.sessions, args.every)
    figures["machine"] = f"{os.cpu_count()} cores, no GPU"
    print(json.dumps(figures, indent=1))
    if args.save:
        saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        saved[args.label] = figures
        RESULTS.write_text(json.dumps(saved, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
