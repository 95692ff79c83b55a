"""Model backends behind one protocol (:class:`docgemma.llm.base.LLM`)."""

from __future__ import annotations

from docgemma.config import Settings
from docgemma.llm.base import LLM, LLMError, LLMOutputError, Message, MissingDependencyError

__all__ = ["LLM", "LLMError", "LLMOutputError", "Message", "MissingDependencyError", "make_llm"]


def make_llm(settings: Settings) -> LLM:
    """Build the backend ``settings.backend`` names (models load here, which can take a while)."""
    if settings.backend == "transformers":
        from docgemma.llm.transformers_backend import load_transformers_llm

        return load_transformers_llm(settings.model)
    if settings.backend == "openai":
        from docgemma.llm.openai_backend import OpenAICompatLLM

        if not settings.model:
            raise LLMError("the openai backend needs DOCGEMMA_MODEL (the model name the server serves)")
        return OpenAICompatLLM(settings.openai_base_url.rstrip("/"), settings.model, settings.openai_api_key)
    from docgemma.llm.demo import demo_llm

    return demo_llm()
