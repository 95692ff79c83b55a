"""Time from "Run All" to the app on a Kaggle T4, estimated from the notebook's own cells. Run from the root:

    python bench/bench_kaggle_time.py [--out bench/results/results_kaggle_time.json]

Each code cell of ``kaggle_submission/docgemma_kaggle.ipynb`` is costed by what it does: the pip install, the
app cell (GPU check, model load and schema compilation, launch, one check turn), and the evaluations the notebook
runs only on request (``RUN_EVALUATIONS``): the golden suite in model mode (its turns) and the experiment (its
trials, from the suite's own plan at the notebook's LIMIT/VARIANTS). Model calls are turned into T4 seconds with
the first-order T4 rates the route bench uses (``docgemma/eval/bench_routes.py``); every figure names its source.
The time to the app is the sum over the cells before and including the app cell.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docgemma.eval.bench_routes import T4_DECODE_PER_S, T4_PREFILL_PER_S  # noqa: E402

NOTEBOOK = ROOT / "kaggle_submission" / "docgemma_kaggle.ipynb"
OUT = ROOT / "bench" / "results" / "results_kaggle_time.json"
BUDGET_S = 300.0
ROUTES = ROOT / "bench" / "results" / "results_routes.json"
CONSTRAINED = ROOT / "bench" / "results" / "results_constrained.json"
EXPERIMENT_CALLS = ROOT / "bench" / "results" / "experiments_embedded"

#: Seconds no result file here holds (no T4 on the development machine): assumptions, each with its reasoning.
#: Replace them with a T4 run's figures when one exists.
ASSUMED = {
    "project_copy_s": (10.0, "copying the attached dataset (a few MB) from /kaggle/input to /kaggle/working"),
    "pip_install_s": (120.0, "pip with -c constraints.txt over Kaggle's image: gradio, langgraph, llguidance, "
                             "bitsandbytes and version changes (transformers, accelerate) downloaded, a few hundred MB; "
                             "not measured on Kaggle"),
    "gpu_check_s": (5.0, "importing torch and querying the device"),
    "model_source_s": (2.0, "finding MedGemma under /kaggle/input or reading the HF_TOKEN secret"),
    "model_load_s": (120.0, "MedGemma 1.5 4B: ~8.6 GB of bf16 safetensors read and quantized to NF4 on the T4 "
                            "(~70 MB/s effective); not measured on a T4"),
    "app_launch_s": (15.0, "Gradio launch plus the public share tunnel"),
}


def settings(cells: list[str], full_run: bool | None = None) -> dict[str, Any]:
    """The settings cell's plain assignments (FULL_RUN, LIMIT, VARIANTS, GOLDEN_MODEL_FILE, …), evaluated as Kaggle
    would (no ``DOCGEMMA_KAGGLE_*`` variable set: ``env(name, default)`` is the default); ``full_run`` overrides
    FULL_RUN before LIMIT is derived from it."""
    found: dict[str, Any] = {}
    names = {"env": lambda name, default=None: default, "int": int}
    for node in ast.parse(cells[0]).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == "FULL_RUN" and full_run is not None:
            found[name] = full_run
            continue
        try:  # only literals and expressions over earlier settings; anything reading the environment is skipped
            found[name] = eval(compile(ast.Expression(node.value), "settings", "eval"), {"__builtins__": {}, **names},
                               dict(found))
        except (NameError, AttributeError, TypeError):
            continue
    return found


def t4_seconds(prompt_tokens: float, decoded_tokens: float) -> float:
    return prompt_tokens / T4_PREFILL_PER_S + decoded_tokens / T4_DECODE_PER_S


def golden_turn_s() -> tuple[float, str]:
    """Mean T4 seconds of one agent turn over the route bench's routes (Gemma 3 tokenizer, free text at its cap)."""
    routes = json.loads(ROUTES.read_text())["rows"]["fake"]["routes"]
    mean = statistics.mean(row["t4_estimate_s"] for row in routes.values())
    return mean, f"mean t4_estimate_s over {len(routes)} routes of {ROUTES.relative_to(ROOT)} (fake backend)"


def golden_model_cost(config: dict[str, Any]) -> dict[str, Any]:
    path = ROOT / config["GOLDEN_MODEL_FILE"]
    turns = sum(len(session["user_inputs"]) for session in json.loads(path.read_text())["sessions"])
    per_turn, source = golden_turn_s()
    return {"what": f"golden model run: {turns} turns of {config['GOLDEN_MODEL_FILE']}", "model_turns": turns,
            "seconds": round(turns * per_turn, 1), "source": source}


def experiment_cost(source: str, config: dict[str, Any]) -> dict[str, Any]:
    from docgemma.eval.experiments.runner import plan
    from docgemma.eval.experiments.suites import all_suites

    match = re.search(r'notebook\.run\("(\w+)"', source)
    if match is None:
        raise ValueError("experiment cell without a suite name")
    suite_name = match.group(1)
    variants = [v for v in str(config.get("VARIANTS", "")).split(",") if v] or None
    trials = plan(all_suites()[suite_name], config.get("LIMIT") or None, variants)
    model_trials = [(v, c) for v, c in trials if v.name != "rule"]
    calls_file = EXPERIMENT_CALLS / suite_name / "calls.jsonl"
    records = [json.loads(line) for line in calls_file.read_text().splitlines() if line.strip()]
    used = [r for r in records if r.get("uses_model")]
    calls = statistics.mean(r["llm_calls"] for r in used)
    prompt = statistics.mean(r["prompt_tokens"] for r in used)
    decoded = statistics.mean(sum(len(raw) for raw in r["raw"]) / 4 for r in used)  # ~4 characters per token
    per_trial = t4_seconds(prompt, decoded)
    return {"what": f"experiment {suite_name}: {len(trials)} trials, {len(model_trials)} with the model (LIMIT "
                    f"{config.get('LIMIT')}, VARIANTS {config.get('VARIANTS')!r})",
            "model_trials": len(model_trials), "model_calls": round(len(model_trials) * calls),
            "seconds": round(len(model_trials) * per_trial, 1),
            "source": f"per trial {calls:.2f} calls, {prompt:.0f} prompt tokens (SmolLM2 tokenizer), ~{decoded:.0f} "
                      f"decoded tokens: means of {calls_file.relative_to(ROOT)}; {T4_PREFILL_PER_S} prefill / "
                      f"{T4_DECODE_PER_S} decode tokens/s (docgemma/eval/bench_routes.py)"}


def schema_compile_s() -> tuple[float, str]:
    (row,) = [r for r in json.loads(CONSTRAINED.read_text())["results"] if r["backend"] == "llguidance"]
    seconds = row["setup"]["seconds"] + sum(s["build_s"] for s in row["schemas"])
    return seconds, (f"llguidance vocabulary setup + every schema's build on Gemma's vocabulary, "
                     f"{CONSTRAINED.relative_to(ROOT)} (CPU here; the T4 machine's CPU does the same work)")


def assumed(key: str, what: str) -> dict[str, Any]:
    seconds, why = ASSUMED[key]
    return {"what": what, "seconds": seconds, "source": f"assumption: {why}"}


APP_PARTS = ("model_source_s", "gpu_check_s", "model_load_s", "app_launch_s")


def app_cost() -> dict[str, Any]:
    """The app cell: GPU check, MedGemma's load and the JSON constraints, the launch, one check turn."""
    parts = [assumed(key, "")["seconds"] for key in APP_PARTS]
    compile_s, compile_source = schema_compile_s()
    turn_s, turn_source = golden_turn_s()
    sources = "; ".join(f"{key}: {ASSUMED[key][0]:.0f} s, assumption: {ASSUMED[key][1]}"
                        for key in APP_PARTS)
    return {"what": "the app: GPU check, load MedGemma, compile the JSON constraints, launch, one check turn",
            "seconds": round(sum(parts) + compile_s + turn_s, 1), "app": True,
            "source": f"{sources}; + {compile_s:.1f} s: {compile_source}; + {turn_s:.1f} s for the check turn: "
                      f"{turn_source}"}


def evaluations_cost(source: str, config: dict[str, Any]) -> dict[str, Any]:
    """The evaluations cell: golden files in oracle mode (CPU, not estimated), the golden file in model mode and
    the experiment; run only with RUN_EVALUATIONS (then off the app's model: second GPU, or the app stopped)."""
    golden, experiment = golden_model_cost(config), experiment_cost(source, config)
    on = bool(config.get("RUN_EVALUATIONS"))
    model_s = round(golden["seconds"] + experiment["seconds"], 1)
    return {"what": "evaluations" + ("" if on else " (off: RUN_EVALUATIONS = False)"), "seconds": model_s if on else 0.0,
            "evaluations": {"model_s": model_s, "model_calls": golden["model_turns"] + experiment["model_calls"],
                            "parts": [golden, experiment],
                            "oracle": "golden files in oracle mode: no model call, CPU; not estimated"}}


def cell_cost(source: str, config: dict[str, Any]) -> dict[str, Any]:
    """What one code cell costs on a T4, by what it runs."""
    if "launch_in_background(" in source:
        return app_cost()
    if "notebook.run(" in source:
        return evaluations_cost(source, config)
    if "scripts/walkthrough.py" in source:
        # Off unless RECORD_WALKTHROUGH: then it loads its own MedGemma and records the scenes (not estimated).
        on = bool(config.get("RECORD_WALKTHROUGH"))
        return {"what": "the walkthrough on MedGemma" + ("" if on else " (off: RECORD_WALKTHROUGH = False)"),
                "seconds": None if on else 0.0, "source": "not estimated" if on else "skipped by default"}
    if '"pip", "install"' in source:
        return assumed("pip_install_s", "pip install with the tested versions")
    if "copytree" in source:
        return assumed("project_copy_s", "the project")
    if source.lstrip().startswith("# Step 1"):
        return {"what": "settings", "seconds": 0.0, "source": "assignments only"}
    raise ValueError(f"a notebook cell this estimate does not know: {source.splitlines()[0]!r}")


def estimate(notebook: Path = NOTEBOOK, full_run: bool | None = None) -> dict[str, Any]:
    """The notebook's cells in order, each costed, and the seconds from Run All to the app."""
    cells = ["".join(c["source"]) for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    config = settings(cells, full_run)
    costed = [cell_cost(source, config) for source in cells]
    app_index = next(i for i, c in enumerate(costed) if c.get("app"))
    before = costed[: app_index + 1]
    unknown = [c["what"] for c in before if c["seconds"] is None]
    if unknown:
        raise ValueError(f"cells before the app that cannot be estimated: {unknown}")
    evaluations = next((c["evaluations"] for c in costed if "evaluations" in c), None)
    return {
        "settings": {k: config.get(k) for k in ("FULL_RUN", "LIMIT", "VARIANTS", "GOLDEN_MODEL_FILE",
                                                "RUN_EVALUATIONS")},
        "app_cell": app_index,
        "model_calls_before_app": sum(c.get("evaluations", {}).get("model_calls", 0) for c in before),
        "time_to_app_s": round(sum(c["seconds"] for c in before), 1),
        "model_time_after_app_s": round(sum(c["seconds"] or 0.0 for c in costed[app_index + 1:]), 1),
        "evaluations": evaluations,
        "cells": costed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    default = estimate()
    full = estimate(full_run=True)
    result = {
        "command": "python bench/bench_kaggle_time.py",
        "notebook": str(NOTEBOOK.relative_to(ROOT)),
        "budget_s": BUDGET_S,
        "rates": {"t4_prefill_tokens_per_s": T4_PREFILL_PER_S, "t4_decode_tokens_per_s": T4_DECODE_PER_S,
                  "source": "docgemma/eval/bench_routes.py: first-order T4 figures for a 4B model in 4-bit "
                            "(prefill 1-2k tokens/s, decode 20-50 tokens/s); not measured on a T4"},
        "default": default,
        "evaluations": default["evaluations"],
        "full_run": {k: full[k] for k in ("settings", "time_to_app_s", "evaluations")},
        "note": "time_to_app_s: Run All to the app's login line and its check turn; model_time_after_app_s: what "
                "Run All then spends on the model (0: the evaluations run only with RUN_EVALUATIONS, on the second "
                "GPU or after the app is stopped); evaluations.model_s: their model time when asked for",
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"time to the app: {default['time_to_app_s']:.0f} s (budget {BUDGET_S:.0f} s); evaluations on request: "
          f"{default['evaluations']['model_s']:.0f} s, {full['evaluations']['model_s']:.0f} s with FULL_RUN")
    return 0 if default["time_to_app_s"] < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
