"""Figures for a deployment: turns per second with 1 and 2 app replicas, and what the PostgreSQL
checkpointer costs per turn against SQLite.

1. Throughput: ``python app.py`` replicas (the demo model, ``DOCGEMMA_BACKEND=fake``), conversations on one
   PostgreSQL database (Debian's server, started as in the tests), the record served over HTTP by
   ``python -m docgemma ehr serve``. Clients are gradio_client sessions over loopback HTTP, each pinned to one
   replica as the load balancer's ``ip_hash`` would pin it; each turn finds a patient and reads the chart.
2. Checkpointer cost: the same turns in-process on one Assistant, with the SQLite store and with the
   PostgreSQL one (loopback); the difference of the per-turn medians is the cost.

Everything shares this machine's cores (replicas, clients, FHIR server, PostgreSQL): on 2 cores two replicas
compete for the same CPU, so the figure shows the overhead of the split, not a GPU deployment's scaling.

    python bench/bench_deploy.py [--turns 12] [--sessions 4] [--out bench/results/results_deploy.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
QUESTION = "Find patient Amina Okafor and check her chart"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, timeout_s: float = 180.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{url} not ready after {timeout_s:.0f} s")


def throughput(replicas: int, sessions: int, turns: int, env: dict[str, str]) -> dict[str, Any]:
    from gradio_client import Client

    ports = [free_port() for _ in range(replicas)]
    clients: list[Any] = []
    procs = [subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env={**env, "GRADIO_SERVER_PORT": str(p)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for p in ports]
    try:
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        for url in urls:
            wait_ready(url)
        clients = [Client(urls[i % replicas] + "/", verbose=False) for i in range(sessions)]  # pinned sessions
        for client in clients:  # warm-up: one turn each, not timed
            client.predict({"text": QUESTION, "files": []}, [], None, api_name="/respond")
        latencies: list[float] = []
        lock = threading.Lock()

        def run(client: Any) -> None:
            for _ in range(turns):
                start = time.perf_counter()
                client.predict({"text": QUESTION, "files": []}, [], None, api_name="/respond")
                with lock:
                    latencies.append(time.perf_counter() - start)

        workers = [threading.Thread(target=run, args=(c,)) for c in clients]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        wall = time.perf_counter() - start
        return {"replicas": replicas, "sessions": sessions, "turns": len(latencies),
                "turns_per_s": round(len(latencies) / wall, 2), "latency_p50_ms": round(statistics.median(latencies) * 1000),
                "latency_p95_ms": round(sorted(latencies)[int(len(latencies) * 0.95) - 1] * 1000)}
    finally:
        for client in clients:
            client.close()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(60)


def checkpointer_cost(postgres_url: str, turns: int) -> dict[str, Any]:
    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.config import Settings
    from docgemma.ehr.service import Ehr
    from docgemma.ops.conversation_store import open_store
    from docgemma.runtime import build_registry
    from docgemma.tools.ehr_tools import record_write_check

    out: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="docgemma-bench-"))
    ehr = Ehr.embedded(work / "record.sqlite")
    for name, url in (("sqlite", None), ("postgres", postgres_url), ("sqlite_again", None)):
        settings = Settings(data_dir=work / name, checkpoint_url=url)
        store = open_store(settings)
        assistant = Assistant(demo_llm(), build_registry(settings, ehr, in_process=True), store.checkpointer,
                              settings, patient_context=ehr.patient_context, write_check=record_write_check(ehr),
                              claims=store.claims)
        assistant.run_turn("warm", QUESTION)
        samples = []
        for i in range(turns):
            start = time.perf_counter()
            assistant.run_turn(f"t{i % 4}", QUESTION)  # 4 conversations growing side by side
            samples.append((time.perf_counter() - start) * 1000)
        out[name] = {"turns": turns, "p50_ms": round(statistics.median(samples), 1),
                     "mean_ms": round(statistics.fmean(samples), 1)}
        store.close()
    base = min(out["sqlite"]["p50_ms"], out["sqlite_again"]["p50_ms"])
    out["postgres_cost_per_turn_ms_p50"] = round(out["postgres"]["p50_ms"] - base, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=12, help="timed turns per client session")
    parser.add_argument("--sessions", type=int, default=4, help="concurrent client sessions")
    parser.add_argument("--cost-turns", type=int, default=40)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "results_deploy.json")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    from docgemma.ehr.service import Ehr
    from tests.postgres import start_postgres

    servers = start_postgres()
    postgres = next(servers)
    record = Path(tempfile.mkdtemp(prefix="docgemma-bench-record-"))
    Ehr.embedded(record / "record.sqlite")
    fhir_port = free_port()
    fhir = subprocess.Popen([sys.executable, "-m", "docgemma", "ehr", "serve", "--port", str(fhir_port)], cwd=ROOT,
                            env={**os.environ, "DOCGEMMA_DATA_DIR": str(record)}, stderr=subprocess.DEVNULL)
    dead = f"http://127.0.0.1:{free_port()}"
    results: dict[str, Any] = {"machine": f"{os.cpu_count()} cores, {platform.machine()}, no GPU",
                               "load_before": os.getloadavg()[0]}
    try:
        cost = checkpointer_cost(postgres.database(), args.cost_turns)
        runs = []
        for replicas in (1, 2):
            env = {**os.environ, "DOCGEMMA_BACKEND": "fake", "DOCGEMMA_CHECKPOINT_URL": postgres.database(),
                   "DOCGEMMA_FHIR_BASE_URL": f"http://127.0.0.1:{fhir_port}/fhir",
                   "DOCGEMMA_DATA_DIR": tempfile.mkdtemp(prefix="docgemma-bench-app-"), "DOCGEMMA_OPENFDA_URL": dead,
                   "DOCGEMMA_EUTILS_URL": dead, "DOCGEMMA_EUROPEPMC_URL": dead, "DOCGEMMA_CTGOV_URL": dead}
            runs.append(throughput(replicas, args.sessions, args.turns, env))
        results.update({"throughput": runs, "checkpointer": cost, "load_after": os.getloadavg()[0],
                        "turn": QUESTION, "model": "demo rules (DOCGEMMA_BACKEND=fake)"})
    finally:
        fhir.terminate()
        fhir.wait(30)
        for _ in servers:  # stops the server
            pass
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    sys.stdout.write(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
