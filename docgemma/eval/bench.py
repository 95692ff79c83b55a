"""Benchmarks behind ``python -m docgemma bench`` (figures, not timed tests).

* LLM calls per route (oracle model): direct, single tool, multi-tool — against the 2 / 4 / 4+N call budget.
* Deterministic overhead per turn with an instant fake model (target under 20 ms).
* JSON constraint build time vs reuse, on the embedded CPU model.
* Wall time of a single-tool turn on the embedded CPU model (the tool answers from a local stub).
* Per route and backend (:mod:`docgemma.eval.bench_routes`): calls, prompt / uncached / decoded tokens, turn time
  and the agent's own share of it; ``--save`` keeps them in ``bench/results/results_routes.{json,md}``.
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.eval.golden import run_file
from docgemma.eval.oracle import golden_assistant
from docgemma.tools.outcome import success
from docgemma.tools.registry import default_registry
from docgemma.tools.routing import Role

REGISTRY = default_registry()


def _tool(role: Role | None = None) -> str:
    """The tool playing ``role`` (the patient search when None): the routes name no tool themselves."""
    spec = REGISTRY.first(role) if role else next((s for s in REGISTRY if s.patient_search), None)
    assert spec is not None, role
    return spec.name


ROUTES = {
    "direct": {"user_input": "What is hypertension?", "expected_intent": "DIRECT", "budget": 2},
    "single_tool": {"user_input": "Check FDA warnings for dofetilide", "expected_intent": "TOOL_NEEDED",
                    "expected_tool": _tool(Role.DRUG_SAFETY), "budget": 4,
                    "mock_tool_result": {"status": "success", "data": {"boxed_warning": "x"}}},
    "multi_tool_3": {"user_input": "Find patient John Smith, check his chart, and verify metformin safety",
                     "expected_intent": "TOOL_NEEDED",
                     "expected_tools": [_tool(), _tool(Role.CHART), _tool(Role.DRUG_SAFETY)], "budget": 7,
                     "mock_tool_results": [{"status": "success", "data": {"matches": [{"id": "abc-123", "name": "John Smith"}]}},
                                           {"status": "success", "data": {"medications": ["metformin"]}},
                                           {"status": "success", "data": {"boxed_warning": "lactic acidosis"}}]},
}


def llm_calls_per_route(tmp: Path) -> dict[str, Any]:
    """Run each route through the oracle and read the calls off the golden output."""
    out: dict[str, Any] = {}
    for route, case in ROUTES.items():
        path = tmp / f"{route}.json"
        path.write_text(json.dumps({"single_turn": [{k: v for k, v in case.items() if k != "budget"}]}))
        lines = tmp / f"{route}.jsonl"
        with lines.open("w") as handle:
            run_file(path, None, handle, report=io.StringIO())
        record = json.loads(lines.read_text().splitlines()[0])
        out[route] = {"llm_calls": record["llm_calls"], "seed_budget": case["budget"], "path": record["path"]}
    return out


def deterministic_overhead(turns: int = 50) -> dict[str, float]:
    """Per-turn time of everything but the model: the oracle answers instantly. Single-tool route."""
    assistant, ctx, _ = golden_assistant()
    case = {k: v for k, v in ROUTES["single_tool"].items() if k != "budget"}
    times = []
    for i in range(turns + 1):
        ctx.turn, ctx.tool_index, ctx.mock_index = case, 0, 0
        start = time.perf_counter()
        assistant.run_turn(f"bench-{i}", str(case["user_input"]))
        if i:  # the first turn warms the drug dictionary
            times.append((time.perf_counter() - start) * 1000)
    return {"turns": turns, "p50_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2)}


def cpu_model_figures() -> dict[str, Any]:
    """Constraint build vs reuse and a single-tool turn's wall time on the embedded CPU model."""
    from docgemma.agent.schemas import intent_schema
    from docgemma.llm.transformers_backend import load_transformers_llm

    start = time.perf_counter()
    llm = load_transformers_llm()
    load_s = time.perf_counter() - start
    schema = intent_schema(default_registry().names)
    start = time.perf_counter()
    llm.constraints.matcher(schema)  # the vocabulary index, then the schema
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    llm.constraints.matcher(schema)
    reuse_s = time.perf_counter() - start
    registry = default_registry({_tool(Role.DRUG_SAFETY): lambda args, ctx: success(
        {"boxed_warning": "Initiate in a facility with continuous ECG monitoring for at least 3 days."})})
    assistant = Assistant(llm, registry)
    start = time.perf_counter()
    result = assistant.run_turn("bench-cpu", "Check FDA warnings for dofetilide")
    wall_s = time.perf_counter() - start
    assert isinstance(result, TurnResult)
    return {
        "model": llm.name, "load_s": round(load_s, 1), "generator_build_s": round(build_s, 2),
        "generator_reuse_s": round(reuse_s, 6),
        "single_tool_turn": {"wall_s": round(wall_s, 1), "path": result.path, "llm_calls": result.llm_calls,
                             "per_node_ms": {e["node"]: e["duration_ms"] for e in result.timeline}},
    }


DEFAULT_BACKENDS = ("fake", "transformers", "llamacpp")
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def save_routes(rows: dict[str, Any], command: str, directory: Path = RESULTS) -> Path:
    """Merge ``rows`` into ``results_routes.json`` (a row per backend, kept across runs) and rewrite
    ``results_routes.md`` from it. Returns the markdown path."""
    from docgemma.eval.bench_routes import markdown

    path = directory / "results_routes.json"
    saved = json.loads(path.read_text()) if path.exists() else {"commands": {}, "rows": {}}
    for name, block in rows.items():
        saved["rows"][name] = block
        saved["commands"][name] = command
    path.write_text(json.dumps(saved, indent=1) + "\n")
    commands = "; ".join(sorted(set(saved["commands"].values())))
    md = directory / "results_routes.md"
    md.write_text(markdown(saved["rows"], commands))
    return md


def main(json_output: bool = False, with_model: bool = True, backends: tuple[str, ...] = (),
         repeats: int | None = None, save: bool = False) -> int:
    """Print the figures (a table, or JSON). ``backends`` given: only their per-route figures."""
    import tempfile

    from docgemma.eval.bench_routes import backend_figures, markdown

    figures: dict[str, Any] = {}
    if not backends:
        with tempfile.TemporaryDirectory() as tmp:
            figures = {"llm_calls_per_route": llm_calls_per_route(Path(tmp)),
                       "deterministic_overhead": deterministic_overhead()}
        if with_model:
            figures["cpu_model"] = cpu_model_figures()
    rows: dict[str, Any] = {}
    for backend in backends or (DEFAULT_BACKENDS if with_model else ("fake",)):
        rows.update(backend_figures(backend, repeats=repeats or (20 if backend == "fake" else 1)))
    figures["routes"] = rows
    command = "python -m docgemma " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["bench"] else "python -m docgemma bench"
    if save:
        save_routes(rows, command)
    if json_output:
        sys.stdout.write(json.dumps(figures, indent=1) + "\n")
        return 0
    if not backends:
        for route, row in figures["llm_calls_per_route"].items():
            sys.stdout.write(f"{route:<14} LLM calls {row['llm_calls']:>2} (seed budget {row['seed_budget']})\n")
        o = figures["deterministic_overhead"]
        sys.stdout.write(f"deterministic overhead per single-tool turn: p50 {o['p50_ms']} ms, max {o['max_ms']} ms\n")
        if with_model:
            sys.stdout.write(json.dumps(figures["cpu_model"], indent=1) + "\n")
    sys.stdout.write(markdown(rows, command))
    return 0
