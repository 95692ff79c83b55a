"""The experiment harness: datasets, trials, resume, parse errors, tables, plots, report, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docgemma.agent.demo_llm import demo_llm
from docgemma.eval.experiments.core import load_cases
from docgemma.eval.experiments.runner import load_records, run_suite
from docgemma.eval.experiments.suites import SUITE_NAMES, all_suites
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry


def test_every_suite_has_at_least_20_labelled_cases_and_tool_select_covers_every_tool() -> None:
    suites = all_suites()
    assert set(suites) == set(SUITE_NAMES)
    for suite in suites.values():
        assert len(suite.cases()) >= 20, suite.name
        ids = [c["id"] for c in suite.cases()]
        assert len(ids) == len(set(ids)), suite.name
    tools = {c["expected_tool"] for c in load_cases("tool_select")}
    assert tools == set(default_registry().names)
    # The first cases (one per tool) cover every tool, so a --limit run still sees all of them.
    assert {c["expected_tool"] for c in load_cases("tool_select")[:len(tools)]} == tools


def test_a_run_writes_one_record_per_trial_and_a_resumed_run_skips_them(tmp_path: Path) -> None:
    suite = all_suites()["tool_select"]
    jsonl = tmp_path / "calls.jsonl"
    first = list(run_suite(suite, demo_llm(), jsonl, limit=2, progress=False))
    assert len(first) == 2 * len(suite.variants)
    record = first[0]
    assert {"variant", "case", "prompt_tokens", "output", "latency_s", "correct", "llm_calls", "raw"} <= set(record)
    assert record["prompt_tokens"] > 0 and record["llm_calls"] == 1
    two_stage = next(r for r in first if r["variant"] == "two_stage")
    assert two_stage["llm_calls"] == 2 and "args_correct" in two_stage
    rule = next(r for r in first if r["variant"] == "rule")
    assert rule["llm_calls"] == 0 and rule["prompt_tokens"] == 0
    assert list(run_suite(suite, demo_llm(), jsonl, limit=2, progress=False)) == []
    assert len(load_records(jsonl)) == len(first)


def test_output_that_does_not_validate_is_a_parse_error_scored_wrong(tmp_path: Path) -> None:
    suite = all_suites()["result_classify"]
    llm = FakeLLM(responder=lambda call: '{"quality": "excellent"}')
    records = list(run_suite(suite, llm, tmp_path / "c.jsonl", limit=1, variants=["project"], progress=False))
    assert records[0]["parse_error"] is True and records[0]["correct"] is False
    assert "excellent" in records[0]["output"]


def test_the_rules_get_every_anti_pattern_decision_right() -> None:
    """Why code owns these decisions: on the same cases the model is asked, the rules are right."""
    suite = all_suites()["anti_patterns"]
    rule = next(v for v in suite.variants if v.name == "rule")
    results = [rule.trial(None, case) for case in suite.cases()]
    assert {r["category"] for r in results} == {"sufficiency", "ask_user", "skip", "plan"}
    assert all(r["correct"] for r in results), [r for r in results if not r["correct"]]


def test_synthesis_scoring_catches_leaks_empty_output_and_answers_from_memory() -> None:
    from docgemma.eval.experiments.suites.synthesize import score

    case = {"facts": ["torsade", "ECG|electrocardiog"], "must_not": ["thyroid"]}
    assert score(case, "Risk of torsade de pointes; start with ECG monitoring.")["correct"]
    assert score(case, "check_drug_safety says torsade; ECG.")["leak"]
    assert score(case, "<think>long reasoning cut off")["empty"]
    assert score(case, "Torsade, ECG, and thyroid problems")["from_memory"]
    assert score(case, "Torsade only")["fact_rate"] == 0.5


def test_cli_writes_table_plots_and_a_report_with_seed_002_figures(tmp_path: Path) -> None:
    from docgemma.__main__ import main

    out = tmp_path / "run"
    assert main(["experiment", "anti_patterns", "--backend", "fake", "--limit", "4", "--out", str(out),
                 "--no-progress"]) == 0
    for name in ("calls.jsonl", "anti_patterns.csv", "anti_patterns.md", "report.md", "anti_patterns_accuracy.png",
                 "anti_patterns_latency.png", "anti_patterns_model_vs_rule.png"):
        assert (out / name).exists(), name
    report = (out / "report.md").read_text()
    assert "seed002" in report and "0% (§13; Part III §30)" in report and "![anti_patterns_accuracy]" in report
    rows = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in rows} == {"model", "rule"}


def test_unknown_variant_is_a_clear_error(tmp_path: Path) -> None:
    suite = all_suites()["intent_classify"]
    with pytest.raises(ValueError, match="no variant"):
        list(run_suite(suite, None, tmp_path / "c.jsonl", variants=["nope"], progress=False))


def test_synthesis_judge_scores_each_answer_when_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from docgemma.eval.experiments.suites import synthesize

    judge = FakeLLM(responder=lambda call: {"score": 7})
    monkeypatch.setitem(synthesize.JUDGE, "model", judge)
    records = list(run_suite(synthesize.SUITE, demo_llm(), tmp_path / "c.jsonl", limit=1, variants=["t0.5_256"],
                             progress=False))
    assert records[0]["judge_score"] == 7
    assert "Answer:" in judge.calls[0].prompt and "Clinician's question" in judge.calls[0].prompt
