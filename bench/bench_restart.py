"""A restart of the README's app command (``bash scripts/dev.sh app``) with everything installed: seconds from the
command to the first page served (the app serves once the embedded model is loaded), with the converted model
kept in the cache (the default) and without it (``DOCGEMMA_MODEL_CACHE=off``: the GGUF converted at every
start). Issue 47's target: a restart ready in ≤ 30 s on this 2-core machine. The load average is recorded beside
the figures (they grow with it).

    python bench/bench_restart.py [--save]   # --save: bench/results/results_restart.json

The first run fills the cache if it is empty and is not counted; each figure is the median of ``--runs`` starts.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "results_restart.json"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_to_page(extra_env: dict[str, str], timeout_s: float = 600) -> float:
    """Seconds from ``bash scripts/dev.sh app`` to HTTP 200 on its page; the app is stopped after."""
    port = _free_port()
    env = {**os.environ, **extra_env, "GRADIO_SERVER_PORT": str(port), "DOCGEMMA_DATA_DIR": tempfile.mkdtemp()}
    start = time.perf_counter()
    app = subprocess.Popen(["bash", "scripts/dev.sh", "app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while time.perf_counter() - start < timeout_s:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                    return time.perf_counter() - start
            except httpx.HTTPError:
                pass  # not listening yet
            if app.poll() is not None:
                raise SystemExit(f"the app exited ({app.returncode}) before its page was served")
            time.sleep(0.25)
        raise SystemExit(f"no page within {timeout_s:.0f} s")
    finally:
        os.killpg(app.pid, 15)
        app.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    load = round(os.getloadavg()[0], 2)
    start_to_page({})  # fills the cache when it is empty (not counted)
    cached = [start_to_page({}) for _ in range(args.runs)]
    uncached = [start_to_page({"DOCGEMMA_MODEL_CACHE": "off"}) for _ in range(args.runs)]
    figures = {
        "command": "python bench/bench_restart.py --save",
        "restart_to_page_s": {"converted_model_cached": round(statistics.median(cached), 1),
                              "cache_off": round(statistics.median(uncached), 1)},
        "runs": {"converted_model_cached": [round(t, 1) for t in cached], "cache_off": [round(t, 1) for t in uncached]},
        "target_s": 30, "cpus": os.cpu_count(), "load_average_1m_at_start": load,
    }
    print(json.dumps(figures, indent=1))
    if args.save:
        RESULTS.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
