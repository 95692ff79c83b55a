"""Model backends behind one protocol (:class:`docgemma.llm.base.LLM`)."""

from __future__ import annotations

from collections.abc import Callable

from docgemma.config import Settings
from docgemma.llm.base import LLM, LLMError, LLMOutputError, Message, MissingDependencyError

__all__ = ["LLM", "LLMError", "LLMOutputError", "Message", "MissingDependencyError", "make_llm", "register_backend"]

#: Backends that a layer above provides, by name. The rule-based demo model (``fake``) imitates the agent's
#: decisions, so the agent registers it (``docgemma/agent/demo_llm.py``, imported with ``docgemma.agent``).
_REGISTERED: dict[str, Callable[[Settings], LLM]] = {}


def register_backend(name: str, factory: Callable[[Settings], LLM]) -> None:
    """Make ``make_llm`` build ``name`` with ``factory`` (a name of ``config.BACKENDS``)."""
    _REGISTERED[name] = factory


def make_llm(settings: Settings) -> LLM:
    """Build the backend ``settings.backend`` names (models load here, which can take a while)."""
    if settings.backend == "transformers":
        from docgemma.llm.transformers_backend import load_transformers_llm

        reuse = {"on": True, "off": False}.get(settings.prefix_cache)  # auto: the backend decides by compute dtype
        return load_transformers_llm(settings.model, prefix_cache=reuse)
    if settings.backend == "llamacpp":
        from docgemma.llm.llamacpp_backend import load_llamacpp_llm

        return load_llamacpp_llm(settings.model, prefix_cache=settings.prefix_cache != "off")
    if settings.backend == "openai":
        from docgemma.llm.openai_backend import OpenAICompatLLM

        if not settings.model:
            raise LLMError("the openai backend needs DOCGEMMA_MODEL (the model name the server serves)")
        return OpenAICompatLLM(settings.openai_base_url.rstrip("/"), settings.model, settings.openai_api_key)
    factory = _REGISTERED.get(settings.backend)
    if factory is None:
        raise LLMError(f"backend {settings.backend!r} is not registered (the demo model registers itself when "
                       "docgemma.agent is imported)")
    return factory(settings)
