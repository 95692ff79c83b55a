"""Backends are given explicitly: the agent's demo model (``fake``) is passed to ``make_llm`` by the composition
(``runtime.load_llm``), not registered as a side effect of importing the agent."""

from __future__ import annotations

import pytest

import docgemma.agent  # noqa: F401  (importing the agent registers nothing)
from docgemma.agent.demo_llm import DEMO_RULES_NAME
from docgemma.config import Settings
from docgemma.llm import LLMError, make_llm
from docgemma.runtime import load_llm


def test_the_demo_model_comes_from_the_composition_not_from_an_import() -> None:
    with pytest.raises(LLMError, match="not provided"):
        make_llm(Settings(backend="fake"))
    assert load_llm(Settings(backend="fake")).name == DEMO_RULES_NAME
