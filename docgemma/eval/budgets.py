"""The per-turn budgets (docs/design-notes.md, "Budgets") checked on every golden turn, with the figures MedGemma would be asked.

The golden oracle decides (a clinically meaningful model's path) and :class:`~docgemma.eval.metering.PrefixMeter`
figures each call of the observed model with the real Gemma 3 tokenizer. Every active patient is given the largest Synthea
patient summary of ``data/synthea`` (the worst case of the shipped records), since golden runs have no
record behind them.

Budgets (fewer sequential model calls keep a turn fast; a T4 GPU sets the token limits): model calls
per turn ≤ 2 (no tool), 4 (one tool call), 4 + N (N tool calls);
a single-tool turn with an active patient ≤ 4,000 uncached prompt tokens and ≤ 300 decoded tokens.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from docgemma.agent.assistant import Assistant
from docgemma.agent.state import PatientRef
from docgemma.eval.golden import load_cases, route_of, run_session
from docgemma.eval.metering import PrefixMeter, token_ids
from docgemma.eval.oracle import golden_assistant

ROOT = Path(__file__).resolve().parents[2]
SINGLE_TOOL_UNCACHED = 4000
SINGLE_TOOL_DECODED = 300


@lru_cache(maxsize=1)
def largest_summary() -> str:
    """The longest (in Gemma tokens) patient summary of the shipped Synthea records."""
    from docgemma.ehr.load import load
    from docgemma.ehr.service import Ehr

    with tempfile.TemporaryDirectory() as tmp:
        ehr = Ehr.embedded(Path(tmp) / "record.sqlite")
        load(ehr.client, ROOT / "data" / "synthea")
        texts = [ehr.summary(p["id"]).text for p in ehr.client.search("Patient", [], limit=200)]
    return max(texts, key=lambda t: len(token_ids(t)))


def call_budget(record: dict[str, Any]) -> int:
    """Seed 002's budget for the turn: 2 without a tool, 4 with one tool call, 4 + N with N calls."""
    n = len(record["tools"])
    return 2 if n == 0 else 4 if n == 1 else 4 + n


def metered_turns(paths: Iterable[Path], summary: str | None = None, *, across_turns: bool = False
                  ) -> list[dict[str, Any]]:
    """Every turn of the case files as golden records, plus ``file``, ``active_patient``,
    ``uncached_tokens`` and ``calls`` (each call's node schema, prompt, cached and decoded tokens).
    ``across_turns``: the modelled cache also keeps the previous turn's last call (a server's cache does),
    so a session's later turns find the patient summary cached."""
    summary = largest_summary() if summary is None else summary
    return [record for path in paths for record in _metered_file(path, summary, across_turns)]


def _metered_file(path: Path, summary: str, across_turns: bool) -> list[dict[str, Any]]:
    base, ctx, registry = golden_assistant()
    current: dict[str, object] = {}
    meter = PrefixMeter(base.llm, turn_key=lambda: current["session"] if across_turns else id(ctx.turn))
    with_patient: set[int] = set()

    def context(patient: PatientRef) -> str:
        with_patient.add(id(ctx.turn))
        return summary

    assistant = Assistant(meter.observed(), registry, patient_context=context)
    records: list[dict[str, Any]] = []
    seen = 0
    for session in load_cases(path):
        current["session"] = session.session_id
        for record in run_session(assistant, session, ctx, registry, path.stem):
            record["file"] = path.name
            record["active_patient"] = id(ctx.turn) in with_patient
            record["uncached_tokens"] = record["prompt_tokens"] - record["cached_tokens"]
            record["calls"] = [{"what": c.what, "prompt": c.usage.prompt_tokens, "cached": c.usage.cached_tokens,
                                "decoded": c.usage.decoded_tokens} for c in meter.calls[seen:]]
            seen = len(meter.calls)
            records.append(record)
    return records


def violations(records: list[dict[str, Any]]) -> list[str]:
    """Every budget a turn exceeds, one line each."""
    out = []
    for r in records:
        where = f"{r['file']} {r['session_id']}: {r['user_input'][:60]!r}"
        if r["llm_calls"] > call_budget(r):
            out.append(f"{where}: {r['llm_calls']} model calls > {call_budget(r)}")
        if route_of(r) == "single tool" and r["active_patient"]:
            if r["uncached_tokens"] > SINGLE_TOOL_UNCACHED:
                out.append(f"{where}: {r['uncached_tokens']} uncached prompt tokens > {SINGLE_TOOL_UNCACHED}")
            if r["decoded_tokens"] > SINGLE_TOOL_DECODED:
                out.append(f"{where}: {r['decoded_tokens']} decoded tokens > {SINGLE_TOOL_DECODED}")
    return out


def _stats(values: list[int]) -> dict[str, float]:
    return {"mean": round(statistics.mean(values), 1), "max": max(values)} if values else {"mean": 0, "max": 0}


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per route: turns, calls, prompt / uncached / decoded tokens; the prefix share of the calls after a
    turn's first (the part a prefix cache serves); the single-tool turns with an active patient."""
    out: dict[str, Any] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(route_of(r), []).append(r)
        if route_of(r) == "single tool" and r["active_patient"]:
            groups.setdefault("single tool, active patient", []).append(r)
    for name, rows in groups.items():
        out[name] = {"turns": len(rows), **{key: _stats([r[key] for r in rows]) for key in
                                             ("llm_calls", "prompt_tokens", "uncached_tokens", "decoded_tokens")}}
    later = [c for r in records for c in r["calls"][1:]]
    prompt = sum(c["prompt"] for c in later)
    out["prefix_share_after_first_call"] = round(sum(c["cached"] for c in later) / prompt, 3) if prompt else 0.0
    out["calls_after_first"] = len(later)
    return out


def golden_paths() -> list[Path]:
    """Every golden case file."""
    return sorted((ROOT / "golden_tests").glob("*.json"))
