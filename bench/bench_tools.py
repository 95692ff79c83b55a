"""Tool-layer figures: HTTP calls per tool with and without the cache, time to fail offline,
and per-call overhead in-process vs over MCP (stdio). Run from the repository root:

    python bench/bench_tools.py [--json]

Answers come from the recorded fixtures served on loopback, so the figures measure our code, not the APIs.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgemma.config import Settings
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.http import forget_offline
from docgemma.tools.mcp_client import McpToolClient
from docgemma.tools.registry import ToolContext, default_registry
from tests.fixture_api import serve

CALLS: dict[str, dict[str, Any]] = {
    "check_drug_safety": {"drug_name": "warfarin"},
    "check_drug_interactions": {"drug_names": ["warfarin", "aspirin"]},
    "search_medical_literature": {"query": "APOB variants"},
    "find_clinical_trials": {"condition": "melanoma", "status": "recruiting"},
}


def time_to_fail_offline() -> dict[str, dict[str, Any]]:
    """Seconds until a drug look-up fails, and how, for each way a host can be out of reach: each case its own first
    failure."""
    offline = {}
    for label, settings in (("real API hosts, no network", Settings()),
                            ("closed local port", Settings(openfda_url="http://127.0.0.1:9"))):
        # Each case measures a first failure: the offline memory (tools/http.py) would otherwise answer the later
        # cases at once from the earlier one's (the same loopback host), and time nothing of their own.
        forget_offline()
        spec = bind_tools(default_registry(), knowledge_clients(settings))["check_drug_safety"]
        start = time.perf_counter()
        out = spec.run(spec.args_model(drug_name="warfarin"), ToolContext())
        offline[label] = {"seconds": round(time.perf_counter() - start, 3), "error_type": out.get("error_type")}
    # A host that never answers the connection (SYNs dropped: a full listen backlog on loopback).
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    forget_offline()
    spec = bind_tools(default_registry(), knowledge_clients(Settings(openfda_url=f"http://127.0.0.1:{port}")))["check_drug_safety"]
    start = time.perf_counter()
    out = spec.run(spec.args_model(drug_name="warfarin"), ToolContext())
    offline["host that never answers"] = {"seconds": round(time.perf_counter() - start, 3), "error_type": out.get("error_type")}
    for sock in (listener, *fillers):
        sock.close()
    return offline


def main() -> int:
    figures: dict[str, Any] = {}
    with serve() as base:
        env = {**os.environ, "DOCGEMMA_OPENFDA_URL": f"{base}/openfda", "DOCGEMMA_EUTILS_URL": f"{base}/eutils",
               "DOCGEMMA_EUROPEPMC_URL": f"{base}/europepmc", "DOCGEMMA_CTGOV_URL": f"{base}/ctgov"}
        settings = Settings.from_env(env)
        calls = {}
        for tool, args in CALLS.items():
            kt = knowledge_clients(settings)
            spec = bind_tools(default_registry(), kt)[tool]
            spec.run(spec.args_model(**args), ToolContext())
            first = kt.http.stats["requests"]
            spec.run(spec.args_model(**args), ToolContext())
            calls[tool] = {"http_calls_first": first, "http_calls_repeat": kt.http.stats["requests"] - first,
                           "cache_hits_repeat": kt.http.stats["cache_hits"]}
        figures["http_calls_per_tool"] = calls

        registry = bind_tools(default_registry(), knowledge_clients(settings))
        spec = registry["check_drug_safety"]
        model = spec.args_model(drug_name="warfarin")
        spec.run(model, ToolContext())  # warm: the cache answers, so only our overhead is timed
        local = []
        for _ in range(200):
            start = time.perf_counter()
            spec.run(model, ToolContext())
            local.append((time.perf_counter() - start) * 1000)
        client = McpToolClient(env=env, allow_writes=False)
        try:
            client.call("check_drug_safety", {"drug_name": "warfarin"})
            remote = []
            for _ in range(200):
                start = time.perf_counter()
                client.call("check_drug_safety", {"drug_name": "warfarin"})
                remote.append((time.perf_counter() - start) * 1000)
        finally:
            client.close()
        figures["per_call_ms_cached"] = {"in_process_p50": round(statistics.median(local), 3),
                                         "mcp_stdio_p50": round(statistics.median(remote), 3)}

    figures["time_to_fail_offline"] = time_to_fail_offline()
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
