"""Login on every route but the health probes (``DOCGEMMA_AUTH``).

Gradio's login guards the page and most of its API, but not all of it: ``/openapi.json``,
``/gradio_api/cancel``, ``/gradio_api/reset``, the heartbeat, the stream routes and others answered without a
session. :class:`LoginGate` sits in front of the whole app, in both ways of serving it, and lets a request
through only with Gradio's own session cookie (the one its ``/login`` sets), or when it is one of the few
things the login page itself needs (the page, its scripts and styles, ``/login``) or a probe.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Open without a login: the probes, and what the login page needs to show itself and sign in.
PUBLIC = frozenset({"/healthz", "/readyz", "/metrics", "/", "/login", "/logout", "/favicon.ico", "/theme.css",
                    "/gradio_api/theme.css", "/robots.txt", "/manifest.json", "/gradio_api/login_check",
                    "/login_check",
                    # Blocks.launch calls it itself before serving; it starts the queue and returns nothing.
                    "/gradio_api/startup-events"})
PUBLIC_PREFIXES = ("/assets/", "/static/", "/svelte/", "/pwa_icon", "/gradio_api/static/", "/gradio_api/assets/")


def is_public(path: str) -> bool:
    """True for a path open without a login (see :data:`PUBLIC`)."""
    bare = path.rstrip("/") or "/"
    return bare in PUBLIC or path.startswith(PUBLIC_PREFIXES)


class LoginGate:
    """ASGI middleware: 401 for any HTTP or websocket request but :func:`is_public` ones unless it carries a
    session token of the Gradio app ``gradio_app()`` returns (looked up per request: with ``Blocks.launch`` the
    app exists only once serving starts). Without a login configured on that app, everything passes."""

    def __init__(self, app: Asgi, gradio_app: Callable[[], Any]) -> None:
        self.app = app
        self.gradio_app = gradio_app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not is_public(str(scope.get("path", ""))):
            served = self.gradio_app()
            if served is not None and getattr(served, "auth", None) is not None and not _signed_in(scope, served):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                body = json.dumps({"detail": "Not authenticated: sign in on the page first."}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _signed_in(scope: Scope, served: Any) -> bool:
    """True when the request's cookie holds a token Gradio issued at ``/login`` (Gradio's own test)."""
    cookie = SimpleCookie()
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            cookie.load(value.decode("latin-1"))
    cookie_id = getattr(served, "cookie_id", "")
    tokens = getattr(served, "tokens", {})
    for key in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
        morsel = cookie.get(key)
        if morsel is not None and morsel.value in tokens:
            return True
    return False
