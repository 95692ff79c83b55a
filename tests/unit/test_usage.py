"""Token accounting: what each model call cost reaches the timeline, once per call."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from docgemma.agent.trace import NodeTrace
from docgemma.llm.base import LLMError, Messages, Usage
from docgemma.llm.fake import FakeLLM
from docgemma.llm.observed import ModelCall, ObservedLLM
from docgemma.ui.messages import _cost


class Answer(BaseModel):
    text: str


class Reporting:
    """A backend that measures its own calls (as the real backends do) and must not be tokenized twice."""

    name = "reporting"
    supports_images = False

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.last_usage: Usage | None = None
        self.counted = 0

    def generate_json(self, messages: Messages, schema: type[Any], *, temperature: float, max_tokens: int,
                      images: Sequence[Any] = ()) -> Any:
        if self.fail:
            raise LLMError("server down")
        self.last_usage = Usage(prompt_tokens=120, cached_tokens=100, decoded_tokens=7, seconds=0.5)
        return schema(text="ok")

    def generate_text(self, messages: Messages, *, temperature: float, max_tokens: int,
                      images: Sequence[Any] = ()) -> Iterator[str]:
        yield "a "
        yield "b"
        self.last_usage = Usage(prompt_tokens=50, cached_tokens=0, decoded_tokens=2, seconds=0.25)

    def count_tokens(self, messages: Messages) -> int:
        self.counted += 1
        return 999


MSGS: Messages = [{"role": "user", "content": "check FDA warnings for dofetilide"}]


def test_reported_usage_is_read_not_recounted() -> None:
    backend = Reporting()
    trace = NodeTrace("tool_select", backend)  # type: ignore[arg-type]
    assert trace.llm is not None
    trace.llm.generate_json(MSGS, Answer, temperature=0, max_tokens=10)
    assert "".join(trace.llm.generate_text(MSGS, temperature=0, max_tokens=10)) == "a b"
    event = trace.event("done")
    assert (event["llm_calls"], event["prompt_tokens"], event["cached_tokens"], event["decoded_tokens"]) == (2, 170, 100, 9)
    assert event["model_ms"] == pytest.approx(750)
    assert backend.counted == 0  # the prompt was not tokenized a second time just to be counted


def test_a_failed_call_is_counted_once_and_not_as_the_previous_one() -> None:
    backend = Reporting()
    calls: list[ModelCall] = []
    model = ObservedLLM(backend, [calls.append])  # type: ignore[arg-type]
    model.generate_json(MSGS, Answer, temperature=0, max_tokens=10)
    backend.fail = True
    with pytest.raises(LLMError):
        model.generate_json(MSGS, Answer, temperature=0, max_tokens=10)
    assert [c.usage.prompt_tokens for c in calls] == [120, 999]  # measured by count_tokens, not copied
    assert calls[1].output is None and isinstance(calls[1].error, LLMError)


def test_backend_without_usage_is_counted_with_its_tokenizer() -> None:
    calls: list[ModelCall] = []
    model = ObservedLLM(FakeLLM(replies=[Answer(text="x")]), [calls.append])
    model.generate_json(MSGS, Answer, temperature=0, max_tokens=10)
    assert [(c.what, c.usage.prompt_tokens, c.usage.decoded_tokens) for c in calls] == [("Answer", 5, 0)]


def test_timeline_title_shows_tokens_and_cache() -> None:
    event = {"node": "tool_select", "label": "Choosing", "decision": "d", "detail": "", "duration_ms": 1.0,
             "llm_calls": 1, "prompt_tokens": 230, "cached_tokens": 180, "decoded_tokens": 12, "model_ms": 5.0}
    assert _cost(event) == " · 1 model call (230 prompt tokens, 180 from cache, 12 decoded)"  # type: ignore[arg-type]
    assert _cost({**event, "llm_calls": 0}) == ""  # type: ignore[arg-type]
