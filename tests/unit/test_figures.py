"""Figures that hold (issue 27): each figure the README and the writeup state is read from the file in
``bench/results/`` that a command in the repo wrote (``bench/README.md`` names the command), formatted as the
document writes it, and must stand in the document exactly so. A new run of a bench that moves a figure fails
here until the document says what the file says; a figure nobody can rerun has no place in the documents.

Each entry: the document, the sentence as it stands with ``{}`` where the figures go, the results file, and one
reader per figure (a JSON path, or a function of the whole file for a figure derived from several values)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
RESULTS = ROOT / "bench" / "results"
README = "README.md"
WRITEUP = "kaggle_submission/writeup.md"
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

    def values(self) -> list[str]:
        data = _read(RESULTS / self.results)
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
    return Figure(README, f"| {label} | {{}} ({budget}) | {{}} | {{}} ({{}}) | {{}} | {{}} / {{}} ms |", _ROUTES,
                  ((*row, "llm_calls"), (*row, "prompt_tokens"),
                   (*row, "uncached_prompt_tokens"), (*before, "uncached_prompt_tokens"), (*row, "decoded_tokens"),
                   (*row, "agent_overhead_ms_p50"), (*row, "agent_overhead_ms_p95")),
                  (plain, whole, whole, whole, plain, whole, whole))


def _forced_row(label: str, route: str) -> Figure:
    t: tuple[str, ...] = ("rows", _FORCED_T, "routes", route)
    q: tuple[str, ...] = ("rows", _FORCED_L, "routes", route)
    return Figure(README, f"| {label} | {{}} | {{}} / {{}} | {{}} / {{}} | {{}} s | {{}} s |", _ROUTES,
                  ((*t, "llm_calls"), (*t, "uncached_prompt_tokens"), (*t, "prompt_tokens"), (*t, "decoded_tokens"),
                   (*q, "decoded_tokens"), (*t, "turn_s_p50"), (*q, "turn_s_p50")),
                  (plain, whole, whole, plain, plain, lambda v: whole(v) if v >= 10 else one(v),
                   lambda v: whole(v) if v >= 10 else one(v)))


def _rules_row(split: str, file: str) -> list[Figure]:
    first = f"results_rules_{split}_firstpass.json" if split != "dev" else "results_rules_dev_baseline.json"
    return [
        Figure(README, f"| {split} ({{}} turns, `{file}`) | {{}} % / {{}} %", first,
               (("rules", "turns"), ("rules", "coverage"), ("rules", "precision")), (plain, percent, percent)),
        Figure(README, "| {} % / {} % | {}/{} ({} %) |", f"results_rules_{split}.json",
               (("rules", "coverage"), ("rules", "precision"), ("backends", "transformers", "route_and_tool_right"),
                ("backends", "transformers", "turns"), ("backends", "transformers", "accuracy")),
               (percent, percent, plain, plain, percent)),
    ] + ([] if split == "dev" else [
        Figure(README, "% ({} wrong) | {}/{} ({} %) |", first,
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
    return Figure(README, f"| {label} ({{}}) | {{}} % | {{}} % / {{}} % | {{}} % / {{}} % | {{}} % | {{}} % (of {{}}) |",
                  "results_router.json", ((*path, "turns"), *((*path, k) for k in keys), (*path, "unsure_tool_turns")),
                  (plain, *(percent,) * len(keys), plain))


FIGURES: list[Figure] = [
    # ── how decisions are made (issue 26): the rules and the learned router on held-out sets
    _router_row("generated, held-out test families", "corpus"),
    _router_row("`heldout_test.json`", "golden", "golden_tests/heldout_test.json"),
    _router_row("`clinician_phrasing.json`", "golden", "golden_tests/clinician_phrasing.json"),
    _router_row("`bench/data/heldout_final.json`", "golden", "bench/data/heldout_final.json"),
    Figure(README, "{} % of the generated held-out turns are sure (the rules alone decided {} %)",
           "results_router.json", (("corpus", "sure_coverage"), ("corpus", "rule_coverage")), (percent, percent)),
    # ── start-up and shutdown (issue 27: "30-40 s" and "a second or two" did not hold)
    Figure(README, "loaded by transformers (load {} s in `python -m docgemma bench`", _AGENT, (("cpu_model", "load_s"),),
           (one,)),
    Figure(README, "the app ready {} s after launch in `python bench/bench_ui.py`", "results_ui.json",
           (("launch_to_ready_s",),), (one,)),
    Figure(README, "stops {} s after SIGTERM (exit status {}", "results_ui.json",
           (("shutdown_s",), ("shutdown_exit_code",)), (one, plain)),
    Figure(README, "| exit {} in {} s after SIGTERM", "results_ui.json",
           (("shutdown_exit_code",), ("shutdown_s",)), (plain, one)),
    # ── model calls per route and the agent's own time
    Figure(README, "| model calls per turn (a clinically meaningful model) | direct {}, single tool {}, three tools {} "
           "(budgets {}, {}, {})", _AGENT,
           tuple((("llm_calls_per_route", r, k)) for k in ("llm_calls", "seed_budget")
                 for r in ("direct", "single_tool", "multi_tool_3")), (plain,) * 6),
    Figure(README, "| agent overhead per turn (everything but the model) | p50 {} ms", _AGENT,
           (("deterministic_overhead", "p50_ms"),), (whole,)),
    Figure(README, "on the CPU demo model | {} model calls, {} ms", _ROUTES,
           (("rows", "transformers", "routes", "single_tool", "llm_calls"),
            lambda d: d["rows"]["transformers"]["routes"]["single_tool"]["turn_s_p50"] * 1000), (plain, whole)),
    Figure(README, "As shipped, the embedded model makes {} model calls on these routes (agent time {}–{} ms per turn)",
           _ROUTES, (lambda d: max(r["llm_calls"] for r in _shipped_routes(d)),
                     lambda d: min(r["agent_overhead_ms_p50"] for r in _shipped_routes(d)),
                     lambda d: max(r["agent_overhead_ms_p50"] for r in _shipped_routes(d))), (plain, whole, whole)),
    *[_route_row("fake", route) for route in ("direct", "single_tool", "multi_tool", "error_retry", "image")],
    _forced_row("direct", "direct"), _forced_row("single tool", "single_tool"), _forced_row("three tools", "multi_tool"),
    _forced_row("error then retry", "error_retry"),
    # ── tool choice on the embedded CPU model (golden runs; the command is in bench/README.md)
    Figure(README, "the page's 12 example prompts | {}/{} (before rule-based routing: {}/{},", "golden_model_mode/after.txt",
           (lambda t: _golden_tool(t, "page_examples.json")[0], lambda t: _golden_tool(t, "page_examples.json")[1],
            lambda t: _golden_tool(_read(RESULTS / "golden_model_mode/before.txt"), "page_examples.json")[0],
            lambda t: _golden_tool(_read(RESULTS / "golden_model_mode/before.txt"), "page_examples.json")[1]),
           (plain,) * 4),
    Figure(README, "| {}/{}: {} turns decided by rule, all right; {} left to the model", "golden_model_mode/after.jsonl",
           (lambda rows: sum(_golden_tool(_read(RESULTS / "golden_model_mode/after.txt"), f)[0]
                             for f in ("clinician_phrasing.json", "page_examples.json")),
            len, lambda rows: sum(map(_by_rule, rows)), lambda rows: sum(not _by_rule(r) for r in rows)), (plain,) * 4),
    # ── memory, concurrency, deployment, the record at scale
    Figure(README, "| peak memory decoding the largest accepted image | {} MB (before: {} MB)", "results_images.json",
           (("after", "max_peak_rss_mb_over_cases"), ("before", "max_peak_rss_mb_over_cases")), (whole, whole)),
    Figure(README, "| exactly 1 in {}/{} trials", "results_writes.json",
           (("modes", "approve+edit+approve", "trials_with_exactly_one_write"), ("modes", "approve+edit+approve", "trials")),
           (plain, plain)),
    Figure(README, "| 1 replica {} turns/s, 2 replicas {} turns/s", "results_deploy.json",
           (("throughput", 0, "turns_per_s"), ("throughput", 1, "turns_per_s")), (one, one)),
    Figure(README, "costs ~{} ms per turn over SQLite (p50 {} vs {} ms)", "results_deploy.json",
           (("checkpointer", "postgres_cost_per_turn_ms_p50"), ("checkpointer", "postgres", "p50_ms"),
            ("checkpointer", "sqlite", "p50_ms")), (whole, whole, whole)),
    Figure(README, "| record search at {}k resources, p50/p95 | p50 {}–{} ms, p95 at most {} ms for every search the app "
           "makes", "results_ehr_scale.json",
           (lambda d: d["resources"] / 1000, lambda d: min(_ehr_p50(d)), lambda d: max(_ehr_p50(d)),
            lambda d: max(_ehr_p95(d))), (whole, whole, whole, whole)),
    Figure(README, "(before: up to {} s without a patient filter)", "results_ehr_scale_before.json",
           (lambda d: max(_ehr_p50(d)) / 1000,), (one,)),
    # ── prompt budgets and backends
    Figure(README, "a prefix cache serves {} % of the prompt tokens after a turn's first call ({} % with the earlier "
           "instructions-first prompts)", "results_budgets.json",
           ((_AFTER, "summary", "prefix_share_after_first_call"), (_BEFORE, "summary", "prefix_share_after_first_call")),
           (lambda v: f"{v * 100:.0f}", percent)),
    Figure(README, "the worst single-tool turn's uncached prompt fell from {} to {} tokens (budget 4,000), and to {} when",
           "results_budgets.json",
           ((_BEFORE, "summary", _ACTIVE, "uncached_tokens", "max"), (_AFTER, "summary", _ACTIVE, "uncached_tokens", "max"),
            (_AFTER, "summary_cache_across_turns", _ACTIVE, "uncached_tokens", "max")), (whole, whole, whole)),
    Figure(README, "transformers {}×, llama.cpp {}×; llama.cpp decodes {}× faster than transformers on the same GGUF; "
           "its JSON grammar costs {}× per token", "results_backends.json",
           (("transformers_backend_vs_raw_generate", "text_ratio_backend_over_raw_tokens_per_s"),
            ("llamacpp_backend_vs_raw_llama", "text_ratio_backend_over_raw_tokens_per_s"),
            ("transformers_vs_llamacpp_same_gguf", "llamacpp_over_transformers_decode"),
            ("llamacpp_constrained_json_overhead", "grammar_overhead_ratio")), (two, two, one, one)),
    # ── safety benches
    Figure(README, "{} of {} dangerous generated orders pass a plain approval, {} of {} usual doses are severe",
           "results_dose_orders.json", (("dangerous_passing_plain_approval",), ("dangerous",), ("severe_on_usual",),
                                        ("usual",)), (whole,) * 4),
    Figure(README, "{} of {} expected conflicts found", "results_allergy_forms.json",
           (("conflicts_found",), ("conflicts_expected",)), (whole, whole)),
    Figure(README, "expected conflicts found ({} before this resolver)", "results_allergy_forms_before.json",
           (("conflicts_found",),), (whole,)),
    # ── the rule layer on held-out sets (coverage / precision, embedded model end to end)
    *_rules_row("dev", "golden_tests/heldout_dev.json"),
    *_rules_row("test", "golden_tests/heldout_test.json"),
    Figure(README, "| final ({} turns, `bench/data/heldout_final.json`) | {} % / {} %", "results_rules_final_firstpass.json",
           (("rules", "turns"), ("rules", "coverage"), ("rules", "precision")), (plain, percent, percent)),
    Figure(README, "% ({} wrong) | {}/{} ({} %) | {} % / {} % | {}/{} ({} %) |", "results_rules_final_firstpass.json",
           (lambda d: d["rules"]["covered"] - d["rules"]["right"], ("backends", "transformers", "route_and_tool_right"),
            ("backends", "transformers", "turns"), ("backends", "transformers", "accuracy"),
            lambda d: _final("coverage"), lambda d: _final("precision"), lambda d: _final("route_and_tool_right"),
            lambda d: _final("turns"), lambda d: _final("accuracy")),
           (plain, plain, plain, percent, percent, percent, plain, plain, percent)),
    Figure(README, "are routed by rule (right in {}–{} % of those)", "results_rules_final_firstpass.json",
           (lambda d: min(d["rules"]["precision"], _firstpass("test")),
            lambda d: max(d["rules"]["precision"], _firstpass("test"))),
           (lambda v: f"{v * 100:.0f}",) * 2),
    Figure(README, "Outlines' own compiler took up to {} s and {} MB per schema on first use", "results_constrained.json",
           (lambda d: max(x["build_s"] for x in _outlines_core(d)), lambda d: max(x["build_rss_mb"] for x in _outlines_core(d))),
           (whole, whole)),
    Figure(README, "so a patient's data is found in {}–{} ms (p50) at {}k", "results_ehr_scale.json",
           (lambda d: min(_ehr_p50(d)), lambda d: max(_ehr_p50(d)), lambda d: d["resources"] / 1000), (whole,) * 3),
    # ── the writeup's evidence table (figures that stood there when this test was written)
    Figure(WRITEUP, "| deterministic overhead per turn (instant model) | p50 {} ms ({} turns)", _AGENT,
           (("deterministic_overhead", "p50_ms"), ("deterministic_overhead", "turns")), (one, plain)),
    Figure(WRITEUP, "| embedded model: load; app launch to ready; first answer token | {} s; {} s; {} s (single tool)",
           _AGENT, (("cpu_model", "load_s"), lambda d: _ui("launch_to_ready_s"),
                    lambda d: _ui("Check FDA warnings for dofetilide", "first_token_s")), (one, one, one)),
    Figure(WRITEUP, "model calls per turn (oracle, {} turns): direct {}, single tool {}, multi-tool {} |", _GOLDEN,
           (lambda t: sum(v[2] for v in _calls(t).values()), lambda t: _calls(t)["direct"][0],
            lambda t: _calls(t)["single tool"][0], lambda t: _calls(t)["multi-tool"][0]), (plain,) * 4),
    Figure(WRITEUP, "| direct {} (max {}), single tool {} (max {}), multi-tool {} (max {}); seed 002's budget", _GOLDEN,
           tuple(_golden_call(r, i) for r in ("direct", "single tool", "multi-tool") for i in (0, 1)),
           (plain,) * 6),
    Figure(WRITEUP, "all {} files pass: {} clinical sessions / {} turns in `clinical_sessions.json`", _GOLDEN,
           (lambda t: _gated_golden_files(),
            lambda t: len(json.loads((ROOT / "golden_tests" / "clinical_sessions.json").read_text())["sessions"]),
            lambda t: sum(v[2] for v in _calls(t).values())), (plain,) * 3),
    Figure(WRITEUP, "| {} ms vs {} ms; {} ms to a clear \"unavailable\"", "results_tools.json",
           (("per_call_ms_cached", "in_process_p50"), ("per_call_ms_cached", "mcp_stdio_p50"),
            lambda d: d["time_to_fail_offline"]["real API hosts, no network"]["seconds"] * 1000), (two, one, whole)),
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


def _ui(*path: str) -> Any:
    return _at(json.loads((RESULTS / "results_ui.json").read_text()), path)


def _text(doc: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / doc).read_text())


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f"{f.doc}:{f.text[:50]}")
def test_each_stated_figure_is_the_one_its_results_file_holds(figure: Figure) -> None:
    stated = figure.text.format(*figure.values())
    assert stated in _text(figure.doc), f"{figure.doc} should say: {stated!r} (from bench/results/{figure.results})"


#: Claims that were measured untrue on this machine (issue 27) and have no results file: never stated again.
UNTRUE = [r"30[-–]40 s", r"a second or two", r"0\.5 s, no traceback", r"before: 5 calls, 36 s", r"41\.4 s",
          r"16\.3 ms", r"1,378 tokens", r"19–102 s", r"~11 min"]


@pytest.mark.parametrize("doc", [README, WRITEUP])
def test_figures_measured_untrue_are_gone(doc: str) -> None:
    text = _text(doc)
    assert not [p for p in UNTRUE if re.search(p, text)]


@pytest.mark.parametrize("doc", [README, WRITEUP, "docs/architecture.md", "bench/README.md"])
def test_no_document_states_a_test_count(doc: str) -> None:
    """A test count changes with every commit: stated nowhere (no test derives one)."""
    assert not re.search(r"\b\d[\d,]* (?:unit |integration |browser |e2e )?tests? (?:pass|passed|passing)\b",
                         _text(doc), re.IGNORECASE)


def test_figures_the_code_defines_are_the_codes() -> None:
    """A figure that is a count of the code's own table, not a measurement: read from the code."""
    from docgemma.clinical.dose_table import TABLE

    assert f"above a sourced maximum of {len(TABLE)} drugs" in _text(README)
