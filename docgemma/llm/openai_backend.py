"""Any OpenAI-compatible chat server (vLLM serving MedGemma) with JSON-schema guided decoding.

This is how a deployment outgrows one GPU: several vLLM replicas behind one URL. ``generate_json`` sends
``response_format={"type": "json_schema", ...}``, which vLLM enforces with its guided-decoding backend.

Each call's cost comes from the server's ``usage`` (``prompt_tokens``, ``completion_tokens`` and, where the
server reports its prefix cache, ``prompt_tokens_details.cached_tokens``); streams ask for it with
``stream_options.include_usage``. A server that sends no ``usage`` leaves ``last_usage`` unset for that call,
so the agent falls back to counting the prompt itself.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from docgemma.http_client import http_client
from docgemma.images import png_data_url
from docgemma.llm.base import LLMError, Messages, PerThreadUsage, SchemaT, Usage, parse_json

if TYPE_CHECKING:
    from PIL.Image import Image


@dataclass
class OpenAICompatLLM:
    """Client for ``{base_url}/chat/completions``; ``base_url`` usually ends in ``/v1``."""

    base_url: str
    model: str
    api_key: str | None = None
    supports_images: bool = True
    #: A served model is the deployer's choice of a real model (MedGemma or alike): its prose is kept.
    clinically_meaningful: bool = True
    timeout_s: float = 120.0
    client: httpx.Client = field(default_factory=lambda: http_client(120.0, 3.0))
    #: The server's account of the calling thread's latest finished call (:func:`docgemma.llm.base.last_usage`).
    last_usage = PerThreadUsage()

    @property
    def name(self) -> str:
        """Model name and server, for status lines."""
        return f"{self.model} via {self.base_url}"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _payload(self, messages: Messages, temperature: float, max_tokens: int, images: Sequence[Image]) -> dict[str, Any]:
        wire: list[dict[str, Any]] = [{"role": m["role"], "content": m["content"]} for m in messages]
        if images:
            last_user = max(i for i, m in enumerate(wire) if m["role"] == "user")
            # Text then image, as the MedGemma model card and the local (transformers, llama.cpp) paths send it.
            parts: list[dict[str, Any]] = [{"type": "text", "text": wire[last_user]["content"]}]
            parts += [{"type": "image_url", "image_url": {"url": png_data_url(img)}} for img in images]
            wire[last_user]["content"] = parts
        return {"model": self.model, "messages": wire, "temperature": temperature, "max_tokens": max_tokens}

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self.client.post(f"{self.base_url}/chat/completions", json=payload, headers=self._headers())
        except httpx.HTTPError as exc:
            raise LLMError(f"model server {self.base_url} unreachable: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise LLMError(f"model server answered HTTP {response.status_code}")
        try:
            body: dict[str, Any] = response.json()
        except json.JSONDecodeError as exc:
            raise LLMError("model server answered with invalid JSON") from exc
        return body

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Guided decoding through the server's ``json_schema`` response format."""
        payload = self._payload(messages, temperature, max_tokens, images)
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True},
        }
        start = time.perf_counter()
        body = self._post(payload)
        self._report(body.get("usage"), start)  # before validation: an invalid answer was paid for too
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError("model server answer has no choices[0].message.content") from exc
        return parse_json(schema, content or "")

    def generate_text(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> Iterator[str]:
        """Stream server-sent events and yield each content delta."""
        payload = self._payload(messages, temperature, max_tokens, images)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}  # the last event then carries ``usage``
        start = time.perf_counter()
        usage: dict[str, Any] | None = None
        try:
            with self.client.stream(
                "POST", f"{self.base_url}/chat/completions", json=payload, headers=self._headers()
            ) as response:
                if response.status_code != 200:
                    raise LLMError(f"model server answered HTTP {response.status_code}")
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        event = json.loads(data)
                        choices = event.get("choices") or []  # the usage event has none
                        delta = choices[0].get("delta", {}).get("content") if choices else None
                    except (json.JSONDecodeError, AttributeError, IndexError) as exc:
                        raise LLMError("model server sent a malformed stream event") from exc
                    usage = event.get("usage") or usage
                    if delta:
                        yield delta
        except httpx.HTTPError as exc:
            raise LLMError(f"model server {self.base_url} unreachable: {type(exc).__name__}") from exc
        self._report(usage, start)

    def _report(self, usage: Any, start: float) -> None:
        """Set :attr:`last_usage` from a server ``usage`` object; none (or a malformed one) reports nothing."""
        if not isinstance(usage, dict) or not isinstance(usage.get("prompt_tokens"), int):
            return
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        decoded = usage.get("completion_tokens")
        self.last_usage = Usage(prompt_tokens=usage["prompt_tokens"],
                                cached_tokens=cached if isinstance(cached, int) else 0,
                                decoded_tokens=decoded if isinstance(decoded, int) else 0,
                                seconds=time.perf_counter() - start)

    def count_tokens(self, messages: Messages) -> int:
        """An estimate (4 characters a token): the server's tokenizer is not available locally."""
        return math.ceil(sum(len(m["content"]) for m in messages) / 4)

