"""The clinical golden sessions: enough sessions and turns, the error kinds the issue names, every
tool turn answered by a mock (no live API), and the file says its mock data are synthetic."""

from __future__ import annotations

import json
from pathlib import Path

PATH = Path(__file__).parents[2] / "golden_tests" / "clinical_sessions.json"


def test_clinical_sessions_cover_settings_errors_and_are_marked_synthetic() -> None:
    doc = json.loads(PATH.read_text())
    sessions = doc["sessions"]
    turns = [t for s in sessions for t in s["user_inputs"]]
    assert len(sessions) >= 20 and len(turns) >= 80
    assert "SYNTHETIC TEST DATA" in doc["description"]
    ids = " ".join(s["session_id"] for s in sessions)
    for setting in ("ward-round", "ed-", "pharmacy", "oncology", "paediatrics", "obstetrics", "rural", "icu",
                    "transplant"):
        assert setting in ids, setting
    errors = {m.get("error_type") for t in turns for m in [t.get("mock_tool_result") or {}, *t.get("mock_tool_results", [])]}
    assert {"timeout", "drug_not_in_database"} <= errors
    actions = {t.get("expected_router_action") for t in turns}
    assert {"RETRY", "ASK_USER", "SKIP"} <= actions
    assert any(t["user_input"] == "the second one" for t in turns)
    assert any(t.get("approval") == "reject" for t in turns)
    tool_turns = [t for t in turns if t.get("expected_tool")]
    assert all("mock_tool_result" in t or "mock_tool_results" in t for t in tool_turns)
