"""docgemma/ops/metrics.py: model-call timing that passes everything else through, and turn counting."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from docgemma.agent.demo_llm import demo_llm
from docgemma.llm.base import LLMError, clinically_meaningful
from docgemma.llm.fake import FakeLLM
from docgemma.ops.metrics import Metrics


class Answer(BaseModel):
    text: str


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_model_calls_are_timed_and_failures_counted() -> None:
    metrics = Metrics()
    inner = FakeLLM([{"text": "a"}, LLMError("server down"), "streamed answer text"])
    llm = metrics.timed(inner)
    assert llm.generate_json([{"role": "user", "content": "q"}], Answer, temperature=0, max_tokens=8).text == "a"
    with pytest.raises(LLMError):
        llm.generate_json([{"role": "user", "content": "q"}], Answer, temperature=0, max_tokens=8)
    assert "".join(llm.generate_text([{"role": "user", "content": "q"}], temperature=0, max_tokens=8))
    assert sample(metrics, "docgemma_model_call_seconds_count", call="json") == 2
    assert sample(metrics, "docgemma_model_call_errors_total", call="json") == 1
    assert sample(metrics, "docgemma_model_call_seconds_count", call="text") == 1
    assert len(inner.calls) == 3 and llm.name == inner.name


def test_the_timed_model_keeps_the_wrapped_models_attributes() -> None:
    wrapped = Metrics().timed(demo_llm())
    assert clinically_meaningful(wrapped) is False and wrapped.supports_images


def test_a_turn_that_raises_is_counted_as_failed_and_leaves_nothing_in_flight() -> None:
    metrics = Metrics()

    def broken():  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")
        yield

    with pytest.raises(RuntimeError):
        list(metrics.turn(broken()))
    assert sample(metrics, "docgemma_turns_total", kind="turn", outcome="failed") == 1
    assert sample(metrics, "docgemma_turns_in_flight") == 0
