"""The llama.cpp backend without a model: settings, install hint, projector discovery, and a llama.cpp grammar
for every schema the agent asks a model for (a schema the converter rejects would fail only at run time)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
    assert settings.backend == "llamacpp" and settings.prefix_cache == "off"
    assert Settings.from_env({}).prefix_cache == "on"
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
    import json

    from llama_cpp.llama_grammar import json_schema_to_gbnf

    grammar = json_schema_to_gbnf(json.dumps(schema.model_json_schema()))
    assert "root ::=" in grammar
    assert 'space ::= " "?' in grammar  # at most one space between tokens: no whitespace for the model to spend
