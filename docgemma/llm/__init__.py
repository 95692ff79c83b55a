"""Model backends behind one protocol (:class:`docgemma.llm.base.LLM`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from docgemma.config import Settings
from docgemma.llm.base import LLM, LLMError, LLMOutputError, Message, MissingDependencyError

__all__ = ["LLM", "Factory", "LLMError", "LLMOutputError", "Message", "MissingDependencyError", "make_llm"]

#: Builds a backend from the settings.
Factory = Callable[[Settings], LLM]


def make_llm(settings: Settings, provided: Mapping[str, Factory] = MappingProxyType({})) -> LLM:
    """Build the backend ``settings.backend`` names (models load here, which can take a while). ``provided``:
    the backends a layer above gives, by name (the agent's rule-based demo model, ``fake``:
    ``runtime.load_llm`` passes it)."""
    if settings.backend == "transformers":
        from docgemma.llm.transformers_backend import load_transformers_llm

        # None (auto): the backend decides by compute dtype.
        return load_transformers_llm(settings.model, prefix_cache=settings.prefix_cache,
                                     converted_dir=settings.model_cache_dir)
    if settings.backend == "llamacpp":
        from docgemma.llm.llamacpp_backend import load_llamacpp_llm

        return load_llamacpp_llm(settings.model, prefix_cache=settings.prefix_cache is not False)
    if settings.backend == "openai":
        from docgemma.llm.openai_backend import OpenAICompatLLM

        if not settings.model:
            raise LLMError("the openai backend needs DOCGEMMA_MODEL (the model name the server serves)")
        return OpenAICompatLLM(settings.openai_base_url.rstrip("/"), settings.model, settings.openai_api_key,
                               timeout_s=settings.openai_timeout_s)
    factory = provided.get(settings.backend)
    if factory is None:
        raise LLMError(f"backend {settings.backend!r} was not provided (the demo model comes with "
                       "docgemma.runtime.load_llm)")
    return factory(settings)
