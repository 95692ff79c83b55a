"""Every golden case file passes in oracle mode; a broken expectation makes the runner exit non-zero."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from docgemma.golden import run_file

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden_file_passes_in_oracle_mode(path: Path) -> None:
    out, report = io.StringIO(), io.StringIO()
    assert run_file(path, None, out, report) == 0, report.getvalue()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records and all(r["checks"] and all(r["checks"].values()) for r in records)
    assert {"user_input", "intent", "tool", "args", "entities", "path", "router_actions", "clarification",
            "llm_calls", "prompt_tokens", "latency_ms"} <= set(records[0])


def test_seed_cases_are_all_present() -> None:
    assert {p.stem for p in FILES} >= {"seed002_unit", "seed002_integration", "seed002_regression"}
    unit = json.loads((FILES[0].parent / "seed002_unit.json").read_text())
    assert len(unit["single_turn"]) == 15


def test_failed_expectation_exits_non_zero(tmp_path: Path) -> None:
    case = {"single_turn": [{"user_input": "Check FDA warnings for dofetilide", "expected_intent": "TOOL_NEEDED",
                             "expected_tool": "check_drug_safety", "expected_router_action": "ASK_USER",
                             "mock_tool_result": {"status": "success", "data": {"w": 1}}}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(case))
    report = io.StringIO()
    assert run_file(path, None, None, report) == 1
    assert "FAIL single-1" in report.getvalue() and "router_action" in report.getvalue()
