"""Issue 42: the prescription card's checks on the held-out set of orders written in a clinical pharmacist's role
(not by a licensed pharmacist) apart from the
tables (``tests/fixtures/heldout/pharmacist_orders_v1.json``): orders to stop that do not pass a plain Approve, and
ordinary orders written with one click, per area.

    python bench/bench_pharmacist.py [--root CHECKOUT] [--out bench/results/results_pharmacist_heldout.json]

``--root`` runs another checkout's code (the first pass: ``git worktree add /tmp/first 4c7f4ad`` then
``--root /tmp/first --out bench/results/results_pharmacist_heldout_first_pass.json``); the set is always this one's.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--out", type=Path, default=HERE / "bench" / "results" / "results_pharmacist_heldout.json")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    sys.path.insert(1, str(HERE))
    from tests.unit.test_pharmacist_heldout import CASES, outcome  # the runner of the checkout under test

    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong = []
    for case in CASES:
        area = case["why"].split("]")[0].strip("[")
        got, found = outcome(case)
        key = f"{case['expect']}:{area}"
        total[key] += 1
        total[case["expect"]] += 1
        if got == case["expect"]:
            right[key] += 1
            right[case["expect"]] += 1
        else:
            wrong.append({"id": case["id"], "expect": case["expect"], "order": case["order"]["medication_name"],
                          "why": case["why"], "blocked": found.blocked, "severe": found.severe})
    result = {"set": "tests/fixtures/heldout/pharmacist_orders_v1.json", "cases": len(CASES),
              "refused": right["refuse"], "to_refuse": total["refuse"], "written": right["write"],
              "to_write": total["write"],
              "by_area": {k: f"{right[k]}/{total[k]}" for k in sorted(total) if ":" in k}, "wrong": wrong}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"refused {right['refuse']}/{total['refuse']}, written {right['write']}/{total['write']} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
