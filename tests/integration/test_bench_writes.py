"""bench/bench_writes.py runs against the page as it is: its clicks name the card they decide (the page refuses a
decision without it), so a change to the decision API breaks the bench here, not on the day a figure is rerun.
The bench had been failing with "No value provided for required argument: card" since decisions named their card."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_one_trial_of_the_write_bench_writes_each_card_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "writes.json"
    done = subprocess.run([sys.executable, "bench/bench_writes.py", "--trials", "1", "--out", str(out)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    modes = json.loads(out.read_text())["modes"]
    # Exactly one write without Reject; at most one with it (a Reject that comes first writes nothing).
    assert modes["approve+edit+approve"]["trials_with_exactly_one_write"] == 1, modes
    assert all(m["max_writes_per_card"] <= 1 and m["provenance_equals_requests"] for m in modes.values()), modes
