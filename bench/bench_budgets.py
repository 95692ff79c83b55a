"""The per-turn budgets over every golden turn (``docgemma/eval/budgets.py``), as MedGemma would be asked.

    python bench/bench_budgets.py [--label after] [--src CHECKOUT]

The golden oracle decides; the Gemma 3 tokenizer counts; uncached = beyond the common prefix with the
turn's previous call. ``--src`` measures another checkout's prompts and schemas with its own budgets
module (``docgemma/budgets.py`` before the measurement wing; commit 1cb9e14 for "before", extracted with
``git archive``: instructions first, ``brief_summary`` still decoded).
The label's figures are merged into ``bench/results/results_budgets.json``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="after")
    parser.add_argument("--src", help="another checkout to measure (default: this one)")
    args = parser.parse_args()
    root = Path(args.src).resolve() if args.src else HERE.parent
    sys.path.insert(0, str(root))
    try:
        budgets = importlib.import_module("docgemma.eval.budgets")
    except ModuleNotFoundError:  # a checkout from before the measurement wing
        budgets = importlib.import_module("docgemma.budgets")
    golden_paths, metered_turns = budgets.golden_paths, budgets.metered_turns
    summarise, violations = budgets.summarise, budgets.violations

    records = metered_turns(golden_paths())
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "(not a git checkout)"
    figures = {"source": str(root) if args.src else "this checkout", "commit": commit, "turns": len(records),
               "summary": summarise(records), "violations": violations(records)}
    # Per call (schema, prompt, cached, decoded) of the turns with the most calls: what each node re-reads.
    busiest = sorted(records, key=lambda r: -len(r["calls"]))[:3]
    figures["busiest_turns"] = [{"input": r["user_input"], "calls": r["calls"]} for r in busiest]
    if "across_turns" in inspect.signature(metered_turns).parameters:
        # The same, with the modelled cache kept across a session's turns (as a server's cache is).
        figures["summary_cache_across_turns"] = summarise(metered_turns(golden_paths(), across_turns=True))
    path = HERE / "results" / "results_budgets.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    saved[args.label] = figures
    path.write_text(json.dumps(saved, indent=1) + "\n")
    sys.stdout.write(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
