"""The learned router beside the rules, measured: on the template families held out from its training, and on the
held-out phrasing sets (written apart, not generated).

    python bench/bench_router.py [--split test] [--no-golden]

For each turn, as INTENT_CLASSIFY reads it (:func:`docgemma.agent.decision.decide`, the shipped weights):

* **classifier accuracy**: the router's most probable label is the turn's action ("DIRECT" or the first tool);
* **rule coverage / precision**: a rule decided (``rules.decide``) / its action is right;
* **sure coverage / precision**: the rule and the router agree above the threshold / the action is right
  (target 100%);
* **route and tool right, counting the top candidate**: the sure action, else the first candidate (the rule's,
  then the router's); target ≥ 97%;
* **with the plan**: the same two figures counting as right a turn that begins with the patient search (a patient
  named who is not the active one is found first) when the rules' plan goes on to the action asked for
  (``patterns.remaining_tools``); ``bench/bench_router_then.py`` checks what such turns then do in the app;
* **asked right**: of the unsure turns, the share whose buttons on the embedded default (:func:`ask.offered`, the
  candidates filled in with what the message named) include the right action; target ≥ 95%. A general answer is
  never a button (the model that asks is not fit to write one), so the share is also given over the unsure turns
  whose right action is a tool.

The corpus is generated (``docgemma/eval/router_corpus.py``, fixed seed; split by template family). The golden
sets run through the real graph in oracle mode (sessions keep their active patient) and each turn's state at
INTENT_CLASSIFY is read; their figures are first-pass figures of sets nobody tuned on. Results go to
``bench/results/results_router.json`` and ``.md``, with the command that made them.
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

from docgemma.agent import ask, decision  # noqa: E402  (the checkout's own package, after the path insert)
from docgemma.agent.patterns import remaining_tools  # noqa: E402
from docgemma.agent.state import AgentState  # noqa: E402
from docgemma.eval.golden import load_cases, run_session  # noqa: E402
from docgemma.eval.oracle import expected_tools, golden_assistant  # noqa: E402
from docgemma.eval.router_corpus import generate, load_families  # noqa: E402
from docgemma.eval.train_router import corpus_state, demo_roster  # noqa: E402
from docgemma.tools.registry import ToolRegistry, default_registry  # noqa: E402

SEARCH = next(s.name for s in default_registry() if s.patient_search)
GOLDEN_SETS = ("golden_tests/heldout_test.json", "golden_tests/clinician_phrasing.json", "bench/data/heldout_final.json")


def judged(text: str, label: str, group: str, state: AgentState, registry: ToolRegistry) -> dict[str, Any]:
    """One turn's decision, candidates and (when unsure) buttons, against the right action ``label``."""
    start = time.perf_counter()
    decided = decision.decide(state, registry)
    ms = (time.perf_counter() - start) * 1000
    top = str(decided["candidates"][0][0])
    chosen = decided["label"] if decided["sure"] else decision.candidate_labels(decided)[0]
    row: dict[str, Any] = {"input": text, "label": label, "group": group, "rule": decided["label"],
                           "classifier": top, "p": decided["candidates"][0][1], "sure": decided["sure"],
                           "chosen": chosen, "decide_ms": round(ms, 2), "buttons": [],
                           "then": remaining_tools(state, registry)[1:]}
    if not decided["sure"]:
        probe: AgentState = {**state, "route_decision": dict(decided)}  # type: ignore[typeddict-item]
        row["buttons"] = [list(b) for b in ask.offered(probe, registry)]
    return row


def corpus_rows(split: str, registry: ToolRegistry, families: Path | None = None) -> list[dict[str, Any]]:
    """The generated turns of one split's families (``families``: every turn of the families in that file)."""
    roster = demo_roster()
    turns = generate() if families is None else generate(families=load_families(families))
    return [judged(t.text, t.label, t.family, corpus_state(t, roster), registry)
            for t in turns if families is not None or t.split == split]


@contextmanager
def observed_states() -> Iterator[list[AgentState]]:
    """Every state INTENT_CLASSIFY decides on while the block runs (a button probe's come after it)."""
    seen: list[AgentState] = []
    original = decision.decide

    def watch(state: AgentState, registry: ToolRegistry, model: Any = None) -> decision.RouteDecision:
        seen.append(state)
        return original(state, registry, model)

    decision.decide = watch  # type: ignore[assignment]
    try:
        yield seen
    finally:
        decision.decide = original  # type: ignore[assignment]


def golden_rows(path: Path, registry: ToolRegistry) -> list[dict[str, Any]]:
    """A golden set's turns, each read in the state the oracle-mode graph gave INTENT_CLASSIFY."""
    assistant, ctx, graph_registry = golden_assistant(None)
    states: list[tuple[dict[str, Any], AgentState]] = []
    with observed_states() as seen:
        for session in load_cases(path):
            turns = iter(session.turns)
            for _record in run_session(assistant, session, ctx, graph_registry, path.stem):
                turn = next(turns)
                if seen:
                    states.append((turn, seen[0]))
                seen.clear()
    rows = []
    for turn, state in states:
        tools = expected_tools(turn)
        label = tools[0] if turn.get("expected_intent") == "TOOL_NEEDED" and tools else "DIRECT"
        rows.append(judged(str(turn["user_input"]), label, str(turn.get("category") or path.stem), state, registry))
    return rows


def _rate(ok: int, n: int) -> float | None:
    return round(ok / n, 4) if n else None


def _planned(row: dict[str, Any], action: str) -> bool:
    """``action`` is the label, or the patient search the rules' plan follows with the label."""
    return action == row["label"] or (action == SEARCH and row["label"] in row.get("then", []))


def _right_button(row: dict[str, Any]) -> bool:
    return any(row["label"] in (label, action) for _text, label, action in row["buttons"])


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the module docstring, overall and per action."""
    n = len(rows)
    ruled = [r for r in rows if r["rule"] is not None]
    sure = [r for r in rows if r["sure"]]
    unsure = [r for r in rows if not r["sure"]]
    tool_turns = [r for r in unsure if r["label"] != "DIRECT"]
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        by[r["label"]][0] += 1
        by[r["label"]][1] += r["sure"]
        by[r["label"]][2] += r["sure"] and r["rule"] == r["label"]
        by[r["label"]][3] += r["chosen"] == r["label"]
    latencies = sorted(r["decide_ms"] for r in rows)
    return {
        "turns": n,
        "classifier_accuracy": _rate(sum(r["classifier"] == r["label"] for r in rows), n),
        "rule_coverage": _rate(len(ruled), n), "rule_precision": _rate(sum(r["rule"] == r["label"] for r in ruled),
                                                                       len(ruled)),
        "sure_coverage": _rate(len(sure), n), "sure_precision": _rate(sum(r["rule"] == r["label"] for r in sure),
                                                                      len(sure)),
        "route_and_tool_right_top_candidate": _rate(sum(r["chosen"] == r["label"] for r in rows), n),
        "sure_precision_with_plan": _rate(sum(_planned(r, r["rule"]) for r in sure), len(sure)),
        "route_and_tool_right_with_plan": _rate(sum(_planned(r, r["chosen"]) for r in rows), n),
        "unsure_turns": len(unsure), "unsure_with_buttons": sum(bool(r["buttons"]) for r in unsure),
        "unsure_right_button": _rate(sum(_right_button(r) for r in unsure), len(unsure)),
        # A general answer is never a button (the model that asks writes none): the share over tool turns.
        "unsure_tool_turns": len(tool_turns),
        "unsure_tool_turns_right_button": _rate(sum(_right_button(r) for r in tool_turns), len(tool_turns)),
        "decide_ms_p50": latencies[len(latencies) // 2] if latencies else None,
        "decide_ms_p95": latencies[int(0.95 * len(latencies))] if latencies else None,
        "by_action": {k: {"turns": t, "sure": s, "sure_right": sr, "top_candidate_right": c}
                      for k, (t, s, sr, c) in sorted(by.items())},
        "wrong_sure": [{k: r[k] for k in ("input", "label", "rule", "p")} for r in sure if r["rule"] != r["label"]],
        "unsure_without_right_button": [{k: r[k] for k in ("input", "label", "rule", "classifier", "buttons")}
                                        for r in unsure if not _right_button(r)],
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _section(title: str, f: dict[str, Any], note: str) -> list[str]:
    lines = [f"## {title}", "", note, "",
             f"- turns: {f['turns']}; classifier accuracy {_pct(f['classifier_accuracy'])}",
             f"- rules: coverage {_pct(f['rule_coverage'])}, precision {_pct(f['rule_precision'])}",
             f"- **sure decisions** (rule and classifier agree): coverage {_pct(f['sure_coverage'])}, "
             f"precision {_pct(f['sure_precision'])}",
             f"- route and tool right, counting the top candidate: {_pct(f['route_and_tool_right_top_candidate'])}",
             f"- with the plan (the patient search, then the action asked): sure precision "
             f"{_pct(f.get('sure_precision_with_plan'))}, route and tool right "
             f"{_pct(f.get('route_and_tool_right_with_plan'))}",
             f"- unsure turns: {f['unsure_turns']} ({f['unsure_with_buttons']} with buttons); one button is the right "
             f"action on {_pct(f['unsure_right_button'])}; on the {f['unsure_tool_turns']} whose right action is a tool "
             f"(a general answer is never a button) {_pct(f['unsure_tool_turns_right_button'])}",
             f"- decision time per turn: p50 {f['decide_ms_p50']} ms, p95 {f['decide_ms_p95']} ms", "",
             "| action | turns | sure | sure and right | top candidate right |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {v['turns']} | {v['sure']} | {v['sure_right']} | {v['top_candidate_right']} |"
              for k, v in f["by_action"].items()]
    lines.append("")
    if f["wrong_sure"]:
        lines += ["Sure and wrong:", ""] + [f"- `{w['input']}` — right {w['label']}, rule {w['rule']} (p={w['p']})"
                                            for w in f["wrong_sure"]] + [""]
    misses = f["unsure_without_right_button"]
    lines += [f"Unsure with no right button ({len(misses)}; first 25):", ""]
    lines += [f"- `{m['input']}` — right {m['label']}; rule {m['rule']}, classifier {m['classifier']}; buttons "
              f"{[b[0] for b in m['buttons']]}" for m in misses[:25]]
    return [*lines, ""]


def _header(out: dict[str, Any], title: str) -> list[str]:
    return [f"# {title}", "", f"Command: `{out['command']}` (commit {out['commit']}, {out['date']})", "",
            f"Router: threshold {out['threshold']}, temperature {out['temperature']}.", ""]


def markdown(out: dict[str, Any]) -> str:
    """The figures as the committed ``.md``."""
    lines = _header(out, "Rules and learned router")
    lines += _section(f"Generated corpus, held-out {out['split']} families", out["corpus"],
                      "Template families never seen in training (split by family, fixed seed).")
    for name, f in out.get("golden", {}).items():
        lines += _section(f"`{name}` (written apart, not generated)", f,
                          "First pass: nobody tuned on this set; reported as it is.")
    return "\n".join(lines)


def _run(argv: list[str] | None) -> dict[str, Any]:
    """What every results file starts with: the command, the commit, the date and the router's settings."""
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    router = decision.shipped()
    return {"command": "python bench/bench_router.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
            "commit": commit, "date": time.strftime("%Y-%m-%d"), "threshold": router.threshold,
            "temperature": router.temperature}


def _save(stem: str, out: dict[str, Any], text: str) -> None:
    (HERE / "results" / f"{stem}.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    (HERE / "results" / f"{stem}.md").write_text(text, encoding="utf-8")


def _report(out: dict[str, Any], title: str, section: str, figures_of: dict[str, Any], note: str, stem: str,
            save: bool) -> int:
    """Write one set's figures (``--set``, ``--families``) to stdout and, with ``save``, to ``results_router_<stem>``."""
    text = "\n".join(_header(out, title) + _section(section, figures_of, note))
    if save:
        _save(f"results_router_{stem}", out, text)
    sys.stdout.write(text)
    return 0


def _one_set(path: Path, argv: list[str] | None, save: bool) -> int:
    """Figures of one set only (``--set``): for a set written last and run once, its first pass kept as it came."""
    name = str(path.resolve().relative_to(HERE.parent)) if path.resolve().is_relative_to(HERE.parent) else str(path)
    out = {**_run(argv), "golden": {name: figures(golden_rows(path, default_registry()))}}
    return _report(out, "Rules and learned router on one set", f"`{name}` (written last, run once)", out["golden"][name],
                   "First pass: written apart from the rules and the router, run once; reported as it came.", path.stem,
                   save)


def _families(path: Path, argv: list[str] | None, save: bool) -> int:
    """Figures of families written apart in a JSON file (``--families``), their turns generated like the corpus's."""
    out = {**_run(argv), "split": path.stem, "corpus": figures(corpus_rows("", default_registry(), path))}
    return _report(out, "Rules and learned router on template families written apart",
                   f"`{path.name}`: families written apart, generated like the corpus", out["corpus"],
                   "Written apart from the rules, the router and the corpus's families.", path.stem, save)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test", choices=("dev", "test"))
    parser.add_argument("--no-golden", action="store_true")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--set", type=Path, help="only this golden-format set (a set written last, run once): "
                                                  "results_router_<its name>.json/.md")
    parser.add_argument("--families", type=Path, help="template families written apart in a JSON file, generated "
                                                       "like the corpus: results_router_<its name>.json/.md")
    args = parser.parse_args(argv)
    if args.set:
        return _one_set(args.set, argv, save=not args.no_save)
    if args.families:
        return _families(args.families, argv, save=not args.no_save)
    registry = default_registry()
    out: dict[str, Any] = {**_run(argv), "split": args.split, "corpus": figures(corpus_rows(args.split, registry))}
    if not args.no_golden:
        out["golden"] = {name: figures(golden_rows(HERE.parent / name, registry)) for name in GOLDEN_SETS}
    text = markdown(out)
    if not args.no_save:
        _save("results_router" + ("" if args.split == "test" else f"_{args.split}"), out, text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
