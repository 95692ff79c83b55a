"""One policy for every HTTP client of ours (the knowledge tools, the FHIR client, an OpenAI-compatible model
server): our User-Agent, a connect timeout apart from the whole request's, and no redirect followed (a redirect
could lead a request, and the token it carries, to a host nobody configured)."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

USER_AGENT = "DocGemmaConnect/0.1 (clinical decision support; +https://huggingface.co/spaces)"


def http_client(timeout_s: float, connect_s: float, *, transport: httpx.BaseTransport | None = None,
                headers: Mapping[str, str] | None = None) -> httpx.Client:
    """An ``httpx.Client`` under the policy: ``timeout_s`` for a request, ``connect_s`` to connect."""
    return httpx.Client(transport=transport, timeout=httpx.Timeout(timeout_s, connect=connect_s),
                        headers={"User-Agent": USER_AGENT, **(headers or {})}, follow_redirects=False)
