"""The allergy check on a product list written apart from its class table (tests/fixtures/heldout/): how many
expected conflicts need an override, cross-reactivity warnings given, unrelated drugs left clean, and strings that
are not drugs failing safe (no card, the clinician asked which medicine was meant, or a card that needs an override).

    python bench/bench_allergy_heldout.py [--label before] [--code PATH]

``--code PATH`` measures another checkout of the package (e.g. ``git worktree add /tmp/before <commit>``), so the
first pass can be reproduced. Results go to ``bench/results/results_allergy_heldout[_<label>].json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "fixtures" / "heldout"


def figures() -> dict[str, Any]:
    from docgemma.tools.catalog.prescribe_medication import prescription_check
    from docgemma.tools.write_checks import PatientFacts

    products = json.loads((DATA / "allergy_products.json").read_text())
    unresolvable = json.loads((DATA / "unresolvable_drugs.json").read_text())["strings"]

    def allergy_record(allergy: str) -> dict[str, Any]:
        return {"resourceType": "AllergyIntolerance", "code": {"text": allergy}, "criticality": "high",
                "clinicalStatus": {"coding": [{"code": "active"}]},
                "reaction": [{"manifestation": [{"text": "anaphylaxis"}]}]}

    def check(allergy: str, drug: str) -> tuple[bool, bool]:
        found = prescription_check({"medication_name": drug, "dosage": "", "frequency": ""},
                                   PatientFacts([allergy_record(allergy)], []))
        about = [w for w in found.warnings if "ALLERG" in w or "CROSS" in w or "VERIFIED" in w]
        return bool(about), any(w in about for w in found.severe)

    conflicts = [check(a, p)[1] for info in products["classes"].values()
                 for a in info["recorded_allergy_examples"] for p in info["products"]]
    cross_ok = []
    for case in products["cross_class"]:
        allergies = products["classes"][case["recorded_allergy_class"]]["recorded_allergy_examples"]
        items = case.get("products") or products["classes"][case["products_of_class"]]["products"]
        for a in allergies:
            for p in items:
                warned, severe = check(a, p)
                cross_ok.append(severe if case["severity_expected"] == "conflict" else warned)
    unrelated = [not check(a, d)[0] for cls, drugs in products["unrelated"].items()
                 for a in products["classes"][cls]["recorded_allergy_examples"] for d in drugs]
    def fails_safe(drug: str) -> bool:
        """No plain approval: no card at all (the clinician is asked which medicine was meant: issue 42), or a
        card whose allergy line needs an override."""
        found = prescription_check({"medication_name": drug, "dosage": "", "frequency": ""},
                                   PatientFacts([allergy_record("penicillin")], []))
        return bool(found.blocked) or check("penicillin", drug)[1]

    safe = [fails_safe(s) for s in unresolvable]
    return {"class_conflicts_needing_override": [sum(conflicts), len(conflicts)],
            "cross_class_expectations_met": [sum(cross_ok), len(cross_ok)],
            "unrelated_left_clean": [sum(unrelated), len(unrelated)],
            "unresolvable_failing_safe": [sum(safe), len(safe)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--label", default="")
    parser.add_argument("--code", type=Path, default=HERE.parent)
    args = parser.parse_args()
    sys.path.insert(0, str(args.code))
    commit = subprocess.run(["git", "-C", str(args.code), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    out = {"command": "python bench/bench_allergy_heldout.py" + (f" --label {args.label}" if args.label else ""),
           "commit": commit, **figures()}
    name = "results_allergy_heldout" + (f"_{args.label}" if args.label else "") + ".json"
    (HERE / "results" / name).write_text(json.dumps(out, indent=2) + "\n")
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
