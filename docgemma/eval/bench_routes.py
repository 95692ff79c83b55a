"""Per-route figures of ``python -m docgemma bench --backend B``: for each route (direct, single
tool, multi-tool, error retry, image) the model calls, prompt tokens, uncached prompt tokens, decoded tokens,
the turn's time and the agent's own share of it (turn time minus model time).

* ``fake``: the golden oracle decides (a clinically meaningful model's path) and
  :class:`~docgemma.eval.metering.PrefixMeter` counts what MedGemma would be asked with the Gemma 3 tokenizer
  (free text at its cap); the time is then the agent's alone, and ``t4_estimate_s`` converts the tokens
  with first-order T4 figures (docs/design-notes.md).
* any other backend of ``config.BACKENDS`` (``transformers``, and ``llamacpp`` once registered): the model
  decides, metered with its own tokenizer (:func:`~docgemma.eval.metering.backend_meter`); a backend that
  reports its own usage is believed. A model flagged not clinically meaningful (the embedded SmolLM2)
  makes no model call on tool turns, so it is also run with that flag forced on (``forced_meaningful``),
  for real tokenizer and model figures of the model-facing path; its answers are not clinical.

Uncached prompt tokens: beyond the longest common token prefix with the previous call of the same turn
(what a prefix cache serves), modelled, unless the backend reports its cache use.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from typing import Any

from docgemma.agent.assistant import Assistant
from docgemma.agent.state import PatientRef
from docgemma.eval.golden import Session, run_session
from docgemma.eval.metering import PrefixMeter, backend_meter
from docgemma.eval.oracle import golden_assistant
from docgemma.llm.base import LLM, LLMError

#: The active patient of every route but the multi-tool one (which finds its own patient); its summary is
#: the largest of the shipped Synthea records (``budgets.largest_summary``).
PATIENT = PatientRef(id="bench-001", name="Bench Patient")
SAFETY = {"status": "success", "data": {"drug": "dofetilide", "boxed_warning": (
    "Initiate in a facility with continuous ECG monitoring and creatinine clearance for at least 3 days.")}}
#: The routes' turns, in the golden format. No tool is named: code decides each of them by rule (the tests
#: check which tools ran), so the oracle is asked only what a meaningful model would be asked.
ROUTE_TURNS: dict[str, dict[str, Any]] = {
    "direct": {"user_input": "What is hypertension?", "expected_intent": "DIRECT", "patient": True},
    "single_tool": {"user_input": "Check FDA warnings for dofetilide", "expected_intent": "TOOL_NEEDED",
                    "mock_tool_result": SAFETY, "patient": True},
    "multi_tool": {"user_input": "Find patient John Smith, check his chart, and verify metformin safety",
                   "expected_intent": "TOOL_NEEDED",
                   "mock_tool_results": [
                       {"status": "success", "data": {"matches": [{"id": "abc-123", "name": "John Smith"}]}},
                       {"status": "success", "data": {"patient": {"id": "abc-123", "name": "John Smith"},
                                                      "medications": ["metformin 500 mg twice daily"]}},
                       {"status": "success", "data": {"drug": "metformin", "boxed_warning": "Lactic acidosis."}}],
                   "patient": False},
    "error_retry": {"user_input": "Check FDA warnings for dofetilide", "expected_intent": "TOOL_NEEDED",
                    "mock_tool_results": [{"status": "error", "error_type": "timeout"}, SAFETY], "patient": True},
    "image": {"user_input": "What does this image show?", "has_image": True, "expected_intent": "DIRECT",
              "patient": True},
}
#: First-order T4 figures for a 4B model in 4-bit (prefill 1-2k tokens/s, decode 20-50 tokens/s).
T4_PREFILL_PER_S = 1500
T4_DECODE_PER_S = 35


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_routes(model: LLM | None, *, repeats: int, meaningful: bool | None = None) -> dict[str, Any]:
    """Every route ``repeats`` times (after one unrecorded warm-up run each); ``model=None`` is the
    metered oracle. Token figures are the first recorded run's; times are p50 / p95 over the runs."""
    from docgemma.eval.budgets import largest_summary

    summary = largest_summary()
    base, ctx, registry = golden_assistant(model)
    key = lambda: id(ctx.turn)  # noqa: E731 — the turn the runner is on
    meter = PrefixMeter(base.llm, turn_key=key) if model is None else backend_meter(model, key)
    assistant = Assistant(meter.observed(meaningful), registry, patient_context=lambda patient: summary)
    out: dict[str, Any] = {}
    for route, spec in ROUTE_TURNS.items():
        turn = {k: v for k, v in spec.items() if k != "patient"}
        records = []
        for i in range(repeats + 1):
            session = Session(f"{route}-{i}-{time.monotonic_ns()}", route, [dict(turn)])
            if spec["patient"]:
                assistant.set_active_patient(f"golden-bench-{session.session_id}", PATIENT)
            record = next(run_session(assistant, session, ctx, registry, "bench"))
            if i:  # the first run warms caches (drug dictionary, generators)
                records.append(record)
        first = records[0]
        overhead = [r["latency_ms"] - r["model_ms"] for r in records]
        turn_s = [r["latency_ms"] / 1000 for r in records]
        row = {
            "path": first["path"], "tools": first["tools"], "llm_calls": first["llm_calls"],
            "prompt_tokens": first["prompt_tokens"], "uncached_prompt_tokens": first["prompt_tokens"] - first["cached_tokens"],
            "decoded_tokens": first["decoded_tokens"], "calls_by_node": first["calls_by_node"],
            "turn_s_p50": round(statistics.median(turn_s), 3), "model_s_p50": round(
                statistics.median(r["model_ms"] for r in records) / 1000, 3),
            "agent_overhead_ms_p50": round(statistics.median(overhead), 2),
            "agent_overhead_ms_p95": round(_percentile(overhead, 0.95), 2), "runs": len(records),
        }
        if model is None:
            row["t4_estimate_s"] = round(row["uncached_prompt_tokens"] / T4_PREFILL_PER_S
                                         + row["decoded_tokens"] / T4_DECODE_PER_S, 1)
        out[route] = row
    return out


def backend_figures(backend: str, *, repeats: int) -> dict[str, Any]:
    """The per-route figures of ``backend`` (``fake`` = the metered oracle), keyed by a row label; a
    backend that is not available here is reported as skipped, with the reason."""
    if backend == "fake":
        return {"fake": {"label": "fake: golden oracle decides; Gemma 3 tokenizer counts (as MedGemma would be "
                                  "asked); free text counted at its token cap", "routes": run_routes(None, repeats=repeats)}}
    from docgemma.config import BACKENDS, Settings
    from docgemma.runtime import load_llm

    if backend not in set(BACKENDS):
        return {backend: {"skipped": f"backend {backend!r} is not available on this build (config.BACKENDS: "
                                     f"{', '.join(BACKENDS)})"}}
    try:
        start = time.perf_counter()
        llm = load_llm(replace(Settings(), backend=backend))
        load_s = round(time.perf_counter() - start, 1)
    except LLMError as exc:
        return {backend: {"skipped": f"could not load: {exc}"}}
    rows: dict[str, Any] = {backend: {"label": f"{backend}: {llm.name}; the model decides", "load_s": load_s,
                      "routes": run_routes(llm, repeats=repeats)}}
    if not getattr(llm, "clinically_meaningful", True):
        rows[f"{backend}, forced meaningful"] = {
            "label": f"{backend}: {llm.name} treated as clinically meaningful (token and time figures of the "
                     "model-facing path only; its answers are not clinical)",
            "routes": run_routes(llm, repeats=repeats, meaningful=True)}
    return rows


COLUMNS = ("llm_calls", "prompt_tokens", "uncached_prompt_tokens", "decoded_tokens", "turn_s_p50",
           "agent_overhead_ms_p50", "agent_overhead_ms_p95")


def markdown(figures: dict[str, Any], command: str) -> str:
    """The per-route table of every backend row."""
    lines = [f"Per-route figures (`{command}`).", ""]
    header = ["backend", "route", *COLUMNS, "t4_estimate_s"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, block in figures.items():
        if "skipped" in block:
            lines.append(f"| {name} | skipped: {block['skipped']} |" + " |" * (len(header) - 2))
            continue
        for route, row in block["routes"].items():
            cells = [name, route, *(str(row[c]) for c in COLUMNS), str(row.get("t4_estimate_s", ""))]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *(f"- **{name}**: {block.get('label') or block.get('skipped')}" for name, block in figures.items())]
    lines += ["", "Uncached prompt tokens: beyond the longest common token prefix with the turn's previous call (what a "
              "prefix cache serves; modelled unless the backend reports its own cache use). Agent overhead: turn time "
              "minus model time; t4_estimate_s: uncached / 1,500 + decoded / 35 tokens per second."]
    return "\n".join(lines) + "\n"
