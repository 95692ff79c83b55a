"""Figures that hold (issue 27): each figure the README and the writeup state is read from the file in
``bench/results/`` that a command in the repo wrote (``bench/README.md`` names the command), formatted as the
document writes it, and must stand in the document exactly so. A new run of a bench that moves a figure fails
here until the document says what the file says; a figure nobody can rerun has no place in the documents.

Each entry: the document, the sentence as it stands with ``{}`` where the figures go, the results file, and one
reader per figure (a JSON path, or a function of the whole file for a figure derived from several values)."""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
#: ``scripts/figures.py --check`` points this at a rerun's results (its documents stay this tree's).
RERUN = os.environ.get("DOCGEMMA_FIGURES_RESULTS", "")
RESULTS = Path(RERUN) if RERUN else ROOT / "bench" / "results"
README = "README.md"
WRITEUP = "kaggle_submission/writeup.md"
#: Where the README's long sections went (issue 47: a README read in five minutes).
DECISIONS = "docs/decisions.md"
EVIDENCE = "docs/evidence.md"
SAFETY = "docs/safety-checks.md"
RUNNING = "docs/running.md"
RECORD = "docs/record.md"
DEPLOYMENT = "docs/deployment.md"
SETTINGS = "docs/settings.md"
TOOLS = "docs/tools.md"
MOVED = [DECISIONS, EVIDENCE, SAFETY, RUNNING, RECORD, DEPLOYMENT, SETTINGS, TOOLS]
Reader = tuple[Any, ...] | Callable[[Any], Any]


def whole(value: Any) -> str:
    """An integer with thousands separators: 20100 → "20,100"; 255.6 → "256"."""
    return f"{round(value):,}"


def one(value: Any) -> str:
    """One decimal: 52.6 → "52.6"."""
    return f"{value:.1f}"


def two(value: Any) -> str:
    """Two decimals: 1.013 → "1.01"."""
    return f"{value:.2f}"


def percent(value: Any) -> str:
    """A share as a percentage with one decimal, a whole one without: 0.888 → "88.8", 1.0 → "100"."""
    return f"{value * 100:.1f}".removesuffix(".0")


def plain(value: Any) -> str:
    return str(value)


@dataclass(frozen=True)
class Figure:
    doc: str
    text: str
    results: str
    readers: tuple[Reader, ...]
    formats: tuple[Callable[[Any], str], ...]
    #: A time on this machine (moves from run to run on the same code): checked against the committed results file,
    #: never against a rerun's (``scripts/figures.py --check``).
    clock: bool = False

    def values(self, results: Path = RESULTS) -> list[str]:
        data = _read(results / self.results)
        shown = []
        for reader, fmt in zip(self.readers, self.formats, strict=True):
            value = reader(data) if callable(reader) else _at(data, reader)
            shown.append(fmt(value))
        return shown


def _read(path: Path) -> Any:
    """A results file: JSON, JSON lines (a list), or the text a command printed (``golden … > after.txt``)."""
    text = path.read_text()
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return text


def _golden_tool(text: str, file: str) -> tuple[int, int]:
    """Correct and total of the ``tool`` row of one golden file's accuracy table in a printed golden run."""
    section = text.split(f"{file} (", 1)[1]
    found = re.search(r"^tool\s+(\d+)\s+(\d+)", section, re.MULTILINE)
    assert found, file
    return int(found.group(1)), int(found.group(2))


def _by_rule(turn: dict[str, Any]) -> bool:
    return any((turn.get("decided_by_rule") or {}).values())


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _ehr_p50(data: Any) -> list[float]:
    return [s["p50_ms"] for s in data["search_over_http"].values()]


def _ehr_p95(data: Any) -> list[float]:
    return [s["p95_ms"] for s in data["search_over_http"].values()]


def _decide_ms(data: Any) -> list[float]:
    """The decision's p50 time on every set the router bench ran (the generated families and each golden file)."""
    return [data["corpus"]["decide_ms_p50"], *(g["decide_ms_p50"] for g in data["golden"].values())]


def _shipped_routes(data: Any) -> list[dict[str, Any]]:
    return list(data["rows"]["transformers"]["routes"].values())


_AGENT = "results_agent.json"
_ROUTES = "results_routes.json"
_FORCED_T, _FORCED_L = "transformers, forced meaningful", "llamacpp, forced meaningful"
_AFTER = "after (shared prefix first, no brief_summary)"
_BEFORE = "before (1cb9e14: instructions first)"
_ACTIVE = "single tool, active patient"
#: ``python -m docgemma golden golden_tests/clinical_sessions.json > bench/results/golden_oracle/clinical_sessions.txt``
_GOLDEN = "golden_oracle/clinical_sessions.txt"


def _route_row(name: str, route: str) -> Figure:
    """A row of the README's tokens-per-route table (the golden oracle metered as MedGemma would be asked)."""
    label, budget = {"direct": ("direct", 2), "single_tool": ("single tool, active patient", 4),
                     "multi_tool": ("three tools", 7), "error_retry": ("error then retry", 6), "image": ("image", 2)}[route]
    row: tuple[str, ...] = ("rows", name, "routes", route)
    before: tuple[str, ...] = ("rows", f"{name}, before (1cb9e14)", "routes", route)
    # The budget is the design's (``eval/budgets.py``), not a measurement: it stands in the text.
    return Figure(EVIDENCE, f"| {label} | {{}} ({budget}) | {{}} | {{}} ({{}}) | {{}} | {{}} / {{}} ms |", _ROUTES,
                  ((*row, "llm_calls"), (*row, "prompt_tokens"),
                   (*row, "uncached_prompt_tokens"), (*before, "uncached_prompt_tokens"), (*row, "decoded_tokens"),
                   (*row, "agent_overhead_ms_p50"), (*row, "agent_overhead_ms_p95")),
                  (plain, whole, whole, whole, plain, whole, whole))


def _forced_row(label: str, route: str) -> Figure:
    t: tuple[str, ...] = ("rows", _FORCED_T, "routes", route)
    q: tuple[str, ...] = ("rows", _FORCED_L, "routes", route)
    return Figure(EVIDENCE, f"| {label} | {{}} | {{}} / {{}} | {{}} / {{}} | {{}} s | {{}} s |", _ROUTES,
                  ((*t, "llm_calls"), (*t, "uncached_prompt_tokens"), (*t, "prompt_tokens"), (*t, "decoded_tokens"),
                   (*q, "decoded_tokens"), (*t, "turn_s_p50"), (*q, "turn_s_p50")),
                  (plain, whole, whole, plain, plain, lambda v: whole(v) if v >= 10 else one(v),
                   lambda v: whole(v) if v >= 10 else one(v)))


def _rules_row(split: str, file: str) -> list[Figure]:
    first = f"results_rules_{split}_firstpass.json" if split != "dev" else "results_rules_dev_baseline.json"
    return [
        Figure(DECISIONS, f"| {split} ({{}} turns, `{file}`) | {{}} % / {{}} %", first,
               (("rules", "turns"), ("rules", "coverage"), ("rules", "precision")), (plain, percent, percent)),
        Figure(DECISIONS, "| {} % / {} % | {}/{} ({} %) |", f"results_rules_{split}.json",
               (("rules", "coverage"), ("rules", "precision"), ("backends", "transformers", "route_and_tool_right"),
                ("backends", "transformers", "turns"), ("backends", "transformers", "accuracy")),
               (percent, percent, plain, plain, percent)),
    ] + ([] if split == "dev" else [
        Figure(DECISIONS, "% ({} wrong) | {}/{} ({} %) |", first,
               (lambda d: d["rules"]["covered"] - d["rules"]["right"], ("backends", "transformers", "route_and_tool_right"),
                ("backends", "transformers", "turns"), ("backends", "transformers", "accuracy")),
               (plain, plain, plain, percent)),
    ])


def _golden_call(route: str, index: int) -> Callable[[str], Any]:
    """Reads one route's mean (0) or max (1) from a printed golden run."""
    return lambda text: _calls(text)[route][index]


def _router_row(label: str, *path: str) -> Figure:
    """One row of the README's router table (``python bench/bench_router.py``)."""
    keys = ("classifier_accuracy", "rule_coverage", "rule_precision", "sure_coverage", "sure_precision",
            "route_and_tool_right_top_candidate", "unsure_tool_turns_right_button")
    return Figure(DECISIONS, f"| {label} ({{}}) | {{}} % | {{}} % / {{}} % | {{}} % / {{}} % | {{}} % | {{}} % (of {{}}) |",
                  "results_router.json", ((*path, "turns"), *((*path, k) for k in keys), (*path, "unsure_tool_turns")),
                  (plain, *(percent,) * len(keys), plain))


def _families_row(label: str, results: str) -> Figure:
    """One row of the README's table of template families written apart (``bench_router.py --families``)."""
    keys = ("classifier_accuracy", "rule_coverage", "rule_precision", "sure_coverage", "sure_precision",
            "route_and_tool_right_top_candidate", "unsure_tool_turns_right_button")
    return Figure(DECISIONS, f"| {label} | {{}} | {{}} % | {{}} % / {{}} % | {{}} % / {{}} % | {{}} % | {{}} % (of {{}}) |",
                  results, (("corpus", "turns"), *(("corpus", k) for k in keys), ("corpus", "unsure_tool_turns")),
                  (plain, *(percent,) * len(keys), plain))


def _then_row(label: str, results: str) -> Figure:
    """One row of the README's table of what sure turns that begin with the search went on to do."""
    return Figure(DECISIONS, f"| {label} | {{}} | {{}} | {{}} | {{}} |", results,
                  (("turns",), ("outcomes", "then the action"), ("outcomes", "asked which patient"), ("outcomes", "stopped")),
                  (plain,) * 4)


def _plan_row(label: str, results: str) -> Figure:
    """One row of the README's table counting the rules' plan (the patient search, then the action asked)."""
    return Figure(DECISIONS, f"| {label} | {{}} % | {{}} % |", results,
                  (("corpus", "sure_precision_with_plan"), ("corpus", "route_and_tool_right_with_plan")), (percent, percent))


def _of(results: str, key: str) -> Callable[[Any], Any]:
    """A corpus figure of another results file (a sentence that compares two sets)."""
    return lambda _d: json.loads((RESULTS / results).read_text())["corpus"][key]


def _sure_turns(results: str) -> Callable[[Any], int]:
    return lambda _d: sum(a["sure"] for a in json.loads((RESULTS / results).read_text())["corpus"]["by_action"].values())


def _by_behaviour(results: str, then: str) -> Callable[[Any], float]:
    """Sure decisions right counted by what the turn did: a wrong first tool that is the patient search, followed by
    the action asked or by asking which patient, counts as right (``bench/bench_router_then.py``)."""
    def share(_d: Any) -> float:
        corpus = json.loads((RESULTS / results).read_text())["corpus"]
        outcomes = json.loads((RESULTS / then).read_text())["outcomes"]
        sure = sum(a["sure"] for a in corpus["by_action"].values())
        wrong = len(corpus["wrong_sure"]) - outcomes.get("then the action", 0) - outcomes.get("asked which patient", 0)
        return (sure - wrong) / sure
    return share


def _thousands(value: Any) -> str:
    return f"{value:,}"


def _empty_cache_run(data: Any) -> dict[str, Any]:
    return next(run for run in reversed(data["runs"]) if run["label"] == "fresh-clone-empty-pip-cache")


def _phase_min(name: str) -> Callable[[Any], float]:
    return lambda data: _empty_cache_run(data)["phases_s"][name] / 60


def _first_passes(key: str) -> list[float]:
    """One corpus figure of each sealed first pass of the sets written apart (v2–v10), run once each."""
    return [json.loads((RESULTS / f"results_router_heldout_v{v}_first_pass.json").read_text())["corpus"][key]
            for v in range(2, 11)]


def _first_pass_row(v: int) -> Figure:
    """One row of the writeup's table of sealed first passes (``bench_router.py --families``, run once each): the
    plan column is "—" on the sets measured before the plan was scored."""
    def plan(d: Any) -> str:
        share = d["corpus"].get("sure_precision_with_plan")
        return "—" if share is None else f"{percent(share)}%"
    return Figure(WRITEUP, f"| v{v} | {{}} | {{}} | {{}}% / {{}}% | {{}} | {{}}% | {{}}% (of {{}}) |",
                  f"results_router_heldout_v{v}_first_pass.json",
                  (("commit",), ("corpus", "turns"), ("corpus", "sure_coverage"), ("corpus", "sure_precision"), plan,
                   ("corpus", "route_and_tool_right_top_candidate"), ("corpus", "unsure_tool_turns_right_button"),
                   ("corpus", "unsure_tool_turns")),
                  (plain, plain, percent, percent, plain, percent, percent, plain))


FIGURES: list[Figure] = [
    Figure(README, "**First pass, run once: {} of {} stopped, {} of {} controls written.**",
           "results_pharmacist_heldout_first_pass.json", (("refused",), ("to_refuse",), ("written",), ("to_write",)),
           (str, str, str, str)),
    Figure(README, "After fixing the classes it found: {} of {}", "results_pharmacist_heldout.json",
           (lambda d: d["refused"] + d["written"], ("cases",)), (str, str)),
    # the same two figures where the README's approval-card section went, with its table (issue 47)
    Figure(SAFETY, "**First pass, run once: {} of {} stopped, {} of {} controls written.**",
           "results_pharmacist_heldout_first_pass.json", (("refused",), ("to_refuse",), ("written",), ("to_write",)),
           (str, str, str, str)),
    Figure(SAFETY, "After fixing the classes it found: {} of {}", "results_pharmacist_heldout.json",
           (lambda d: d["refused"] + d["written"], ("cases",)), (str, str)),
    Figure(RUNNING, "A fresh clone with an empty pip cache (llama-cpp-python built from source behind the suite) ran green in "
           "{} min on the 2-core development machine: set-up {}, type-check {}, suite {} (parallel) + {} (serial) + {} "
           "(llama.cpp) and floors {} min", "results_fresh_machine.json",
           (lambda d: _empty_cache_run(d)["total_min"], _phase_min("setup"), _phase_min("type-check"),
            _phase_min("suite-parallel"), _phase_min("suite-serial"), _phase_min("suite-llamacpp"), _phase_min("floors")),
           (one,) * 7),
    Figure(README, "so its page is back in {} s here (`bench/results/results_restart.json`)", "results_restart.json",
           (("restart_to_page_s", "converted_model_cached"),), (one,)),
    Figure("kaggle_submission/walkthrough.md", "The committed run took {} min; the video is {} s ({} MB)",
           "results_walkthrough.json", (("record_min",), ("video_s",), ("video_mb",)), (one, plain, one)),
    # ── how decisions are made (issue 26): the rules and the learned router on held-out sets
    _router_row("generated, held-out test families", "corpus"),
    _router_row("`heldout_test.json`", "golden", "golden_tests/heldout_test.json"),
    _router_row("`clinician_phrasing.json`", "golden", "golden_tests/clinician_phrasing.json"),
    _router_row("`bench/data/heldout_final.json`", "golden", "bench/data/heldout_final.json"),
    _families_row("`bench/data/router_families_dev.json`, 15 families (worked on)", "results_router_router_families_dev.json"),
    _families_row("`bench/data/router_families_heldout_v2.json`, 43 families: **first pass**, run once on the final code",
                  "results_router_heldout_v2_first_pass.json"),
    _families_row("the same, **after** fixing the classes its first pass showed (a second look)",
                  "results_router_router_families_heldout_v2.json"),
    _families_row("`bench/data/router_families_heldout_v3.json`, 43 families: **first pass**, run once after the second "
                  "look at v2", "results_router_heldout_v3_first_pass.json"),
    _families_row("the same, after fixing the classes its first pass showed (a second look)",
                  "results_router_router_families_heldout_v3.json"),
    _families_row("`bench/data/router_families_heldout_v4.json`, 42 families: **first pass**, run once after the second "
                  "look at v3", "results_router_heldout_v4_first_pass.json"),
    _families_row("the same, a second look (before v2–v4 joined the router's training)",
                  "results_router_router_families_heldout_v4.json"),
    _families_row("`bench/data/router_families_heldout_v5.json`, 43 families: **first pass**, run once after v2–v4 joined "
                  "the training", "results_router_heldout_v5_first_pass.json"),
    _families_row("the same, after fixing the classes its first pass showed (second looks at the fifth to seventh sets)",
                  "results_router_router_families_heldout_v5.json"),
    _then_row("fifth set, first-pass code (`results_router_then_heldout_v5_first_pass.md`)",
              "results_router_then_heldout_v5_first_pass.json"),
    _then_row("fifth set, after the second looks at the fifth to seventh sets (`results_router_then_heldout_v5.md`)",
              "results_router_then_heldout_v5.json"),
    _families_row("`bench/data/router_families_heldout_v6.json`, 57 families: **first pass**, run once after the second "
                  "look at v5", "results_router_heldout_v6_first_pass.json"),
    _families_row("the same, after fixing the classes its first pass showed (second looks at the sixth and seventh sets)",
                  "results_router_router_families_heldout_v6.json"),
    _families_row("`bench/data/router_families_heldout_v7.json`, 57 families: **first pass**, run once after the second "
                  "look at v6", "results_router_heldout_v7_first_pass.json"),
    Figure(DECISIONS, "| the same, after fixing the classes its first pass showed (a second look) | 2251 | {} % | {} % / {} % | "
           "{} % / {} % | {} % | {} % (of {}) |", "results_router_router_families_heldout_v7.json",
           tuple(("corpus", k) for k in ("classifier_accuracy", "rule_coverage", "rule_precision", "sure_coverage",
                                         "sure_precision", "route_and_tool_right_top_candidate",
                                         "unsure_tool_turns_right_button", "unsure_tool_turns")),
           (*(percent,) * 7, plain)),
    _families_row("`bench/data/router_families_heldout_v8.json`, 57 families: **first pass**, run once after the second "
                  "look at v7", "results_router_heldout_v8_first_pass.json"),
    _families_row("the same, after fixing the classes its first pass showed (its second look)",
                  "results_router_router_families_heldout_v8.json"),
    _then_row("eighth set, first-pass code (`results_router_then_heldout_v8_first_pass.md`)",
              "results_router_then_heldout_v8_first_pass.json"),
    _then_row("eighth set, after its second look (`results_router_then_heldout_v8.md`)", "results_router_then_heldout_v8.json"),
    _plan_row("eighth set, first pass (run once on 0e0d458)", "results_router_heldout_v8_first_pass.json"),
    _plan_row("eighth set, after its second look", "results_router_router_families_heldout_v8.json"),
    _then_row("sixth set, first-pass code (`results_router_then_heldout_v6_first_pass.md`)",
              "results_router_then_heldout_v6_first_pass.json"),
    _then_row("sixth set, after the second looks at the sixth and seventh sets (`results_router_then_heldout_v6.md`)",
              "results_router_then_heldout_v6.json"),
    _then_row("seventh set, first-pass code (`results_router_then_heldout_v7_first_pass.md`)",
              "results_router_then_heldout_v7_first_pass.json"),
    _then_row("seventh set, after its second look (`results_router_then_heldout_v7.md`)", "results_router_then_heldout_v7.json"),
    _plan_row("sixth set, first-pass code (`results_router_heldout_v6_first_pass_with_plan.md`, measured afterwards with "
              "this bench)", "results_router_heldout_v6_first_pass_with_plan.json"),
    _plan_row("sixth set, after the second looks at the sixth and seventh sets",
              "results_router_router_families_heldout_v6.json"),
    _plan_row("seventh set, first pass (run once on 0185e91)", "results_router_heldout_v7_first_pass.json"),
    _plan_row("seventh set, after its second look", "results_router_router_families_heldout_v7.json"),
    _plan_row("fifth set, after the second looks at the fifth to seventh sets", "results_router_router_families_heldout_v5.json"),
    Figure(DECISIONS, "| generated, held-out test families | {} % | {} % |", "results_router.json",
           (("corpus", "sure_precision_with_plan"), ("corpus", "route_and_tool_right_with_plan")), (percent, percent)),
    Figure(DECISIONS, "Counted by what the turn did, the fifth set's first pass's sure decisions were {} % right (of {}); "
           "after the second looks {} % (of {})", "results_router_heldout_v5_first_pass.json",
           (_by_behaviour("results_router_heldout_v5_first_pass.json", "results_router_then_heldout_v5_first_pass.json"),
            _sure_turns("results_router_heldout_v5_first_pass.json"),
            _by_behaviour("results_router_router_families_heldout_v5.json", "results_router_then_heldout_v5.json"),
            _sure_turns("results_router_router_families_heldout_v5.json")),
           (percent, _thousands, percent, _thousands)),
    Figure(DECISIONS, "139 of the first pass's {} wrong sure decisions", "results_router_heldout_v5_first_pass.json",
           (lambda d: len(d["corpus"]["wrong_sure"]),), (plain,)),
    Figure(DECISIONS, "**On the tenth set's first pass** (run once on 5204f4a, after the ninth set's second look) sure "
           "decisions were right {} % by first tool ({} % with the plan; target 100 %: not met), route + tool {} % ({} % "
           "with the plan; target 97 %: met), unsure tool turns with the right button {} % (target 95 %: not met); on "
           "the ninth set's first pass {} % ({} % with the plan), {} % ({} %) and {} %. After its second look the tenth "
           "set gives {} % and {} % with the plan and {} %; the ninth, rerun on the same code, {} %, {} % and {} %; the "
           "generated held-out test families, which have been read, {} %, {} % and {} %",
           "results_router_heldout_v10_first_pass.json",
           (("corpus", "sure_precision"), ("corpus", "sure_precision_with_plan"),
            ("corpus", "route_and_tool_right_top_candidate"), ("corpus", "route_and_tool_right_with_plan"),
            ("corpus", "unsure_tool_turns_right_button"),
            _of("results_router_heldout_v9_first_pass.json", "sure_precision"),
            _of("results_router_heldout_v9_first_pass.json", "sure_precision_with_plan"),
            _of("results_router_heldout_v9_first_pass.json", "route_and_tool_right_top_candidate"),
            _of("results_router_heldout_v9_first_pass.json", "route_and_tool_right_with_plan"),
            _of("results_router_heldout_v9_first_pass.json", "unsure_tool_turns_right_button"),
            _of("results_router_router_families_heldout_v10.json", "sure_precision_with_plan"),
            _of("results_router_router_families_heldout_v10.json", "route_and_tool_right_with_plan"),
            _of("results_router_router_families_heldout_v10.json", "unsure_tool_turns_right_button"),
            _of("results_router_router_families_heldout_v9.json", "sure_precision_with_plan"),
            _of("results_router_router_families_heldout_v9.json", "route_and_tool_right_with_plan"),
            _of("results_router_router_families_heldout_v9.json", "unsure_tool_turns_right_button"),
            _of("results_router.json", "sure_precision"), _of("results_router.json", "route_and_tool_right_top_candidate"),
            _of("results_router.json", "unsure_tool_turns_right_button")),
           (percent,) * 19),
    _families_row("`bench/data/router_families_heldout_v10.json`, 57 families: **first pass**, run once on 5204f4a, "
                  "after the ninth set's second look", "results_router_heldout_v10_first_pass.json"),
    _then_row("tenth set, first-pass code (`results_router_then_heldout_v10_first_pass.md`)",
              "results_router_then_heldout_v10_first_pass.json"),
    _plan_row("tenth set, first pass (run once on 5204f4a)", "results_router_heldout_v10_first_pass.json"),
    _families_row("the same, after fixing the classes its first pass showed (the tenth set's second look)",
                  "results_router_router_families_heldout_v10.json"),
    _then_row("tenth set, after its second look (`results_router_then_heldout_v10.md`)", "results_router_then_heldout_v10.json"),
    _plan_row("tenth set, after its second look", "results_router_router_families_heldout_v10.json"),
    _families_row("`bench/data/router_families_heldout_v9.json`, 57 families: **first pass**, run once on 36b6d4c, after "
                  "the fifth to eighth sets joined the training", "results_router_heldout_v9_first_pass.json"),
    _then_row("ninth set, first-pass code (`results_router_then_heldout_v9_first_pass.md`)",
              "results_router_then_heldout_v9_first_pass.json"),
    _plan_row("ninth set, first pass (run once on 36b6d4c)", "results_router_heldout_v9_first_pass.json"),
    _families_row("the same, after fixing the classes its first pass showed (the ninth set's second look)",
                  "results_router_router_families_heldout_v9.json"),
    _then_row("ninth set, after its second look (`results_router_then_heldout_v9.md`)", "results_router_then_heldout_v9.json"),
    _plan_row("ninth set, after its second look", "results_router_router_families_heldout_v9.json"),
    Figure(DECISIONS, "The rules decide only {} % of the fourth set's turns", "results_router_heldout_v4_first_pass.json",
           (("corpus", "rule_coverage"),), (percent,)),
    Figure(DECISIONS, "rules and router together decide a turn in p50 {}–{} ms in `python bench/bench_router.py`",
           "results_router.json", (lambda d: min(_decide_ms(d)), lambda d: max(_decide_ms(d))), (one, one), clock=True),
    Figure(DECISIONS, "(`bench/data/issue26_last.json`, {} turns) ran once, under the threshold: sure decisions {} % of turns, "
           "{} % right (`bench/results/results_router_issue26_last.md`)", "results_router_issue26_last.json",
           tuple(("golden", "bench/data/issue26_last.json", k) for k in ("turns", "sure_coverage", "sure_precision")),
           (plain, percent, percent)),
    # ── the Space's hardware table (issue 45)
    Figure(DEPLOYMENT, "float32, no quantization; {} tokens/s of free text", "results_backends.json",
           (("transformers_backend_vs_raw_generate", "backend_text_tokens_per_s"),), (one,)),
    # ── start-up and shutdown (issue 27: "30-40 s" and "a second or two" did not hold)
    Figure(RUNNING, "loaded by transformers (load {} s in `python -m docgemma bench`", _AGENT, (("cpu_model", "load_s"),),
           (one,)),
    Figure(RUNNING, "the app ready {} s after launch in `python bench/bench_ui.py`", "results_ui.json",
           (("launch_to_ready_s",),), (one,)),
    Figure(RUNNING, "stops {} s after SIGTERM (exit status {}", "results_ui.json",
           (("shutdown_s",), ("shutdown_exit_code",)), (one, plain)),
    Figure(EVIDENCE, "| exit {} in {} s after SIGTERM", "results_ui.json",
           (("shutdown_exit_code",), ("shutdown_s",)), (plain, one)),
    # ── model calls per route and the agent's own time
    Figure(EVIDENCE, "| model calls per turn (a clinically meaningful model) | direct {}, single tool {}, three tools {} "
           "(budgets {}, {}, {})", _AGENT,
           tuple((("llm_calls_per_route", r, k)) for k in ("llm_calls", "seed_budget")
                 for r in ("direct", "single_tool", "multi_tool_3")), (plain,) * 6),
    Figure(EVIDENCE, "| agent overhead per turn (everything but the model) | p50 {} ms", _AGENT,
           (("deterministic_overhead", "p50_ms"),), (whole,)),
    Figure(EVIDENCE, "on the CPU demo model | {} model calls, {} ms", _ROUTES,
           (("rows", "transformers", "routes", "single_tool", "llm_calls"),
            lambda d: d["rows"]["transformers"]["routes"]["single_tool"]["turn_s_p50"] * 1000), (plain, whole)),
    Figure(EVIDENCE, "As shipped, the embedded model makes {} model calls on these routes (agent time {}–{} ms per turn)",
           _ROUTES, (lambda d: max(r["llm_calls"] for r in _shipped_routes(d)),
                     lambda d: min(r["agent_overhead_ms_p50"] for r in _shipped_routes(d)),
                     lambda d: max(r["agent_overhead_ms_p50"] for r in _shipped_routes(d))), (plain, whole, whole)),
    *[_route_row("fake", route) for route in ("direct", "single_tool", "multi_tool", "error_retry", "image")],
    _forced_row("direct", "direct"), _forced_row("single tool", "single_tool"), _forced_row("three tools", "multi_tool"),
    _forced_row("error then retry", "error_retry"),
    # ── tool choice on the embedded CPU model (golden runs; the command is in bench/README.md)
    Figure(EVIDENCE, "the page's 12 example prompts | {}/{} (before rule-based routing: {}/{},", "golden_model_mode/after.txt",
           (lambda t: _golden_tool(t, "page_examples.json")[0], lambda t: _golden_tool(t, "page_examples.json")[1],
            lambda t: _golden_tool(_read(RESULTS / "golden_model_mode/before.txt"), "page_examples.json")[0],
            lambda t: _golden_tool(_read(RESULTS / "golden_model_mode/before.txt"), "page_examples.json")[1]),
           (plain,) * 4),
    Figure(EVIDENCE, "| {}/{}: {} turns decided by rule, all right; {} left to the model", "golden_model_mode/after.jsonl",
           (lambda rows: sum(_golden_tool(_read(RESULTS / "golden_model_mode/after.txt"), f)[0]
                             for f in ("clinician_phrasing.json", "page_examples.json")),
            len, lambda rows: sum(map(_by_rule, rows)), lambda rows: sum(not _by_rule(r) for r in rows)), (plain,) * 4),
    # ── memory, concurrency, deployment, the record at scale
    Figure(EVIDENCE, "| peak memory decoding the largest accepted image | {} MB (before: {} MB)", "results_images.json",
           (("after", "max_peak_rss_mb_over_cases"), ("before", "max_peak_rss_mb_over_cases")), (whole, whole)),
    Figure(EVIDENCE, "| exactly 1 in {}/{} trials", "results_writes.json",
           (("modes", "approve+edit+approve", "trials_with_exactly_one_write"), ("modes", "approve+edit+approve", "trials")),
           (plain, plain)),
    Figure(EVIDENCE, "| 1 replica {} turns/s, 2 replicas {} turns/s", "results_deploy.json",
           (("throughput", 0, "turns_per_s"), ("throughput", 1, "turns_per_s")), (one, one)),
    Figure(EVIDENCE, "costs ~{} ms per turn over SQLite (p50 {} vs {} ms)", "results_deploy.json",
           (("checkpointer", "postgres_cost_per_turn_ms_p50"), ("checkpointer", "postgres", "p50_ms"),
            ("checkpointer", "sqlite", "p50_ms")), (whole, whole, whole)),
    Figure(EVIDENCE, "| record search at {}k resources, p50/p95 | p50 {}–{} ms, p95 at most {} ms for every search the app "
           "makes", "results_ehr_scale.json",
           (lambda d: d["resources"] / 1000, lambda d: min(_ehr_p50(d)), lambda d: max(_ehr_p50(d)),
            lambda d: max(_ehr_p95(d))), (whole, whole, whole, whole)),
    Figure(EVIDENCE, "(before: up to {} s without a patient filter)", "results_ehr_scale_before.json",
           (lambda d: max(_ehr_p50(d)) / 1000,), (one,)),
    # ── prompt budgets and backends
    Figure(EVIDENCE, "a prefix cache serves {} % of the prompt tokens after a turn's first call ({} % with the earlier "
           "instructions-first prompts)", "results_budgets.json",
           ((_AFTER, "summary", "prefix_share_after_first_call"), (_BEFORE, "summary", "prefix_share_after_first_call")),
           (lambda v: f"{v * 100:.0f}", percent)),
    Figure(EVIDENCE, "the worst single-tool turn's uncached prompt fell from {} to {} tokens (budget 4,000), and to {} when",
           "results_budgets.json",
           ((_BEFORE, "summary", _ACTIVE, "uncached_tokens", "max"), (_AFTER, "summary", _ACTIVE, "uncached_tokens", "max"),
            (_AFTER, "summary_cache_across_turns", _ACTIVE, "uncached_tokens", "max")), (whole, whole, whole)),
    Figure(EVIDENCE, "transformers {}×, llama.cpp {}×; llama.cpp decodes {}× faster than transformers on the same GGUF; "
           "its JSON grammar costs {}× per token", "results_backends.json",
           (("transformers_backend_vs_raw_generate", "text_ratio_backend_over_raw_tokens_per_s"),
            ("llamacpp_backend_vs_raw_llama", "text_ratio_backend_over_raw_tokens_per_s"),
            ("transformers_vs_llamacpp_same_gguf", "llamacpp_over_transformers_decode"),
            ("llamacpp_constrained_json_overhead", "grammar_overhead_ratio")), (two, two, one, one)),
    # ── safety benches
    Figure(SAFETY, "{} of {} dangerous generated orders pass a plain approval, {} of {} usual doses are severe",
           "results_dose_orders.json", (("dangerous_passing_plain_approval",), ("dangerous",), ("severe_on_usual",),
                                        ("usual",)), (whole,) * 4),
    Figure(SAFETY, "{} of {} expected conflicts found", "results_allergy_forms.json",
           (("conflicts_found",), ("conflicts_expected",)), (whole, whole)),
    Figure(SAFETY, "expected conflicts found ({} before this resolver)", "results_allergy_forms_before.json",
           (("conflicts_found",),), (whole,)),
    # ── the rule layer on held-out sets (coverage / precision, embedded model end to end)
    *_rules_row("dev", "golden_tests/heldout_dev.json"),
    *_rules_row("test", "golden_tests/heldout_test.json"),
    Figure(DECISIONS, "| final ({} turns, `bench/data/heldout_final.json`) | {} % / {} %", "results_rules_final_firstpass.json",
           (("rules", "turns"), ("rules", "coverage"), ("rules", "precision")), (plain, percent, percent)),
    Figure(DECISIONS, "% ({} wrong) | {}/{} ({} %) | {} % / {} % | {}/{} ({} %) |", "results_rules_final_firstpass.json",
           (lambda d: d["rules"]["covered"] - d["rules"]["right"], ("backends", "transformers", "route_and_tool_right"),
            ("backends", "transformers", "turns"), ("backends", "transformers", "accuracy"),
            lambda d: _final("coverage"), lambda d: _final("precision"), lambda d: _final("route_and_tool_right"),
            lambda d: _final("turns"), lambda d: _final("accuracy")),
           (plain, plain, plain, percent, percent, percent, plain, plain, percent)),
    Figure(DECISIONS, "are routed by rule (right in {}–{} % of those)", "results_rules_final_firstpass.json",
           (lambda d: min(d["rules"]["precision"], _firstpass("test")),
            lambda d: max(d["rules"]["precision"], _firstpass("test"))),
           (lambda v: f"{v * 100:.0f}",) * 2),
    Figure(RUNNING, "Outlines' own compiler took up to {} s and {} MB per schema on first use", "results_constrained.json",
           (lambda d: max(x["build_s"] for x in _outlines_core(d)), lambda d: max(x["build_rss_mb"] for x in _outlines_core(d))),
           (whole, whole)),
    Figure(RECORD, "so a patient's data is found in {}–{} ms (p50) at {}k", "results_ehr_scale.json",
           (lambda d: min(_ehr_p50(d)), lambda d: max(_ehr_p50(d)), lambda d: d["resources"] / 1000), (whole,) * 3),
    # ── the writeup (issue 47 item 4): the held-out evidence leads, the smaller figures follow
    *[_first_pass_row(v) for v in range(2, 11)],
    Figure(WRITEUP, "Over these nine first passes, route + tool was right for {}–{}% of turns on phrasings nobody had "
           "tuned for. Sure decisions by first tool were right {}–{}% of the time", "results_router_heldout_v10_first_pass.json",
           (lambda _d: min(_first_passes("route_and_tool_right_top_candidate")),
            lambda _d: max(_first_passes("route_and_tool_right_top_candidate")),
            lambda _d: min(_first_passes("sure_precision")), lambda _d: max(_first_passes("sure_precision"))),
           (percent,) * 4),
    Figure(WRITEUP, "Sure decisions on the first passes were wrong {}–{}% of the time by first tool",
           "results_router_heldout_v10_first_pass.json",
           (lambda _d: 1 - max(_first_passes("sure_precision")), lambda _d: 1 - min(_first_passes("sure_precision"))),
           (lambda v: percent(round(v, 4)),) * 2),
    Figure(WRITEUP, "**First pass, run once: {} of {} stopped, {} of {} controls written.**",
           "results_pharmacist_heldout_first_pass.json", (("refused",), ("to_refuse",), ("written",), ("to_write",)),
           (str, str, str, str)),
    Figure(WRITEUP, "A project helper, in a clinical pharmacist's role (not a licensed pharmacist), wrote {} orders from "
           "clinical knowledge without reading the tables: {} that must be stopped, in allergy, interaction, kidney, "
           "pregnancy and route/high-alert cases, and {} ordinary controls", "results_pharmacist_heldout_first_pass.json",
           (("cases",), ("to_refuse",), ("to_write",)), (str, str, str)),
    Figure(WRITEUP, "After fixing the classes it found: {} of {} (`bench/results/results_pharmacist_heldout.json`): "
           "every order to stop is stopped, and {} of {} ordinary controls are written with one click",
           "results_pharmacist_heldout.json",
           (lambda d: d["refused"] + d["written"] if d["refused"] == d["to_refuse"] else -1, ("cases",),
            ("written",), ("to_write",)), (str, str, str, str)),
    Figure(WRITEUP, "{} of {} class conflicts needed an override, {} of {} cross-reactivity expectations were met, {} of {} "
           "unrelated drugs were left clean and {} of {} strings that are not drugs failed safe. The {} unrelated drugs not "
           "left clean", "results_allergy_heldout.json",
           (("class_conflicts_needing_override", 0), ("class_conflicts_needing_override", 1),
            ("cross_class_expectations_met", 0), ("cross_class_expectations_met", 1), ("unrelated_left_clean", 0),
            ("unrelated_left_clean", 1), ("unresolvable_failing_safe", 0), ("unresolvable_failing_safe", 1),
            lambda d: d["unrelated_left_clean"][1] - d["unrelated_left_clean"][0]), (whole,) * 9),
    Figure(WRITEUP, "Before the fixes this set led to (commit {}, `bench/results/results_allergy_heldout_before.json`): {} of {} "
           "and {} of {}.", "results_allergy_heldout_before.json",
           (("commit",), ("cross_class_expectations_met", 0), ("cross_class_expectations_met", 1),
            ("unrelated_left_clean", 0), ("unrelated_left_clean", 1)), (plain, whole, whole, whole, whole)),
    Figure(WRITEUP, "{} of {} dangerous generated orders pass a plain approval, and {} of {} usual doses get a severe finding",
           "results_dose_orders.json", (("dangerous_passing_plain_approval",), ("dangerous",), ("severe_on_usual",),
                                        ("usual",)), (whole,) * 4),
    Figure(WRITEUP, "`python bench/bench_approval_kills.py --trials {}` sends SIGKILL", "results_approval_kills.json",
           (("trials",),), (plain,)),
    Figure(WRITEUP, "Of {} kills, {} finished before the kill, {} completed on reopening with the record id named, {} were "
           "released to be decided again and {} came before the claim. {} of {} writes that had reached the record were "
           "named on reopening. There were {} violations of \"at most one order per card, exactly one once approved\", and "
           "reopening took at most {} s.", "results_approval_kills.json",
           (("trials",), ("outcomes", "finished"), ("outcomes", "recovered_written"), ("outcomes", "recovered_released"),
            ("outcomes", "no_claim"), ("landed_and_reported",), ("landed",), lambda d: len(d["violations"]),
            ("reopen_s_max",)), (plain,) * 8 + (two,)),
    # the commit is bench/README.md's (``--root`` ran ``git archive 40790c1``; the file names only the folder)
    Figure(WRITEUP, "The code before the fix (40790c1) left {} of {} cards stuck", "results_approval_kills_before.json",
           (("outcomes", "stuck"), ("trials",)), (plain, plain)),
    Figure(WRITEUP, "The page is back {} s after a restart with the converted model cached and {} s with "
           "`DOCGEMMA_MODEL_CACHE=off` (median of {} runs, {} cores)", "results_restart.json",
           (("restart_to_page_s", "converted_model_cached"), ("restart_to_page_s", "cache_off"),
            lambda d: len(d["runs"]["converted_model_cached"]), ("cpus",)), (one, one, plain, plain), clock=True),
    Figure(WRITEUP, "estimated {} s after Run All with assumed pip and load seconds", "results_kaggle_time.json",
           (("default", "time_to_app_s"),), (whole,)),
    # The same estimate where the README, the Kaggle README and the bench index quote it (they had gone stale
    # unchecked: 287 s when the file said 285).
    Figure(README, "estimated {} s after Run All with assumed pip and load seconds", "results_kaggle_time.json",
           (("default", "time_to_app_s"),), (whole,)),
    Figure("kaggle_submission/README.md", "Estimated Run All to here: {} s", "results_kaggle_time.json",
           (("default", "time_to_app_s"),), (whole,)),
    Figure("kaggle_submission/README.md", "Estimated {} s of model time, {} s with `FULL_RUN`", "results_kaggle_time.json",
           (("evaluations", "model_s"), ("full_run", "evaluations", "model_s")), (whole, whole)),
    Figure("bench/README.md", "`results_kaggle_time.json` ({} s to the app; no model time after it by default; evaluations "
           "asked for: {} s, {} s with `FULL_RUN`)", "results_kaggle_time.json",
           (("default", "time_to_app_s"), ("evaluations", "model_s"), ("full_run", "evaluations", "model_s")),
           (whole, whole, whole)),
    Figure(WRITEUP, "- Agent overhead per turn, everything but the model: p50 {} ms ({} turns)", _AGENT,
           (("deterministic_overhead", "p50_ms"), ("deterministic_overhead", "turns")), (one, plain), clock=True),
    Figure(WRITEUP, "Model calls per turn on those sessions were direct {} (max {}), single tool {} (max {}), multi-tool {} "
           "(max {}); seed 002's budget", _GOLDEN,
           tuple(_golden_call(r, i) for r in ("direct", "single tool", "multi-tool") for i in (0, 1)),
           (plain,) * 6),
    Figure(WRITEUP, "all {} files pass: {} clinical sessions / {} turns in `clinical_sessions.json`", _GOLDEN,
           (lambda t: _gated_golden_files(),
            lambda t: len(json.loads((ROOT / "golden_tests" / "clinical_sessions.json").read_text())["sessions"]),
            lambda t: sum(v[2] for v in _calls(t).values())), (plain,) * 3),
]


#: ``python -m docgemma experiment SUITE --backend transformers --limit N`` (the commands are in each report.md):
#: the node experiments on the embedded model, which the writeup relegates (issue 47: 3–8 cases per variant never lead).
_EXP = "experiments_embedded"


def _exp_rows(suite: str, rules: bool = False) -> list[dict[str, str]]:
    path = RESULTS / _EXP / ("rules" if rules else "") / suite / f"{suite}.csv"
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _variant_sizes() -> list[int]:
    """Cases per model variant on the embedded model."""
    return [int(r["n"]) for suite in ("tool_select", "anti_patterns", "intent_classify", "result_classify",
                                      "retry_strategy", "stage2_args", "synthesize")
            for r in _exp_rows(suite) if float(r["llm_calls"]) > 0]


EXPERIMENT_FIGURES: list[Figure] = [
    Figure(WRITEUP, "are on the embedded SmolLM2-135M, on {}–{} cases per variant", f"{_EXP}/tool_select/tool_select.csv",
           (lambda _d: min(_variant_sizes()), lambda _d: max(_variant_sizes())), (plain, plain)),
]
FIGURES += EXPERIMENT_FIGURES

# ── issue 44: the router's n-grams beside a pretrained sentence encoder (python bench/bench_readers.py)
READERS = "docs/readers.md"
_READERS = "results_readers.json"


def _reader_row(label: str, split: str, reader: str) -> Figure:
    keys = ("accuracy", "sure_coverage", "sure_precision", "sure_with_rules_coverage", "sure_with_rules_precision")
    return Figure(READERS, f"| {label} ({{}} turns) | {reader} | {{}} % | {{}} % / {{}} % | {{}} % / {{}} % |", _READERS,
                  ((split, reader, "turns"), *((split, reader, k) for k in keys)), (str, *(percent,) * 5))


def _sets_at_target(reader: str) -> Callable[[Any], int]:
    return lambda d: sum((f[reader]["sure_precision"] or 0) >= d["settings"]["target_precision"] for f in d["sets"].values())


def _lowest_set(reader: str) -> Callable[[Any], float]:
    return lambda d: min(f[reader]["sure_precision"] or 0 for f in d["sets"].values())


def _latency(reader: str, key: str) -> tuple[str, ...]:
    return ("latency", reader, key)


FIGURES += [
    *(_reader_row(label, split, reader) for label, split in (("corpus families", "families"),
                                                              ("leave one set out, pooled", "leave_one_set_out"))
      for reader in ("ngram", "minilm", "both")),
    Figure(READERS, "measured on its {} test families", _READERS, (("families", "families", "test"),), (str,)),
    Figure(READERS, "is met per left-out set on {} of 9 sets by ngram, {} of 9 by minilm and {} of 9 by both. The lowest "
           "sets reach {} %, {} % and {} %.", _READERS,
           (*(_sets_at_target(r) for r in ("ngram", "minilm", "both")), *(_lowest_set(r) for r in ("ngram", "minilm", "both"))),
           (str, str, str, percent, percent, percent)),
    Figure(READERS, "Its pooled sure precision is {} %, against {} % for the n-grams", _READERS,
           (("leave_one_set_out", "both", "sure_precision"), ("leave_one_set_out", "ngram", "sure_precision")),
           (percent, percent)),
    Figure(READERS, "p50 / p95 {} / {} ms for ngram, {} / {} ms for minilm and {} / {} ms for both. The load average was {} "
           "at the start", _READERS,
           (*(_latency(r, k) for r in ("ngram", "minilm", "both") for k in ("latency_ms_p50", "latency_ms_p95")),
            ("load", "average")), (plain,) * 7, clock=True),
    Figure(README, "the router's n-grams are right on {} % of turns, the encoder with a trained head on {} %, and both "
           "together on {} %", _READERS,
           tuple(("leave_one_set_out", r, "accuracy") for r in ("ngram", "minilm", "both")), (percent,) * 3),
    Figure(README, "One turn takes p95 {} ms with the encoder", _READERS, (_latency("both", "latency_ms_p95"),), (plain,),
           clock=True),
]


def _firstpass(split: str) -> float:
    return float(json.loads((RESULTS / f"results_rules_{split}_firstpass.json").read_text())["rules"]["precision"])


def _outlines_core(data: Any) -> list[dict[str, Any]]:
    return [x for r in data["results"] if r["backend"] == "outlines_core" for x in r["schemas"] if x.get("build_s")]


def _calls(text: str) -> dict[str, tuple[str, str, int]]:
    """A printed golden run's "model calls per turn" line: route → (mean, max, turns)."""
    line = re.search(r"^model calls per turn: (.+)$", text, re.MULTILINE)
    assert line, "no model-calls line"
    return {m.group(1): (m.group(2), m.group(3), int(m.group(4)))
            for m in re.finditer(r"([a-z -]+?) ([\d.]+) \(max (\d+), (\d+) turns\)", line.group(1).replace("; ", ";"))}


def _gated_golden_files() -> int:
    return len([p for p in (ROOT / "golden_tests").glob("*.json") if not p.name.startswith("heldout_")])


def _final(key: str) -> Any:
    data = json.loads((RESULTS / "results_rules_final.json").read_text())
    return data["rules"][key] if key in ("coverage", "precision") else data["backends"]["transformers"][key]


def _text(doc: str, root: Path = ROOT) -> str:
    return re.sub(r"\s+", " ", (root / doc).read_text())


def stale(figure: Figure, results: Path = RESULTS, root: Path = ROOT) -> str | None:
    """What is wrong with a stated figure: None when its document says exactly what its results file holds."""
    stated = figure.text.format(*figure.values(results))
    if stated in _text(figure.doc, root):
        return None
    return f"{figure.doc} should say: {stated!r} (from bench/results/{figure.results})"


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f"{f.doc}:{f.text[:50]}")
def test_each_stated_figure_is_the_one_its_results_file_holds(figure: Figure) -> None:
    if figure.clock and RERUN:
        pytest.skip("a time on this machine: checked against the committed results file only")
    assert stale(figure) is None, stale(figure)


def test_a_planted_stale_figure_is_reported(tmp_path: Path) -> None:
    """The check fails on a stale figure (issue 47): a document that says another number than its results file,
    and a results file rerun to another number than the document says, are each reported with the figure due."""
    (figure,) = [f for f in FIGURES if f.doc == README and f.text.startswith("After fixing the classes it found")]
    assert stale(figure) is None  # as committed: the README says what the results file holds
    results, docs = tmp_path / "results", tmp_path / "docs"
    results.mkdir()
    docs.mkdir()
    held = json.loads((RESULTS / figure.results).read_text())
    right, cases = held["refused"] + held["written"], held["cases"]
    (results / figure.results).write_text(json.dumps(held))
    readme = (ROOT / README).read_text()
    assert f"After fixing the classes it found: {right} of {cases}" in readme

    # A stale figure planted in the document: one fewer right than the results file holds.
    (docs / README).write_text(readme.replace(f"found: {right} of {cases}", f"found: {right - 1} of {cases}"))
    assert stale(figure, results, docs) == (f"README.md should say: 'After fixing the classes it found: {right} of "
                                            f"{cases}' (from bench/results/{figure.results})")

    # The document as committed, but the bench rerun and its results file moved: the old figure is stale.
    (docs / README).write_text(readme)
    assert stale(figure, results, docs) is None
    (results / figure.results).write_text(json.dumps({**held, "written": held["written"] - 1}))
    assert f"found: {right - 1} of {cases}" in (stale(figure, results, docs) or "")

    # A figure read with a formatter (thousands, one decimal): a planted "21.7" where the file says otherwise.
    planted = Figure(README, "ran green in {} min", "run.json", (("total_min",),), (one,))
    (results / "run.json").write_text(json.dumps({"total_min": 23.04}))
    (docs / README).write_text("A fresh clone ran green in 21.7 min.")
    assert stale(planted, results, docs) == "README.md should say: 'ran green in 23.0 min' (from bench/results/run.json)"
    (docs / README).write_text("A fresh clone ran green in 23.0 min.")
    assert stale(planted, results, docs) is None


#: Claims that were measured untrue on this machine (issue 27) and have no results file: never stated again.
UNTRUE = [r"30[-–]40 s", r"a second or two", r"0\.5 s, no traceback", r"before: 5 calls, 36 s", r"41\.4 s",
          r"16\.3 ms", r"1,378 tokens", r"19–102 s", r"~11 min"]


@pytest.mark.parametrize("doc", [README, WRITEUP, *MOVED])
def test_figures_measured_untrue_are_gone(doc: str) -> None:
    text = _text(doc)
    assert not [p for p in UNTRUE if re.search(p, text)]


@pytest.mark.parametrize("doc", [README, WRITEUP, "docs/architecture.md", "bench/README.md", *MOVED])
def test_no_document_states_a_test_count(doc: str) -> None:
    """A test count changes with every commit: stated nowhere (no test derives one)."""
    assert not re.search(r"\b\d[\d,]* (?:unit |integration |browser |e2e )?tests? (?:pass|passed|passing)\b",
                         _text(doc), re.IGNORECASE)


def test_figures_the_code_defines_are_the_codes() -> None:
    """A figure that is a count of the code's own table or one of its settings, not a measurement: read from the code."""
    from docgemma.clinical.dose_table import TABLE
    from docgemma.llm.platform import ZEROGPU_BASE_S, ZEROGPU_MAX_S, ZEROGPU_TOKENS_PER_S, zerogpu_seconds
    from docgemma.tools.http import HttpClient
    from docgemma.ui.login_limit import PER_CLIENT, PER_USER, WINDOW_S
    from tests.e2e.test_cpu_model import SUBSET, TOOL_FLOOR

    http = HttpClient(frozenset())
    assert f"above a sourced maximum of {len(TABLE)} drugs" in _text(RECORD)
    assert (f"({ZEROGPU_BASE_S} s + {1 / ZEROGPU_TOKENS_PER_S} s per token it may decode, at most {ZEROGPU_MAX_S} s: "
            f"a JSON call asks for ~21 s, a 512-token answer for {zerogpu_seconds(max_new_tokens=512)} s)") in _text(DEPLOYMENT)
    assert f"{http.connect_timeout_s:.0f} s connect timeout, a {http.deadline_s:.0f} s deadline per call" in _text(TOOLS)
    assert f"({PER_USER} per user, {PER_CLIENT} per address, in {WINDOW_S / 60:.0f} min)" in _text(SETTINGS)
    assert f"CI fails if a {len(SUBSET)}-turn subset drops below {percent(TOOL_FLOOR)} %" in _text(EVIDENCE)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert f"all {len(notebooks)} run top to bottom" in _text(WRITEUP)  # tests/integration/test_notebooks.py runs each


def test_the_writeups_seed_figures_are_the_studys() -> None:
    """The writeup's *seed 002* figures are the design study's, on MedGemma 4B (not measured here): the ones
    ``docgemma/eval/experiments/seed002.py`` keeps and every experiment report prints beside its own result."""
    from docgemma.eval.experiments.seed002 import REFERENCE

    def study(*key: str) -> str:
        return REFERENCE[key].split(" (")[0]

    assert {study("anti_patterns", "model", c).split()[0] for c in ("sufficiency", "ask_user", "skip")} == {"0%"}
    args = re.search(r"(\d+)% → (\d+)%", REFERENCE[("tool_select", "joint_critical_last")])
    assert args
    text = _text(WRITEUP)
    assert (f"(result classification {study('result_classify', 'project')}; sufficiency on sufficient cases, asking "
            f"the clinician and skipping a failed tool 0%; full plans {study('anti_patterns', 'model', 'plan')}; all "
            "*seed 002*)").replace("0-10%", "0–10%") in text
    assert f"dropped argument accuracy from {args.group(1)}% to {args.group(2)}% (*seed 002*)" in text


def test_readme_is_read_in_five_minutes() -> None:
    """Issue 47: the README stays at most 2,000 words (the long sections live in ``docs/``), its front matter is the
    Space's config at the very top, and it says near the top, plainly, that MedGemma was not run where this was built."""
    text = (ROOT / README).read_text()
    assert text.startswith("---\ntitle: DocGemma Connect\n")
    assert len(text.split()) <= 2000
    words = text.split()
    assert "MedGemma itself was not run where this was built" in " ".join(words[:200])
    for doc in MOVED:
        assert f"]({doc})" in text or f"]({doc}#" in text, f"the README links {doc}"
