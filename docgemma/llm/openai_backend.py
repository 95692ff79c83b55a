"""Any OpenAI-compatible chat server (vLLM serving MedGemma) with JSON-schema guided decoding.

This is how a deployment outgrows one GPU: several vLLM replicas behind one URL. ``generate_json`` sends
``response_format={"type": "json_schema", ...}``, which vLLM enforces with its guided-decoding backend.

Each call's cost comes from the server's ``usage`` (``prompt_tokens``, ``completion_tokens`` and, where the
server reports its prefix cache, ``prompt_tokens_details.cached_tokens``); streams ask for it with
``stream_options.include_usage``. A server that sends no ``usage`` leaves ``last_usage`` unset for that call,
so the agent falls back to counting the prompt itself.

A server that cannot answer raises :class:`~docgemma.llm.base.BackendUnavailable` (the turn ends with one
sentence): unreachable, an HTTP error (429, 500, …), a dropped connection, no answer within ``timeout_s`` (the
whole call, not each read: a server that trickles bytes is cut off too), or an answer in the wrong framing (no
``choices``; a streaming call answered with neither server-sent events nor the JSON answer). A 200 JSON body on a
streaming call is a server that ignored ``stream``: it is read as the answer it is.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from docgemma.http_client import http_client
from docgemma.images import png_data_url
from docgemma.llm.base import BackendUnavailable, Messages, PerThreadUsage, SchemaT, Usage, parse_json

if TYPE_CHECKING:
    from PIL.Image import Image

#: Seconds to connect (at most ``timeout_s``).
CONNECT_S = 3.0


@dataclass
class OpenAICompatLLM:
    """Client for ``{base_url}/chat/completions``; ``base_url`` usually ends in ``/v1``."""

    base_url: str
    model: str
    api_key: str | None = None
    supports_images: bool = True
    #: A served model is the deployer's choice of a real model (MedGemma or alike): its prose is kept.
    clinically_meaningful: bool = True
    #: Seconds a whole call may take, connection to last byte (``Settings.openai_timeout_s``).
    timeout_s: float = 120.0
    #: Built from ``timeout_s`` when not given.
    client: httpx.Client | None = None
    #: The server's account of the calling thread's latest finished call (:func:`docgemma.llm.base.last_usage`).
    last_usage = PerThreadUsage()

    def __post_init__(self) -> None:
        if self.client is None:
            self.client = http_client(self.timeout_s, min(CONNECT_S, self.timeout_s))

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

    def _open(self, payload: dict[str, Any]) -> Any:
        """The POST as a context manager on its streamed response (read with :func:`_events` or :meth:`_body`)."""
        assert self.client is not None
        return self.client.stream("POST", f"{self.base_url}/chat/completions", json=payload, headers=self._headers(),
                                  timeout=httpx.Timeout(self.timeout_s, connect=min(CONNECT_S, self.timeout_s)))

    def _answered(self, response: httpx.Response) -> None:
        if response.status_code != 200:
            raise BackendUnavailable(f"model server answered HTTP {response.status_code}")

    def _body(self, response: httpx.Response, deadline: float) -> dict[str, Any]:
        """The whole JSON body, read before ``deadline`` (a server trickling bytes is cut off there)."""
        data = bytearray()
        for chunk in response.iter_bytes():
            data += chunk
            _in_time(deadline)
        try:
            body = json.loads(bytes(data))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BackendUnavailable("model server answered with a body that is not JSON") from exc
        if not isinstance(body, dict):
            raise BackendUnavailable("model server answered with JSON that is not an object")
        return body

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        try:
            with self._open(payload) as response:
                self._answered(response)
                return self._body(response, deadline)
        except httpx.HTTPError as exc:
            raise BackendUnavailable(f"model server {self.base_url} unreachable or cut off: {type(exc).__name__}") from exc

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
        return parse_json(schema, _content(body))

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
        start, deadline = time.perf_counter(), time.monotonic() + self.timeout_s
        usage: dict[str, Any] | None = None
        try:
            with self._open(payload) as response:
                self._answered(response)
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "application/json":  # the server ignored "stream": its body is the whole answer
                    body = self._body(response, deadline)
                    usage = body.get("usage")
                    text = _content(body)
                    if text:
                        yield text
                elif kind == "text/event-stream":
                    for delta, event_usage in _events(response, deadline):
                        usage = event_usage or usage
                        if delta:
                            yield delta
                else:
                    raise BackendUnavailable(f"model server answered a streaming call with {kind or 'no content type'}, "
                                             "not server-sent events")
        except httpx.HTTPError as exc:
            raise BackendUnavailable(f"model server {self.base_url} unreachable or cut off: {type(exc).__name__}") from exc
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



def _in_time(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise BackendUnavailable("model server did not finish its answer within the timeout")


def _content(body: dict[str, Any]) -> str:
    """``choices[0].message.content`` of a chat completion; another shape is the wrong framing."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise BackendUnavailable("model server answer has no choices[0].message.content") from exc
    return str(content or "")


def _events(response: httpx.Response, deadline: float) -> Iterator[tuple[str | None, dict[str, Any] | None]]:
    """Each server-sent event's content delta and usage, until ``[DONE]``; a stream that ends without it was cut
    off (a dropped connection that closed cleanly), and one with no event at all was not an answer."""
    for line in response.iter_lines():
        _in_time(deadline)
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
            choices = event.get("choices") or []  # the usage event has none
            delta = choices[0].get("delta", {}).get("content") if choices else None
        except (json.JSONDecodeError, AttributeError, IndexError) as exc:
            raise BackendUnavailable("model server sent a malformed stream event") from exc
        yield delta, event.get("usage")
    raise BackendUnavailable("model server's stream ended before [DONE]")
