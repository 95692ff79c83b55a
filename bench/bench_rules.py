"""The rule layer measured on a golden file: how often code decides the route (coverage) and how often its
decision is right (precision); with ``--backend``, the route and tool end to end on a model.

    python bench/bench_rules.py golden_tests/heldout_dev.json [--split dev] [--label baseline]
                                [--backend transformers] [--limit N]

* **Rules** (always; no model): the file runs through the real graph in oracle mode, and every call of
  :func:`docgemma.agent.rules.decide` made by INTENT_CLASSIFY is observed. A turn is *covered* when a rule
  decided it; a covered turn is *right* when the rule's intent and first tool are the expected ones and the
  turn called no write tool the case does not expect ("a write only where the message asks for one").
  Coverage = covered / turns; precision = right / covered; both overall, per category (the turn's
  ``category``, else its ``description`` up to the first colon), per expected tool and per rule family.
* **End to end** (``--backend B``): the same file on model backend B (the embedded SmolLM2 with
  ``transformers`` on a CPU). A turn is right when its intent and its first tool are the expected ones.
  Latency per turn (p50/p95) and model calls are reported beside it.

Results go to ``bench/results/results_rules_<split>[_<label>].json`` and ``.md``, with the command that made them.
The test split is for judging, never for tuning: run it only to report.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from docgemma.agent import rules  # noqa: E402  (the checkout's own package, after the path insert)
from docgemma.eval.golden import load_cases, run_session  # noqa: E402
from docgemma.eval.oracle import expected_tools, golden_assistant  # noqa: E402
from docgemma.llm.base import LLM  # noqa: E402
from docgemma.tools.registry import default_registry  # noqa: E402

WRITES = frozenset(s.name for s in default_registry() if s.writes)


def category(turn: dict[str, Any]) -> str:
    """The turn's category: its own field, else its description up to the first colon."""
    if turn.get("category"):
        return str(turn["category"])
    description = str(turn.get("description", "")).strip()
    return description.split(":", 1)[0].strip() if ":" in description else (description or "uncategorised")


def expected_first(turn: dict[str, Any]) -> str | None:
    tools = expected_tools(turn)
    return tools[0] if tools else None


def family(decision: Any) -> str:
    """The rule family behind a decision (its ``rule`` field; older code had none: its reason)."""
    return str(getattr(decision, "rule", "") or decision.reason)


@contextmanager
def observed_rules() -> Iterator[list[Any]]:
    """Every :func:`rules.decide` result while the block runs (INTENT_CLASSIFY's comes first in a turn)."""
    seen: list[Any] = []
    original = rules.decide

    def watch(state: Any, tools: Any) -> Any:
        decision = original(state, tools)
        seen.append(decision)
        return decision

    rules.decide = watch  # type: ignore[assignment]
    try:
        yield seen
    finally:
        rules.decide = original  # type: ignore[assignment]


def run_turns(path: Path, llm: LLM | None, limit: int | None) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """(turn, record, the rule decision of INTENT_CLASSIFY or None) for each turn of the file."""
    assistant, ctx, registry = golden_assistant(llm)
    out: list[tuple[dict[str, Any], dict[str, Any], Any]] = []
    with observed_rules() as seen:
        for session in load_cases(path):
            turns = iter(session.turns)
            for record in run_session(assistant, session, ctx, registry, path.stem):
                turn = next(turns)
                decided = seen[0] if seen and record["decided_by_rule"]["intent_classify"] else None
                seen.clear()
                out.append((turn, record, decided))
                if limit and len(out) >= limit:
                    return out
    return out


def _rate(ok: int, n: int) -> float | None:
    return round(ok / n, 4) if n else None


def rule_figures(rows: list[tuple[dict[str, Any], dict[str, Any], Any]]) -> dict[str, Any]:
    """Coverage and precision of the rule layer (see the module docstring)."""
    groups: dict[str, dict[str, list[int]]] = {"category": defaultdict(lambda: [0, 0, 0]),
                                               "tool": defaultdict(lambda: [0, 0, 0]),
                                               "family": defaultdict(lambda: [0, 0, 0])}
    wrong: list[dict[str, Any]] = []
    left: list[dict[str, Any]] = []
    unasked_writes = 0
    covered = right = 0
    for turn, record, decision in rows:
        want_tool = expected_first(turn)
        keys = {"category": category(turn), "tool": want_tool or "DIRECT"}
        for kind, key in keys.items():
            groups[kind][key][0] += 1
        if decision is None:
            left.append({"input": turn["user_input"], "category": keys["category"],
                         "expected": f"{turn.get('expected_intent')} {want_tool}"})
            continue
        covered += 1
        extra_writes = [t for t in record["tools"] if t in WRITES and t not in expected_tools(turn)]
        unasked_writes += bool(extra_writes)
        ok = (decision.intent == turn.get("expected_intent") and decision.tool == want_tool and not extra_writes)
        right += ok
        groups["family"][family(decision)][0] += 1  # a family's turns are the turns it decided
        for kind, key in (*keys.items(), ("family", family(decision))):
            groups[kind][key][1] += 1
            groups[kind][key][2] += ok
        if not ok:
            wrong.append({"input": turn["user_input"], "category": keys["category"],
                          "expected": f"{turn.get('expected_intent')} {want_tool}",
                          "decided": f"{decision.intent} {decision.tool}", "rule": family(decision),
                          "reason": decision.reason, "unasked_writes": extra_writes})
    table = {
        kind: {key: {"turns": n, "covered": c, "right": r, "coverage": _rate(c, n), "precision": _rate(r, c)}
               for key, (n, c, r) in sorted(values.items())}
        for kind, values in groups.items()
    }
    for values in table["family"].values():  # a family's turns are the turns it decided
        values["coverage"] = None
    return {"turns": len(rows), "covered": covered, "right": right, "coverage": _rate(covered, len(rows)),
            "precision": _rate(right, covered), "unasked_writes": unasked_writes, "by": table,
            "wrong": wrong, "left_to_the_model": left}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) if ordered else 0.0


def backend_figures(rows: list[tuple[dict[str, Any], dict[str, Any], Any]]) -> dict[str, Any]:
    """Route (intent) and first tool against the expectation, end to end on a model."""
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[dict[str, Any]] = []
    right = 0
    for turn, record, _decision in rows:
        want_tool = expected_first(turn)
        ok = record["intent"] == turn.get("expected_intent") and record["tool"] == want_tool
        right += ok
        by[category(turn)][0] += 1
        by[category(turn)][1] += ok
        if not ok:
            misses.append({"input": turn["user_input"], "expected": f"{turn.get('expected_intent')} {want_tool}",
                           "got": f"{record['intent']} {record['tool']}", "llm_calls": record["llm_calls"]})
    latencies = [r["latency_ms"] for _t, r, _d in rows]
    return {
        "turns": len(rows), "route_and_tool_right": right, "accuracy": _rate(right, len(rows)),
        "decided_by_rule": sum(r["decided_by_rule"]["intent_classify"] for _t, r, _d in rows),
        "model_calls": sum(r["llm_calls"] for _t, r, _d in rows),
        "turns_with_model_calls": sum(bool(r["llm_calls"]) for _t, r, _d in rows),
        "latency_ms_p50": _percentile(latencies, 0.5), "latency_ms_p95": _percentile(latencies, 0.95),
        "latency_ms_max": round(max(latencies, default=0.0), 1),
        "by_category": {k: {"turns": n, "right": ok, "accuracy": _rate(ok, n)} for k, (n, ok) in sorted(by.items())},
        "misses": misses,
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def markdown(figures: dict[str, Any]) -> str:
    """The figures as the committed ``.md``."""
    r = figures["rules"]
    lines = [
        f"# Rule layer on `{figures['file']}` ({figures['split']}{', ' + figures['label'] if figures['label'] else ''})",
        "",
        f"Command: `{figures['command']}` (commit {figures['commit']}, {figures['date']})",
        "",
        f"**Rules (oracle mode, no model):** {r['turns']} turns; a rule decided {r['covered']} "
        f"(coverage {_pct(r['coverage'])}), {r['right']} of them right (precision {_pct(r['precision'])}); "
        f"writes the message did not ask for: {r['unasked_writes']}.",
        "",
    ]
    titles = {"category": "category", "tool": "expected first tool", "family": "rule family (turns it decided)"}
    for kind, title in titles.items():
        lines += [f"| {title} | turns | decided by rule | right | coverage | precision |", "|---|---|---|---|---|---|"]
        for key, v in r["by"][kind].items():
            lines.append(f"| {key} | {v['turns']} | {v['covered']} | {v['right']} | {_pct(v['coverage'])} | "
                         f"{_pct(v['precision'])} |")
        lines.append("")
    if r["wrong"]:
        lines += ["Wrong rule decisions:", ""]
        lines += [f"- `{w['input']}` — expected {w['expected']}, rule ({w['rule']}) decided {w['decided']}"
                  + (f"; unasked write {w['unasked_writes']}" if w["unasked_writes"] else "") for w in r["wrong"]]
        lines.append("")
    lines += [f"Left to the model ({len(r['left_to_the_model'])}):", ""]
    lines += [f"- `{t['input']}` — expected {t['expected']}" for t in r["left_to_the_model"]]
    lines.append("")
    for name, b in figures.get("backends", {}).items():
        lines += [
            f"**End to end on `{name}` ({b['model']}):** route and first tool right on {b['route_and_tool_right']} of "
            f"{b['turns']} turns ({_pct(b['accuracy'])}); decided by rule {b['decided_by_rule']}; model calls "
            f"{b['model_calls']} over {b['turns_with_model_calls']} turns; latency per turn p50 "
            f"{b['latency_ms_p50']:.0f} ms, p95 {b['latency_ms_p95']:.0f} ms, max {b['latency_ms_max']:.0f} ms.",
            "",
            "| category | turns | right | accuracy |", "|---|---|---|---|",
        ]
        lines += [f"| {k} | {v['turns']} | {v['right']} | {_pct(v['accuracy'])} |" for k, v in b["by_category"].items()]
        lines.append("")
        if b["misses"]:
            lines += ["Misses:", ""]
            lines += [f"- `{m['input']}` — expected {m['expected']}, got {m['got']} ({m['llm_calls']} model calls)"
                      for m in b["misses"]]
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--split", help="name in the results file (default: the file's stem)")
    parser.add_argument("--label", default="", help="suffix of the results file, e.g. baseline")
    parser.add_argument("--backend", action="append", default=[], help="also run end to end on this backend")
    parser.add_argument("--limit", type=int, help="only the first N turns (a quick look; not for reporting)")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    split = args.split or args.file.stem
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "docgemma"],
                           capture_output=True, text=True, check=False).stdout.strip()
    figures: dict[str, Any] = {
        "file": str(args.file), "split": split, "label": args.label,
        "command": "python bench/bench_rules.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        "commit": commit + (" + uncommitted changes" if dirty else ""), "date": time.strftime("%Y-%m-%d"),
        "rules": rule_figures(run_turns(args.file, None, args.limit)),
    }
    if args.backend:
        from docgemma.config import Settings
        from docgemma.runtime import load_llm

        figures["backends"] = {}
        for backend in args.backend:
            llm = load_llm(Settings(**{**Settings.from_env().__dict__, "backend": backend}))
            start = time.perf_counter()
            rows = run_turns(args.file, llm, args.limit)
            result = backend_figures(rows)
            result["model"] = llm.name
            result["wall_s"] = round(time.perf_counter() - start, 1)
            figures["backends"][backend] = result
    text = markdown(figures)
    if not args.no_save:
        stem = f"results_rules_{split}" + (f"_{args.label}" if args.label else "")
        (HERE / "results" / f"{stem}.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        (HERE / "results" / f"{stem}.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
