"""bench/bench_tools.py's time to fail offline: each way out of reach is timed on its own first failure.

The bug this pins: after the first offline case, the offline memory (``docgemma/tools/http.py``) answered the later
cases on the same loopback host in a millisecond, so "a host that never answers" timed the memory, not the wait for
a connection that never comes (results_tools.json said 0.001 s, "offline")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from docgemma.tools.http import forget_offline

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("bench_tools", ROOT / "bench" / "bench_tools.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_tools"] = bench
_SPEC.loader.exec_module(bench)


@pytest.fixture(autouse=True)
def _no_memory() -> object:
    yield
    forget_offline()  # the bench leaves its last case's memory: the other tests start without it


def test_a_host_that_never_answers_is_timed_to_its_own_deadline() -> None:
    times = bench.time_to_fail_offline()
    assert set(times) == {"real API hosts, no network", "closed local port", "host that never answers"}
    never = times["host that never answers"]
    # It waits for the connection deadline (a second or so), and fails as unavailable, not as "known offline".
    assert never["seconds"] >= 0.5 and never["error_type"] != "offline", never
    assert times["closed local port"]["error_type"] == "offline"
