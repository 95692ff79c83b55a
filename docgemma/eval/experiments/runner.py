"""Run a suite: every (variant, case) trial once, one JSON line each, resumable."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from docgemma.eval.experiments.core import Case, Probe, Suite, Unusable, Variant
from docgemma.llm.base import LLM


def done_keys(path: Path) -> set[tuple[str, str]]:
    """(variant, case) pairs already recorded in ``path`` (a resumed run skips them)."""
    if not path.exists():
        return set()
    keys = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            keys.add((record["variant"], record["case"]))
    return keys


def run_trial(suite: Suite, variant: Variant, case: Case, llm: LLM | None, command: str = "") -> dict[str, Any]:
    """One trial, timed; an output that does not validate is recorded as a parse error (scored wrong)."""
    probe = Probe(llm) if (variant.uses_model and llm is not None) else None
    start = time.perf_counter()
    try:
        scored = variant.trial(probe, case)
        parse_error = bool(scored.pop("parse_error", False))
    except Unusable as exc:
        scored, parse_error = {"output": exc.raw[:500], "correct": False}, True
    elapsed = time.perf_counter() - start
    return {
        "suite": suite.name, "variant": variant.name, "case": case["id"], "uses_model": variant.uses_model,
        "model": llm.name if probe is not None and llm is not None else "rules", "command": command,
        "llm_calls": probe.calls if probe else 0, "prompt_tokens": probe.prompt_tokens if probe else 0,
        "latency_s": round(elapsed, 4), "parse_error": parse_error,
        **({"category": case["category"]} if "category" in case else {}), **scored,
        "correct": bool(scored["correct"]), "raw": probe.outputs if probe else [],
    }


def plan(suite: Suite, limit: int | None, variants: Iterable[str] | None = None) -> list[tuple[Variant, Case]]:
    """The trials of a run: the first ``limit`` cases of every (selected) variant."""
    wanted = set(variants) if variants else None
    unknown = (wanted or set()) - {v.name for v in suite.variants}
    if unknown:
        raise ValueError(f"{suite.name} has no variant(s) {', '.join(sorted(unknown))}")
    cases = suite.cases()[:limit] if limit else suite.cases()
    return [(v, c) for v in suite.variants if wanted is None or v.name in wanted for c in cases]


def run_suite(suite: Suite, llm: LLM | None, jsonl: Path, *, limit: int | None = None,
              variants: Iterable[str] | None = None, progress: bool = True, command: str = "") -> Iterator[dict[str, Any]]:
    """Run the trials not yet in ``jsonl``, appending each record as it completes; yields the new records.
    ``llm=None`` runs only the rule variants."""
    skip = done_keys(jsonl)
    todo = [(v, c) for v, c in plan(suite, limit, variants)
            if (v.name, c["id"]) not in skip and (v.uses_model is False or llm is not None)]
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    with jsonl.open("a", encoding="utf-8") as out:
        for variant, case in _progress(todo, suite.name, progress):
            record = run_trial(suite, variant, case, llm, command)
            out.write(json.dumps(record, default=str) + "\n")
            out.flush()
            yield record


def _progress(items: list[tuple[Variant, Case]], name: str, enabled: bool) -> Iterable[tuple[Variant, Case]]:
    if not enabled:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:  # a progress bar is a convenience: without tqdm the run is simply silent
        return items
    return tqdm(items, desc=name, unit="call")


def load_records(jsonl: Path) -> list[dict[str, Any]]:
    """Every record of a run."""
    return [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
