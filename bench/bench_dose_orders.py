"""The dose check on generated prescriptions, through the real write check (``record_write_check`` over an
embedded record holding three test patients: an adult, a 6-year-old of 21.4 kg weighed a week ago, a
6-year-old with no weight): every drug of the dose table × dose (usual, 10×, 1000×, wrong unit, kg, negative,
in words) × frequency (usual, "every five minutes", "q15m", none, "daily" for a weekly drug) × patient
(``tests/dose_orders.py``). Counted: dangerous orders a plain approval could pass (no severe finding; target 0)
and severe findings on usual doses (target ≤ 2%).

    python bench/bench_dose_orders.py [--sample N] [--out bench/results/results_dose_orders.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run(sample: int = 0) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from docgemma.clinical import body_weight
    from docgemma.ehr.service import Ehr
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.tools.registry import default_registry
    from tests.dose_orders import orders, patient_resources

    ehr = Ehr.embedded(Path(tempfile.mkdtemp()) / "record.sqlite", seed=None)
    ids: dict[str, str] = {}
    for kind, resources in patient_resources(body_weight.today()).items():
        made = ehr.client.create(resources[0])
        ids[kind] = str(made["id"])
        for extra in resources[1:]:
            ehr.client.create({**extra, "subject": {"reference": f"Patient/{made['id']}"}})
    spec, check = default_registry()["prescribe_medication"], record_write_check(ehr)
    generated = orders()
    todo = generated[::max(1, len(generated) // sample)] if sample else generated
    passed, false_severe, kinds = [], [], Counter[str]()
    start = time.perf_counter()
    for order in todo:
        review = check(spec, {"patient_id": ids[order.patient], "medication_name": order.drug,
                              "dosage": order.dosage, "frequency": order.frequency}, None)
        severe = bool(review.get("severe"))
        kinds["dangerous" if order.dangerous else "usual" if order.usual else "other"] += 1
        if order.dangerous and not severe:
            passed.append(order.__dict__)
        if order.usual and severe:
            false_severe.append({**order.__dict__, "severe": review.get("severe")})
    return {"orders": len(todo), "dangerous": kinds["dangerous"], "usual": kinds["usual"],
            "dangerous_passing_plain_approval": len(passed), "severe_on_usual": len(false_severe),
            "severe_on_usual_rate": round(len(false_severe) / max(1, kinds["usual"]), 4),
            "seconds": round(time.perf_counter() - start, 1), "passed": passed, "false_severe": false_severe}


def markdown(result: dict[str, Any], command: str) -> str:
    lines = [f"# Dose check on generated orders\n\nCommand: `{command}`\n",
             f"- orders: {result['orders']} (dangerous {result['dangerous']}, usual {result['usual']})",
             f"- dangerous orders a plain approval could pass: **{result['dangerous_passing_plain_approval']}** "
             "(target 0)",
             f"- severe findings on usual doses: **{result['severe_on_usual']}** "
             f"({100 * result['severe_on_usual_rate']:.1f}%; target ≤ 2%)", f"- run time: {result['seconds']} s", ""]
    for title, key in (("Dangerous orders passing", "passed"), ("Usual doses with a severe finding", "false_severe")):
        if result[key]:
            lines.append(f"## {title}\n")
            lines += [f"- {o['drug']} {o['dosage']} {o['frequency']} ({o['patient']}, {o['variant']})"
                      for o in result[key][:50]]
            lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=0, help="every len/N-th order only (0: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "results_dose_orders.json")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    result = run(args.sample)
    command = "python bench/bench_dose_orders.py" + (f" --sample {args.sample}" if args.sample else "")
    args.out.write_text(json.dumps({"command": command, **result}, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(markdown(result, command))
    print(markdown(result, command).split("\n## ")[0])
    return 0 if result["dangerous_passing_plain_approval"] == 0 and result["severe_on_usual_rate"] <= 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
