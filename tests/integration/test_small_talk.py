"""The demo model's one job (issue 27: the judges never saw a model at work on the CPU default): a plainly
non-clinical turn gets a friendly line written by the model, checked by code, then the capabilities by code. A
clinical message never reaches it; the demo rules (no model) still answer a greeting by code."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent import small_talk
from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry

REG = default_registry()
LINE = "Hello! How can I assist you today?"
#: Messages a greeting pattern could start but that name something clinical: never sent to the demo model.
CLINICAL = [
    "hello, prescribe warfarin", "hi, what is her creatinine?", "thanks, check interactions", "hi pat-44201",
    "hello Grace Mensah", "thanks, any allergies?", "hi, trials for copd?", "hello, 500 mg", "What is hypertension?",
    "Find patient Amina Okafor and check her chart", "Check ICD I10 coding guidance", "hola, buenos días",
    "What can you do?",  # the capabilities are code's to state: asked, SmolLM2 claimed "editing or optimization"
]


def turn(llm: Any, message: str) -> TurnResult:
    result = Assistant(llm, REG).run_turn("small-talk", message)
    assert isinstance(result, TurnResult)
    return result


def demo_model(*replies: str) -> FakeLLM:
    """A model flagged not fit for medicine, as the embedded SmolLM2 is; with no reply queued, asking it fails."""
    return FakeLLM(list(replies), name="SmolLM2-135M-Instruct (embedded)", supports_images=False,
                   clinically_meaningful=False)


# "thanks" is a closing, answered by code without the model (tests/integration/test_closings.py).
@pytest.mark.parametrize("message", ["hello", "hey there", "Hello, what can you do?", "good morning!"])
def test_a_greeting_makes_exactly_one_model_call_and_code_adds_the_capabilities(message: str) -> None:
    llm = demo_model(LINE)
    result = turn(llm, message)
    assert result.llm_calls == 1 and len(llm.calls) == 1
    assert llm.calls[0].kind == "text" and llm.calls[0].max_tokens == small_talk.MAX_TOKENS
    assert "no medical information" in llm.calls[0].prompt
    assert result.answer.startswith(LINE) and "I can help with:" in result.answer
    step = result.timeline[-1]
    assert step["node"] == "synthesize" and step["llm_calls"] == 1
    assert "written by the demo model" in step["decision"] and "written by code" in step["decision"]
    assert result.confidence is None


@pytest.mark.parametrize("message", CLINICAL)
def test_a_clinical_message_never_reaches_the_demo_model(message: str) -> None:
    llm = demo_model()  # nothing queued: any call would be recorded and fail the turn
    result = turn(llm, message)
    assert llm.calls == [] and result.llm_calls == 0, (message, result.timeline)


@pytest.mark.parametrize("reply", [
    "Hello! Take 500 mg of paracetamol for your pain.", "Hi, I can diagnose your heart condition.",
    "Hello! Warfarin is a good choice.", "Hi! Call 911.",
    # Said by SmolLM2 on this path: claims about what it does are not shown.
    "I'm here to assist with any personal project that requires editing or optimization.",
    "Hello there! I'm here for the best of everything and my name is Alex."])
def test_a_reply_that_names_anything_clinical_is_replaced_by_codes_greeting(reply: str) -> None:
    result = turn(demo_model(reply), "hello")
    assert result.llm_calls == 1
    assert reply not in result.answer and result.answer.startswith("Hello. I am DocGemma Connect")
    assert "not shown" in result.timeline[-1]["decision"]


def test_the_demo_rules_and_a_meaningful_model_keep_their_own_greetings() -> None:
    assert turn(demo_llm(), "hello").llm_calls == 0  # the rule stand-in has no language model
    meaningful = FakeLLM(["Hello there."])
    result = turn(meaningful, "hello")
    assert result.llm_calls == 1 and "written by the demo model" not in result.timeline[-1]["decision"]


def test_the_kept_line_is_one_sentence_scrubbed_and_capped() -> None:
    line, why = small_talk.kept("Hi there!  " + "Nice to see you. " * 30, REG)
    assert line == "Hi there! Nice to see you." and not why
    assert small_talk.kept('"Hello! How can I assist you today?"', REG) == ("Hello! How can I assist you today?", "")
    assert small_talk.kept("", REG) == (None, "the model wrote nothing")
    line, _ = small_talk.kept("Hello! You can use search_patient anytime", REG)
    assert "search_patient" not in (line or "")  # scrubbed to its label, which names a patient: not shown at all
