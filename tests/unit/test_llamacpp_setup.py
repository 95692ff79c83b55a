"""The llama.cpp backend without a model: settings, install hint, projector discovery, and a llama.cpp grammar
for every schema the agent asks a model for (a schema the converter rejects would fail only at run time)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from docgemma.agent.schemas import (
    ImageFindingsOutput,
    ResultAssessment,
    RetryStrategy,
    intent_schema,
    tool_selection_schema,
)
from docgemma.config import BACKENDS, ConfigError, Settings
from docgemma.llm.base import MissingDependencyError
from docgemma.llm.llamacpp_backend import find_projector, load_llamacpp_llm
from docgemma.tools.imaging import ImageAnalysisOutput
from docgemma.tools.registry import default_registry


def agent_schemas() -> list[type[BaseModel]]:
    names = default_registry().names
    schemas: list[type[BaseModel]] = [intent_schema(names), tool_selection_schema(names), ResultAssessment,
                                      RetryStrategy, ImageFindingsOutput, ImageAnalysisOutput]
    schemas += [spec.args_model for spec in default_registry()]
    return schemas


def test_backend_and_prefix_cache_settings() -> None:
    assert "llamacpp" in BACKENDS
    settings = Settings.from_env({"DOCGEMMA_BACKEND": "llamacpp", "DOCGEMMA_PREFIX_CACHE": "off"})
    assert settings.backend == "llamacpp" and settings.prefix_cache is False
    assert Settings.from_env({}).prefix_cache is None
    with pytest.raises(ConfigError, match="DOCGEMMA_PREFIX_CACHE"):
        Settings.from_env({"DOCGEMMA_PREFIX_CACHE": "maybe"})


def test_missing_llama_cpp_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import raises ImportError
    with pytest.raises(MissingDependencyError, match="setup-llamacpp"):
        load_llamacpp_llm()


def test_projector_is_found_beside_the_model(tmp_path: Path) -> None:
    model = tmp_path / "medgemma-4b-it-Q4_K_M.gguf"
    model.write_bytes(b"")
    assert find_projector(model) is None
    (tmp_path / "mmproj-F16.gguf").write_bytes(b"")
    assert find_projector(model) == tmp_path / "mmproj-F16.gguf"


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                    reason="llama-cpp-python is not installed: bash scripts/dev.sh setup-llamacpp")
@pytest.mark.parametrize("schema", agent_schemas(), ids=lambda s: s.__name__)
def test_every_agent_schema_becomes_a_llamacpp_grammar(schema: type[BaseModel]) -> None:

    import llama_cpp

    from docgemma.llm.llamacpp_backend import compact_gbnf

    grammar = compact_gbnf(schema)
    assert "root ::=" in grammar
    assert 'space ::= ""' in grammar and '" "?' not in grammar  # compact JSON: no whitespace to spend tokens on
    assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None


class StubLlama:
    """Stands in for ``llama_cpp.Llama`` with a vision handler: records the chat calls and resets."""

    def __init__(self) -> None:
        self.metadata = {"tokenizer.chat_template": "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"}
        self._model = SimpleNamespace(token_get_text=lambda i: f"<{i}>")
        self.calls: list[dict[str, Any]] = []
        self.resets = 0

    def token_eos(self) -> int:
        return 2

    def token_bos(self) -> int:
        return 1

    def reset(self) -> None:
        self.resets += 1

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"choices": [{"message": {"content": '{"quality": "success_rich", "brief_summary": "ok"}'}}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312}}


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                    reason="llama-cpp-python is not installed: bash scripts/dev.sh setup-llamacpp")
def test_images_go_through_the_vision_handler_as_data_urls_under_the_schema() -> None:
    """The wiring of the projector path (libmtmd itself is untested: no mmproj file offline)."""
    from PIL import Image

    from docgemma.llm.base import Message
    from docgemma.llm.llamacpp_backend import LlamaCppLLM

    stub = StubLlama()
    llm = LlamaCppLLM("medgemma", stub, vision_handler=object())
    messages = [Message(role="system", content="Assess."), Message(role="user", content="this X-ray")]
    out = llm.generate_json(messages, ResultAssessment, temperature=0.0, max_tokens=64,
                            images=[Image.new("RGB", (8, 8))])
    assert out.quality == "success_rich" and llm.supports_images
    (call,) = stub.calls
    assert call["response_format"] == {"type": "json_object", "schema": ResultAssessment.model_json_schema()}
    parts = call["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]  # text then image, as the model card
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,") and parts[0]["text"] == "this X-ray"
    assert stub.resets == 2  # the context holds image embeddings: no prefix reuse into or out of it
    assert llm.last_usage is not None and (llm.last_usage.prompt_tokens, llm.last_usage.decoded_tokens) == (300, 12)
