"""A fresh machine's CI time per phase, recorded: turns `.ci/run`'s test-artifacts/ci_phases.json into a labelled
run in bench/results/results_fresh_machine.json. Issue 28's target: `CI=true bash .ci/run` on a fresh clone
with an empty pip cache green in 30 minutes or less on the 2-core development machine.

    git clone REPO /tmp/fresh && cd /tmp/fresh && PIP_NO_CACHE_DIR=1 CI=true bash .ci/run
    python bench/bench_fresh_machine.py --phases /tmp/fresh/test-artifacts/ci_phases.json --label fresh-clone \\
        --note "empty pip cache, load 2-8"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "results_fresh_machine.json"
BUDGET_S = 30 * 60


def record(phases: dict[str, Any], label: str, note: str, commit: str) -> dict[str, Any]:
    """One run: each phase's seconds, the suite's two parts summed, the total against the 30-minute budget."""
    seconds = {row["phase"]: row["seconds"] for row in phases["phases"]}
    suite = sum(v for k, v in seconds.items() if k.startswith("suite"))
    return {"label": label, "note": note, "commit": commit, "status": phases["status"], "phases_s": seconds,
            "suite_s": round(suite, 1), "total_s": phases["total_s"], "total_min": round(phases["total_s"] / 60, 1),
            "within_budget": phases["status"] == 0 and phases["total_s"] <= BUDGET_S, "budget_s": BUDGET_S,
            "machine": {k: phases.get(k) for k in ("cpus", "load_average_1_5_15", "python", "finished_utc")}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=Path, default=ROOT / "test-artifacts" / "ci_phases.json")
    parser.add_argument("--label", required=True, help="e.g. fresh-clone, warm-cache")
    parser.add_argument("--note", default="", help="conditions: pip cache, machine load")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    source = args.phases.parent.parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=source, capture_output=True, text=True).stdout.strip()
    run = record(json.loads(args.phases.read_text()), args.label, args.note, commit)
    runs = json.loads(args.out.read_text())["runs"] if args.out.exists() else []
    runs = [r for r in runs if r["label"] != args.label] + [run]
    args.out.write_text(json.dumps({"command": "CI=true bash .ci/run, then python bench/bench_fresh_machine.py",
                                    "runs": runs}, indent=1) + "\n")
    print(f"{args.label}: {run['total_min']} min, status {run['status']}, within 30 min: {run['within_budget']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
