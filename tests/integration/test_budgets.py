"""The per-turn budgets (docs/design-notes.md) on every golden turn, metered as MedGemma would be asked (Gemma 3 tokenizer, the
golden oracle deciding, the largest shipped patient summary as the active patient's context), and the
bench's per-route figures (``python -m docgemma bench --backend fake``)."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.eval.budgets import (
    SINGLE_TOOL_DECODED,
    SINGLE_TOOL_UNCACHED,
    call_budget,
    golden_paths,
    metered_turns,
    summarise,
    violations,
)
from docgemma.llm.base import MissingDependencyError

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    from docgemma.eval.metering import gemma_tokenizer

    try:
        gemma_tokenizer()
    except MissingDependencyError as exc:
        pytest.skip(str(exc))
    return metered_turns(golden_paths())


def test_every_golden_turn_meets_the_call_and_token_budgets(records: list[dict[str, Any]]) -> None:
    assert violations(records) == []
    single = [r for r in records if len(r["tools"]) == 1 and r["active_patient"]]
    assert len(single) >= 40  # the budget is checked where it matters: a patient summary in every prompt
    assert max(r["prompt_tokens"] - r["cached_tokens"] for r in single) <= SINGLE_TOOL_UNCACHED
    assert all(r["llm_calls"] <= call_budget(r) for r in records)


def test_a_connection_question_is_routed_by_rule_within_budget(records: list[dict[str, Any]]) -> None:
    """It matched no rule: the model classified the intent and chose the tool (5 calls, 325 decoded tokens)."""
    turn = next(r for r in records if r["user_input"] == "How is her hypertension connected to her current medications?")
    assert turn["llm_calls"] <= call_budget(turn) and turn["decoded_tokens"] <= SINGLE_TOOL_DECODED


def test_a_prefix_cache_serves_most_of_every_call_after_a_turns_first(records: list[dict[str, Any]]) -> None:
    # Instructions-first prompts (the layout before the shared prefix): 1.8%.
    assert summarise(records)["prefix_share_after_first_call"] >= 0.7


def test_bench_routes_on_the_fake_backend_and_a_missing_backend() -> None:
    from docgemma.eval.bench_routes import ROUTE_TURNS, backend_figures, markdown

    rows = backend_figures("fake", repeats=1)["fake"]["routes"]
    assert set(rows) == set(ROUTE_TURNS)
    assert [rows[r]["llm_calls"] for r in ("direct", "single_tool", "multi_tool", "error_retry")] == [1, 2, 4, 3]
    assert rows["single_tool"]["uncached_prompt_tokens"] <= SINGLE_TOOL_UNCACHED
    assert rows["single_tool"]["decoded_tokens"] <= SINGLE_TOOL_DECODED
    assert rows["error_retry"]["tools"] == ["check_drug_safety", "check_drug_safety"]
    assert rows["single_tool"]["tools"] == ["check_drug_safety"]
    assert rows["multi_tool"]["tools"] == ["search_patient", "get_patient_chart", "check_drug_safety"]
    assert "input_assembly" in [c["node"] for c in rows["image"]["calls_by_node"]]  # the vision call
    missing = backend_figures("no-such-backend", repeats=1)
    assert "not available" in missing["no-such-backend"]["skipped"]
    table = markdown({"fake": {"label": "x", "routes": rows}, **missing}, "cmd")
    assert "| fake | single_tool | 2 |" in table and "skipped" in table
