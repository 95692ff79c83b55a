"""Durations of `.ci/run`'s phases, from the start times scripts/dev.sh appended to DOCGEMMA_PHASE_LOG.

    python3 scripts/ci_phases.py test-artifacts/ci_phases.log test-artifacts/ci_phases.json [--status RC]

The log holds one "NAME EPOCH_SECONDS" line per phase start and a last "end" line; a phase lasts until the next
line. Standard library only: it runs from the EXIT trap, even where set-up failed before any venv existed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import sys
import time
from pathlib import Path

#: The phases of a whole `.ci/run`, in order (scripts/dev.sh test, then scripts/dev.sh floors).
PHASES = ("setup", "lint", "type-check", "suite-parallel", "suite-serial", "suite-llamacpp", "figures", "floors")


def not_run(rows: list[dict[str, object]]) -> list[str]:
    """The phases of a whole run that never started (``.ci/run`` stops at the first failing command: set -e)."""
    started = {row["phase"] for row in rows}
    return [name for name in PHASES if name not in started]


def phases(log: Path) -> list[dict[str, object]]:
    marks = [(name, float(at)) for name, at in (line.split() for line in log.read_text().splitlines() if line.strip())]
    return [{"phase": name, "seconds": round(end - start, 1)} for (name, start), (_, end) in itertools.pairwise(marks)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--status", type=int, default=0, help=".ci/run's exit status")
    args = parser.parse_args()
    rows = phases(args.log)
    total = round(sum(float(str(r["seconds"])) for r in rows), 1)
    load = os.getloadavg()
    result = {"status": args.status, "total_s": total, "phases": rows, "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cpus": os.cpu_count(), "load_average_1_5_15": [round(x, 2) for x in load], "python": platform.python_version(),
              "not_run": not_run(rows)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(f"{row['phase']:<16} {float(str(row['seconds'])) / 60:6.1f} min")
    print(f"{'total':<16} {total / 60:6.1f} min (status {args.status}; {args.out})")
    if args.status != 0:
        last = str(rows[-1]["phase"]) if rows else "before any phase"
        skipped = not_run(rows)
        print(f"FAILED (exit {args.status}) in or after phase {last}; "
              + (f"these phases did not run: {', '.join(skipped)}" if skipped else "every phase ran"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
