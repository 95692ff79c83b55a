"""A thanks or a goodbye ("thanks, that's all", "thank you", "that's all for now", "cheers, bye") is answered by code
as a closing: no model call, no greeting's introduction, nothing new offered, nothing looked up or written. A message
that asks for something after the thanks is no closing."""

from __future__ import annotations

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.nodes.synthesize import CLOSING_REPLY
from docgemma.agent.patterns import is_closing
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry

CLOSINGS = ["thanks, that's all", "thank you", "that's all for now", "Thanks!", "cheers, bye", "ok great, thanks",
            "Thank you so much, that's all I need.", "that’s all, thanks", "bye for now"]


@pytest.mark.parametrize("llm", [demo_llm(), FakeLLM(name="served")], ids=["demo", "a model fit for medicine"])
@pytest.mark.parametrize("message", CLOSINGS)
def test_a_closing_is_answered_by_code_as_a_closing(llm: object, message: str) -> None:
    # The FakeLLM has nothing queued: any call to it would fail the turn.
    result = Assistant(llm, default_registry()).run_turn("closing", message)  # type: ignore[arg-type]
    assert isinstance(result, TurnResult)
    assert result.llm_calls == 0 and not result.tools and not result.writes
    assert result.answer == CLOSING_REPLY
    assert "Hello" not in result.answer and "I can help with" not in result.answer
    assert result.follow_ups == []


@pytest.mark.parametrize("message", ["ok", "thanks, what about warfarin?", "thank you - now check her potassium",
                                     "hello", "thanks Grace Mensah's chart please", "all of her meds"])
def test_a_message_that_asks_for_more_is_no_closing(message: str) -> None:
    assert not is_closing(message)
