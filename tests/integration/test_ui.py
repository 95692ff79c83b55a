"""The first Gradio chat: event → message functions, and one streamed turn through gradio_client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry
from docgemma.ui.app import build_demo
from docgemma.ui.events import apply_event
from tests.conftest import intent

EVENT = {"node": "intent_classify", "label": "Understanding the question", "decision": "DIRECT", "detail": "<b>x</b>",
         "duration_ms": 1200.0, "llm_calls": 1, "prompt_tokens": 10}


def test_events_become_thoughts_then_a_streamed_answer() -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    history = apply_event(history, {"type": "node_start", "node": "intent_classify", "label": "Understanding the question"})
    assert history[-1]["metadata"]["status"] == "pending"
    history = apply_event(history, {"type": "node_end", "event": EVENT})
    thought = history[-1]
    assert thought["metadata"]["status"] == "done" and thought["metadata"]["duration"] == 1.2
    assert "<b>" not in thought["content"] and "&lt;b&gt;" in thought["content"]  # tool/model text is escaped
    history = apply_event(history, {"type": "token", "text": "Hyper"})
    history = apply_event(history, {"type": "token", "text": "tension ![x](https://evil/img.png)"})
    assert history[-1]["content"].startswith("Hypertension") and "![x]" not in history[-1]["content"]
    result = TurnResult(answer="Hypertension.", confidence="medium",
                        sources=[{"title": "Label", "url": "https://example.org/a"},
                                 {"title": "x", "url": "javascript:alert(1)"}])
    history = apply_event(history, {"type": "done", "result": result})
    assert "Confidence: medium" in history[-1]["content"] and "[Label](https://example.org/a)" in history[-1]["content"]
    assert "javascript:" not in history[-1]["content"] and len(history) == 3


@pytest.fixture
def served() -> Iterator[str]:
    fake = FakeLLM([intent("DIRECT", "definition"), "Hypertension is raised blood pressure."])
    demo = build_demo(Assistant(fake, default_registry()), "Model: fake.")
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    yield url
    demo.close()


@pytest.mark.slow
def test_a_turn_through_gradio_client(served: str) -> None:
    from gradio_client import Client

    client = Client(served, verbose=False)
    history, _box = client.predict({"text": "What is hypertension?", "files": []}, [], api_name="/respond")
    titles = [m["metadata"]["title"] for m in history if m.get("metadata")]
    assert any(t.startswith("Understanding the question") for t in titles)
    assert "Hypertension is raised blood pressure." in str(history[-1]["content"])
