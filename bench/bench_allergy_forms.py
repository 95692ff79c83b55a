"""Allergy check on generated product forms: how many expected conflicts the prescription write check finds,
on this tree or an older one (the "before" figure). Run from the root:

    python bench/bench_allergy_forms.py --cases /tmp/cases.json            # write the cases (this tree's table)
    python bench/bench_allergy_forms.py --evaluate /tmp/cases.json [--tree DIR] [--out FILE]

``--tree`` puts DIR first on ``sys.path`` (e.g. an export of an older commit: ``git archive <commit> | tar -x
-C DIR``), so the same cases run through that tree's ``prescription_check``. A case's outcome is read off
the card's texts, old and new wording alike: a severe allergy line = "conflict"; an allergy line naming a
cross-reactivity and nothing severe = "warning"; no allergy line = "none". Cases: ``tests/allergy_forms.py``
(every class × allergen × member form; related classes; unrelated drugs), plus the hand-written penicillin
product list (class "hand-listed").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def write_cases(path: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from tests.allergy_forms import as_json, cases, hand_cases

    items = as_json(cases() + hand_cases())
    path.write_text(json.dumps(items))
    return len(items)


def evaluate(path: Path, tree: Path | None) -> dict[str, Any]:
    sys.path.insert(0, str(tree or ROOT))
    from docgemma.tools.write_checks import PatientFacts
    try:
        from docgemma.tools.catalog.prescribe_medication import prescription_check
    except ImportError:  # a tree from before each tool had its own module
        from docgemma.tools.write_checks import prescription_check  # type: ignore[attr-defined,no-redef]

    items = json.loads(path.read_text())
    totals: Counter[str] = Counter()
    right: Counter[str] = Counter()
    per_class: dict[str, Counter[str]] = {}
    started = time.perf_counter()
    for case in items:
        allergy = {"resourceType": "AllergyIntolerance", "code": {"text": case["allergy"]},
                   "criticality": case["criticality"], "reaction": [{"manifestation": [{"text": "Anaphylaxis"}]}]}
        found = prescription_check({"medication_name": case["product"], "dosage": "500 mg",
                                    "frequency": "twice daily"}, PatientFacts([allergy], []))
        lines = [w for w in found.warnings + found.severe if w.startswith(("ALLERGY", "NOT VERIFIED"))]
        severe = [w for w in found.severe if w.startswith("ALLERGY CONFLICT")]
        got = ("conflict" if severe else "warning" if lines and all("cross-reactiv" in w.lower() for w in lines)
               else "none" if not lines else "other")
        totals[case["expect"]] += 1
        ok = got == case["expect"]
        right[case["expect"]] += ok
        stats = per_class.setdefault(case["klass"], Counter())
        stats[f"{case['expect']}_total"] += 1
        stats[f"{case['expect']}_right"] += ok
    return {
        "tree": str(tree or ROOT), "cases": len(items), "seconds": round(time.perf_counter() - started, 1),
        "conflicts_expected": totals["conflict"], "conflicts_found": right["conflict"],
        "warnings_expected": totals["warning"], "warnings_found": right["warning"],
        "unrelated": totals["none"], "unrelated_clean": right["none"],
        "per_class": {k: dict(v) for k, v in sorted(per_class.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, help="write the generated cases to this file")
    parser.add_argument("--evaluate", type=Path, help="run these cases through a tree's prescription check")
    parser.add_argument("--tree", type=Path, help="the tree to evaluate (default: this one)")
    parser.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = parser.parse_args()
    if args.cases:
        print(f"{write_cases(args.cases)} cases written to {args.cases}")
    if args.evaluate:
        figures = evaluate(args.evaluate, args.tree)
        text = json.dumps(figures, indent=1)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
