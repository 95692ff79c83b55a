"""A transformers without what the prefix cache needs (before 5.15: no ``activate_past_recording`` on
sliding-window cache layers) turns prefix reuse off with one log line; model calls keep working.

Before this probe, every model call on such an install raised ``AttributeError`` from the cache it built.
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
    (record,) = caplog.records
    assert record.getMessage().startswith("prefix cache off: transformers ") and "5.15" in record.getMessage()
    messages = [Message(role="user", content="hi")]
    assert list(llm.generate_text(messages, temperature=0.0, max_tokens=4))  # no AttributeError
    assert llm.prefix_skipped == "turned off"
