"""A model not fit for medicine is not asked what no rule is sure of: one sentence on what the demo can do
here and the closest actions as buttons. A clinically meaningful model decides as before."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.rules import decide
from docgemma.agent.schemas import intent_schema
from docgemma.clinical.entities import extract_entities
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry

REG = default_registry()
UNSURE = "Check ICD I10 coding guidance"  # no drug, patient or lookup word: no rule is sure of it


def turn(llm: Any, message: str) -> TurnResult:
    result = Assistant(llm, REG).run_turn("weak", message)
    assert isinstance(result, TurnResult)
    return result


@pytest.mark.parametrize("llm", [FakeLLM(name="demo", clinically_meaningful=False), demo_llm()],
                         ids=["not-meaningful", "fake-demo-backend"])
def test_a_weak_model_is_not_asked_what_no_rule_is_sure_of(llm: Any) -> None:
    # The bare FakeLLM has no reply queued: asking it anything would fail the turn.
    result = turn(llm, UNSURE)
    assert result.llm_calls == 0
    assert result.intent == "DIRECT" and not result.tools
    assert "nothing was guessed" in result.answer and result.answer.count(". ") == 0  # one sentence
    assert result.timeline[1]["decision"] == "not decided"
    assert 1 <= len(result.follow_ups) <= 3


def test_the_offered_actions_are_ones_the_rules_act_on() -> None:
    for message in (UNSURE, "chek interactons between warfrin and asprin", "hmm, what about tramadol"):
        result = turn(FakeLLM(name="demo", clinically_meaningful=False), message)
        # After a failed look-up (the misspelled interaction check here) only related actions are offered,
        # possibly none: the open "studies on this topic" is no longer added after a failure.
        failed = any(t["status"] != "success" for t in result.tools)
        assert result.follow_ups or failed, message
        for action in result.follow_ups:
            state = {"user_query": action, "extracted_entities": extract_entities(action), "active_patient": None}
            decision = decide(state, REG)  # type: ignore[arg-type]
            assert decision is not None and decision.intent == "TOOL_NEEDED", (message, action)


def test_the_closest_actions_follow_what_the_message_named() -> None:
    result = turn(FakeLLM(name="demo", clinically_meaningful=False), "hmm, what about tramadol")
    assert result.llm_calls == 0
    assert "tramadol" in result.follow_ups[0], result.follow_ups


def test_a_meaningful_model_still_decides_what_no_rule_is_sure_of() -> None:
    llm = FakeLLM([intent_schema(REG.names)(intent="DIRECT", task_summary="coding guidance", suggested_tool=None),
                   "Coding guidance is outside what I can check here."])
    result = turn(llm, UNSURE)
    assert result.timeline[1]["node"] == "intent_classify" and result.timeline[1]["llm_calls"] == 1
    assert "nothing was guessed" not in result.answer
