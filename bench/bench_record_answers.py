"""Short questions about the active patient's record, answered in one line by code, timed on the app's own
assistant (``runtime.build_assistant``: the default backend — the embedded SmolLM2 on a CPU —, the embedded
record with the demo patients, the SQLite conversation store).

    python bench/bench_record_answers.py [--backend transformers] [--reps 3]

Each question is asked after "Find patient Grace Mensah" (or the patient named) in the same conversation, as a
clinician would; the time is the whole turn as the page sees it (graph, tools, record, answer), model loading
excluded. Results go to ``bench/results/results_record_answers.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

QUESTIONS = {
    "Grace Mensah": ["any allergies?", "meds?", "last kidney function?", "vitals?", "problems?",
                     "when was she last seen?", "What allergies does she have?"],
    "Amina Okafor": ["last kidney function?", "meds?", "latest HbA1c?"],
    "Joseph Mwangi": ["latest INR?", "meds?"],
}
BUDGET_S = 3.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default=None, help="default: the app's (DOCGEMMA_BACKEND or transformers)")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    data = tempfile.mkdtemp(prefix="rules-bench-")
    os.environ["DOCGEMMA_DATA_DIR"] = data
    if args.backend:
        os.environ["DOCGEMMA_BACKEND"] = args.backend

    from docgemma.agent.events import TurnResult
    from docgemma.config import Settings
    from docgemma.runtime import build_assistant

    start = time.perf_counter()
    assistant = build_assistant(Settings.from_env())
    load_s = time.perf_counter() - start
    rows: list[dict[str, Any]] = []
    for rep in range(args.reps):
        for patient, questions in QUESTIONS.items():
            thread = f"bench-{rep}-{patient}"
            found = assistant.run_turn(thread, f"Find patient {patient}")
            assert isinstance(found, TurnResult) and found.active_patient, found
            for question in questions:
                t0 = time.perf_counter()
                result = assistant.run_turn(thread, question)
                wall = time.perf_counter() - t0
                assert isinstance(result, TurnResult)
                rows.append({"patient": patient, "question": question, "seconds": round(wall, 3),
                             "llm_calls": result.llm_calls, "tools": [t["tool"] for t in result.tools],
                             "answer": result.answer})
    by_question: dict[str, list[float]] = {}
    for row in rows:
        by_question.setdefault(f"{row['patient']}: {row['question']}", []).append(row["seconds"])
    seconds = [r["seconds"] for r in rows]
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    figures = {
        "command": "python bench/bench_record_answers.py " + " ".join(sys.argv[1:]), "commit": commit,
        "date": time.strftime("%Y-%m-%d"), "model": assistant.llm.name, "model_load_s": round(load_s, 1),
        "turns": len(rows), "median_s": round(statistics.median(seconds), 3), "max_s": round(max(seconds), 3),
        "within_budget": all(s < BUDGET_S for s in seconds), "model_calls": sum(r["llm_calls"] for r in rows),
        "per_question_median_s": {q: round(statistics.median(v), 3) for q, v in by_question.items()},
        "answers": {f"{r['patient']}: {r['question']}": r["answer"] for r in rows},
    }
    (HERE / "results" / "results_record_answers.json").write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n",
                                                      encoding="utf-8")
    lines = [
        "# Short record questions on the app's default assistant", "",
        f"Command: `{figures['command']}` (commit {commit}, {figures['date']}); model: {figures['model']} "
        f"(loaded in {figures['model_load_s']} s, not counted). {len(rows)} turns, median {figures['median_s']} s, "
        f"max {figures['max_s']} s (budget {BUDGET_S} s), model calls {figures['model_calls']}.", "",
        "| question | median s | answer |", "|---|---|---|",
    ]
    lines += [f"| {q} | {figures['per_question_median_s'][q]} | {figures['answers'][q]} |" for q in by_question]
    (HERE / "results" / "results_record_answers.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if figures["within_budget"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
