"""A transformers without what the prefix cache needs turns prefix reuse off with one log line; model calls
keep working. Before 5.15 sliding-window cache layers have no ``activate_past_recording`` (every model call
raised ``AttributeError``); 5.15-5.17 have it but hand attention more positions than the window mask is sized
for (every call past the window raised "size of tensor a … must match …", seen on the floors run).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from docgemma.llm.base import Message
from docgemma.llm.prefix_cache import PrefixCache, unsupported
from docgemma.llm.transformers_backend import TransformersLLM
from tests.unit.test_transformers_loading import FakeModel, FakeTokenizer

pytestmark = pytest.mark.floors


class GemmaShapedFake(FakeModel):
    """FakeModel with a Gemma 3 text config: its cache has sliding-window layers."""

    def __init__(self) -> None:
        super().__init__()
        from transformers.models.gemma3.configuration_gemma3 import Gemma3TextConfig

        self.config = Gemma3TextConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                       num_attention_heads=1, num_key_value_heads=1, head_dim=16, sliding_window=8)

    def generate(self, input_ids: Any, attention_mask: Any = None, streamer: Any = None, **kwargs: Any) -> Any:
        cache = kwargs.get("past_key_values")
        assert cache is None or hasattr(cache, "layers")
        return super().generate(input_ids, attention_mask, streamer, **kwargs)


def test_the_tested_transformers_has_what_the_cache_needs() -> None:
    assert unsupported() is None
    assert PrefixCache(GemmaShapedFake()).take([1, 2, 3], False).cache is not None


def test_missing_feature_turns_reuse_off_with_one_log_line(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    from transformers.cache_utils import DynamicSlidingWindowLayer

    monkeypatch.delattr(DynamicSlidingWindowLayer, "activate_past_recording")  # what transformers 5.14 lacks
    with pytest.raises(AttributeError):  # what every call did before
        PrefixCache(GemmaShapedFake()).take([1, 2, 3], False)
    with caplog.at_level(logging.WARNING, logger="docgemma.llm.transformers_backend"):
        llm = TransformersLLM("fake", GemmaShapedFake(), FakeTokenizer())
    assert llm.prefix_cache is False
    (line,) = [r.getMessage() for r in caplog.records if r.name == "docgemma.llm.transformers_backend"]
    assert line.startswith("prefix cache off: transformers ") and "5.18 or later" in line
    messages = [Message(role="user", content="hi")]
    assert list(llm.generate_text(messages, temperature=0.0, max_tokens=4))  # no AttributeError
    assert llm.prefix_skipped == "turned off"


def test_recording_layers_that_overflow_the_window_mask_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers 5.15-5.17: a recording layer returned every position, not the window the mask expects."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    def update_515(self: Any, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> Any:
        return DynamicLayer.update(self, key_states, value_states)  # the full states, as 5.15 returned them

    monkeypatch.setattr(DynamicSlidingWindowLayer, "update", update_515)
    reason = unsupported()
    assert reason is not None and "positions to a 4-position mask" in reason and "5.18 or later" in reason
