"""JSON-schema constrained decoding for the transformers backend, with llguidance.

Why llguidance (``bench/results/results_constrained.md``): on Gemma's 262,208-token vocabulary Outlines' default
backend (outlines_core) compiles each schema into a token-level automaton up front — tens of seconds and
hundreds of MB to GB per schema. llguidance indexes the vocabulary once (a token trie: 7-15 s and ~0.4 GB
for Gemma's on the 2-core development machine) and computes each step's allowed tokens lazily from the
grammar, so a schema compiles in milliseconds and under a megabyte; the price is a mask computed per decoded
token (1-2 ms on this vocabulary on the development CPU).

:class:`JsonConstraints` holds the vocabulary index and one compiled matcher per schema;
:meth:`JsonConstraints.prepare` compiles a list of schemas at load (with progress in the log), and
:meth:`JsonConstraints.processor` hands each call a fresh copy of its schema's matcher as a transformers
logits processor. Output is compact JSON (no whitespace between tokens: every decoded token is content) and
objects take only their declared properties.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from docgemma.llm.base import LLMError, MissingDependencyError

log = logging.getLogger(__name__)
INSTALL = "pip install 'llguidance>=1.9,<2'"
#: Compact JSON: no optional whitespace, the usual separators.
COMPACT = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}


def _llguidance() -> Any:
    try:
        import llguidance
        import llguidance.hf
    except ImportError as exc:
        raise MissingDependencyError(f"constrained JSON on the transformers backend needs llguidance: {INSTALL}") from exc
    return llguidance


def closed_objects(node: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object that does not say otherwise.

    JSON Schema allows extra keys by default, and a grammar built from it would let the model spend tokens
    on keys that pydantic then drops; the agent's schemas name every field they want.
    """
    if isinstance(node, dict):
        out = {k: closed_objects(v) for k, v in node.items()}
        if out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [closed_objects(v) for v in node]
    return node


#: A schema as the constraints know it: a pydantic class, or its JSON Schema as text (:func:`schema_text`).
#: The text is what crosses into a ZeroGPU worker: a class made by ``pydantic.create_model`` inside a function
#: (the intent and tool-selection schemas) cannot be pickled, its JSON Schema can.
Schema = type[BaseModel] | str


def schema_text(schema: Schema) -> str:
    """The JSON Schema of ``schema`` as text, closed objects: one key per schema. Keys keep their order (not
    sorted): the properties' order is the order the model writes them in, decision-critical fields first."""
    if isinstance(schema, str):
        return schema
    return json.dumps(closed_objects(schema.model_json_schema()))


def schema_name(schema: Schema) -> str:
    """The schema's name (its class name, the JSON Schema's title), for logs and build times."""
    if isinstance(schema, str):
        return str(json.loads(schema).get("title", "schema"))
    return schema.__name__


def schema_grammar(schema: Schema) -> str:
    """llguidance's grammar for ``schema``: compact JSON, closed objects."""
    llguidance = _llguidance()
    return str(llguidance.LLMatcher.grammar_from_json_schema(schema_text(schema), overrides=COMPACT))


class JsonConstraints:
    """The vocabulary index of one tokenizer and a compiled matcher per schema (thread-safe)."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos_ids: Iterable[int]) -> None:
        llguidance = _llguidance()
        start = time.perf_counter()
        self.vocab_size = vocab_size
        self.eos_ids = sorted(set(eos_ids))
        self._tokenizer = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=self.eos_ids)
        self.index_s = time.perf_counter() - start
        #: Compiled matchers by :func:`schema_text` (a class and its JSON text share one).
        self._matchers: dict[str, Any] = {}
        self._lock = threading.Lock()
        #: Seconds each schema took to compile (what the first call of a schema would otherwise wait).
        self.build_s: dict[str, float] = {}
        log.info("constrained JSON: vocabulary of %d tokens indexed in %.1f s", vocab_size, self.index_s)

    def __contains__(self, schema: Schema) -> bool:
        return schema_text(schema) in self._matchers

    def matcher(self, schema: Schema) -> Any:
        """The compiled matcher of ``schema`` (compiled now if it was not prepared)."""
        text = schema_text(schema)
        with self._lock:
            found = self._matchers.get(text)
            if found is None:
                found = self._matchers[text] = self._compile(text)
            return found

    def prepare(self, schemas: Iterable[Schema]) -> None:
        """Compile every schema now (at load), logging progress, so no call waits for a build."""
        todo = [s for s in dict.fromkeys(schemas) if s not in self]
        start = time.perf_counter()
        for i, schema in enumerate(todo, 1):
            self.matcher(schema)
            name = schema_name(schema)
            log.info("constrained JSON: %d/%d %s ready (%.0f ms)", i, len(todo), name, 1000 * self.build_s[name])
        if todo:
            log.info("constrained JSON: %d schemas compiled in %.2f s", len(todo), time.perf_counter() - start)

    def _compile(self, text: str) -> Any:
        llguidance = _llguidance()
        start = time.perf_counter()
        matcher = llguidance.LLMatcher(self._tokenizer, schema_grammar(text), log_level=0)
        if matcher.is_error():
            raise LLMError(f"cannot constrain JSON to {schema_name(text)}: {matcher.get_error()}")
        self.build_s[schema_name(text)] = time.perf_counter() - start
        return matcher

    def processor(self, schema: Schema) -> JsonLogitsProcessor:
        """A logits processor for one ``generate`` call (it keeps that call's parse state)."""
        return JsonLogitsProcessor(self.matcher(schema).deep_copy(), self.vocab_size)


class JsonLogitsProcessor:
    """A transformers logits processor: at each step only the tokens the schema allows keep their logits.

    One per call and batch size 1 (the backend decodes one sequence). The first call sees the prompt; each
    later call first feeds the matcher the token chosen at the step before.
    """

    def __init__(self, matcher: Any, vocab_size: int) -> None:
        self.matcher = matcher
        self.vocab_size = vocab_size
        self._prompt_len: int | None = None
        self._bitmask: Any = None
        #: Seconds spent in this processor and the steps it constrained (for the bench).
        self.seconds = 0.0
        self.steps = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np
        import torch

        start = time.perf_counter()
        if input_ids.shape[0] != 1:
            raise LLMError("constrained JSON decodes one sequence at a time")
        if self._prompt_len is None:
            self._prompt_len = int(input_ids.shape[-1])
            self._bitmask = torch.zeros((1, (self.vocab_size + 31) // 32), dtype=torch.int32)
        elif not self.matcher.consume_token(int(input_ids[0, -1])):
            raise LLMError(f"constrained JSON: the decoder chose a token the schema forbids ({self.matcher.get_error()})")
        from llguidance.torch import fill_next_token_bitmask

        fill_next_token_bitmask(self.matcher, self._bitmask, 0)
        # Unpack the 32-bit words into one flag per token (little-endian bit order, as llguidance writes them).
        allowed = np.unpackbits(self._bitmask.numpy().view(np.uint8), bitorder="little")[: scores.shape[-1]]
        if allowed.shape[0] < scores.shape[-1]:  # logits past the indexed vocabulary: never allowed
            allowed = np.pad(allowed, (0, scores.shape[-1] - allowed.shape[0]))
        forbidden = torch.from_numpy(allowed == 0).to(scores.device)
        scores = scores.masked_fill(forbidden, float("-inf"))
        self.seconds += time.perf_counter() - start
        self.steps += 1
        return scores
