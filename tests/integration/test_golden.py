"""Every golden case file passes in oracle mode; a broken expectation makes the runner exit non-zero."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from docgemma.eval.golden import is_heldout, run_file

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))


@pytest.mark.parametrize("path", [f for f in FILES if not is_heldout(f)], ids=lambda p: p.stem)
def test_golden_file_passes_in_oracle_mode(path: Path) -> None:
    out, report = io.StringIO(), io.StringIO()
    assert run_file(path, None, out, report) == 0, report.getvalue()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records and all(r["checks"] and all(r["checks"].values()) for r in records)
    assert {"user_input", "intent", "tool", "args", "entities", "path", "router_actions", "clarification",
            "llm_calls", "prompt_tokens", "latency_ms"} <= set(records[0])


@pytest.mark.parametrize("path", [f for f in FILES if is_heldout(f)], ids=lambda p: p.stem)
def test_every_rule_decision_on_a_held_out_set_is_right(path: Path) -> None:
    """On phrasings no rule was written from, code decides only what it gets right, and writes only where asked."""
    from docgemma.eval.oracle import expected_tools

    doc = json.loads(path.read_text())
    turns = [t for s in doc.get("sessions", []) for t in s["user_inputs"]] + doc.get("single_turn", [])
    out = io.StringIO()
    assert run_file(path, None, out, io.StringIO()) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == len(turns)
    writes = {"prescribe_medication", "add_allergy", "save_clinical_note"}
    wrong = []
    for turn, record in zip(turns, records, strict=True):
        expected = expected_tools(turn)
        if any(t in writes and t not in expected for t in record["tools"]):
            wrong.append((turn["user_input"], "unasked write", record["tools"]))
        if record["decided_by_rule"]["intent_classify"]:
            first = expected[0] if expected else None
            if record["intent"] != turn["expected_intent"] or record["tool"] != first:
                wrong.append((turn["user_input"], record["intent"], record["tool"]))
    assert not wrong


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


def test_every_page_example_has_a_golden_turn() -> None:
    from docgemma.ui.page import EXAMPLES

    doc = json.loads((FILES[0].parent / "page_examples.json").read_text())
    turns = [t["user_input"] for s in doc["sessions"] for t in s["user_inputs"]]
    assert turns == EXAMPLES


def test_clinician_phrasing_set_is_large_and_covers_every_tool() -> None:
    from docgemma.tools.registry import default_registry

    doc = json.loads((FILES[0].parent / "clinician_phrasing.json").read_text())
    singles = doc["single_turn"]
    assert len(singles) >= 60
    assert sum(t["expected_intent"] == "DIRECT" for t in singles) >= 15  # the traps
    named = {t.get("expected_tool") for t in singles} | {x for t in singles for x in t.get("expected_tools", [])}
    page = json.loads((FILES[0].parent / "page_examples.json").read_text())
    named |= {t.get("expected_tool") for s in page["sessions"] for t in s["user_inputs"]}
    named |= {x for s in doc["sessions"] for t in s["user_inputs"] for x in [t.get("expected_tool")]}
    missing = set(default_registry().names) - named
    assert not missing, missing


def test_unknown_backend_is_rejected() -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "docgemma", "golden", str(FILES[0]), "--backend", "trnsformers"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
