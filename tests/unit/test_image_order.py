"""Every backend puts the turn's text before its image, as MedGemma's model card does (its examples give the
instruction first, then the image) and as the model was tuned. The OpenAI-compatible (vLLM) and llama.cpp
backends are checked on what they send in tests/integration/test_openai_backend.py and
tests/unit/test_llamacpp_setup.py; the transformers backend here, on what its chat template receives."""

from __future__ import annotations

from typing import Any

from docgemma.llm.base import Message
from docgemma.llm.transformers_backend import TransformersLLM


class RecordingTemplater:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def apply_chat_template(self, messages: list[dict[str, Any]], **_: Any) -> str:
        self.seen = messages
        return "prompt"


def test_transformers_sends_text_then_image() -> None:
    templater = RecordingTemplater()
    llm = TransformersLLM(name="t", model=None, tokenizer=templater, processor=templater)
    llm.render_prompt([Message(role="system", content="Describe."), Message(role="user", content="this X-ray")], n_images=1)
    assert templater.seen[-1]["content"] == [{"type": "text", "text": "this X-ray"}, {"type": "image"}]
