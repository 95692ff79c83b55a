"""Login on every route but the health probes (``DOCGEMMA_AUTH``).

Gradio's login guards the page and most of its API, but not all of it: ``/openapi.json``,
``/gradio_api/cancel``, ``/gradio_api/reset``, the heartbeat, the stream routes and others answered without a
session. :class:`LoginGate` sits in front of the whole app, in both ways of serving it, and lets a request
through only with Gradio's own session cookie (the one its ``/login`` sets), or when it is one of the few
things the login page itself needs (the page, its scripts and styles, ``/login``) or a probe. Failed sign-ins
at ``/login`` are rate-limited per client address and user name (``ui/login_limit.py``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from docgemma.ui.login_limit import LoginLimiter, refusal
from docgemma.ui.uploads import replay_body

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
#: Gradio's sign-in routes (a form post of ``username`` and ``password``).
LOGIN_PATHS = frozenset({"/login", "/gradio_api/login"})
#: The largest sign-in form read (a user name and a password).
MAX_LOGIN_BODY = 64 * 1024
PUBLIC_PREFIXES = ("/assets/", "/static/", "/svelte/", "/pwa_icon", "/gradio_api/static/", "/gradio_api/assets/")


def is_public(path: str) -> bool:
    """True for a path open without a login (see :data:`PUBLIC`)."""
    bare = path.rstrip("/") or "/"
    return bare in PUBLIC or path.startswith(PUBLIC_PREFIXES)


class LoginGate:
    """ASGI middleware: 401 for any HTTP or websocket request but :func:`is_public` ones unless it carries a
    session token of the Gradio app ``gradio_app()`` returns (looked up per request: with ``Blocks.launch`` the
    app exists only once serving starts). Without a login configured on that app, everything passes."""

    def __init__(self, app: Asgi, gradio_app: Callable[[], Any], limiter: LoginLimiter | None = None) -> None:
        self.app = app
        self.gradio_app = gradio_app
        self.limiter = limiter or LoginLimiter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] == "http" and scope.get("method") == "POST" and (path.rstrip("/") or "/") in LOGIN_PATHS:
            await self._sign_in(scope, receive, send)
            return
        if scope["type"] in ("http", "websocket") and not is_public(path):
            served = self.gradio_app()
            if served is not None and getattr(served, "auth", None) is not None and not _signed_in(scope, served):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await _answer(send, 401, "Not authenticated: sign in on the page first.")
                return
        await self.app(scope, receive, send)

    async def _sign_in(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A sign-in: refused (429) while this client and user name are over the limit of failed sign-ins;
        otherwise Gradio checks it, and its answer (200, or 400/401 for a wrong password) is counted."""
        body = await _read_body(receive, MAX_LOGIN_BODY)
        if body is None:
            await _answer(send, 413, "sign-in form too large")
            return
        client = str((scope.get("client") or ("?",))[0])
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        user = _form_user(body, headers.get("content-type", ""))
        if user is None:  # a JSON or malformed body: said, never an exception (it was a 500 with an IndexError)
            await _answer(send, 400, "sign-in is a form with a username and a password")
            return
        # "doc", " doc" and "DOC" are one user to the limit (each spelling had its own count: 30 guesses, not 5).
        user = normal_user(user)
        wait = self.limiter.wait_s(client, user)
        if wait > 0:
            await _answer(send, 429, refusal(wait), [(b"retry-after", str(int(wait) + 1).encode())])
            return
        status = 0

        async def counted(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self.app(scope, replay_body(body, receive), counted)
        if status == 200:
            self.limiter.succeeded(client, user)
        elif status in (400, 401, 403):
            self.limiter.failed(client, user)


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, or None when it is longer than ``limit`` (or the client left)."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = bool(message.get("more_body"))
    return b"".join(chunks)


def normal_user(name: str) -> str:
    """A user name as the sign-in limit counts it: surrounding spaces dropped, case folded."""
    return name.strip().casefold()


def _form_user(body: bytes, content_type: str) -> str | None:
    """The ``username`` of a sign-in form (url-encoded, or multipart as a browser sends it); "" when the form names
    none; None when the body is no sign-in form (JSON, another type, a multipart body without its parts)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    text = body.decode("utf-8", "replace")
    if kind == "application/x-www-form-urlencoded":
        found = parse_qs(text).get("username")
        return found[0] if found else ""
    if kind != "multipart/form-data":
        return None
    if 'name="username"' not in text:
        return ""
    # the part named "username": its value after the blank line that ends the part's headers
    part = text.split('name="username"', 1)[1]
    if "\r\n\r\n" not in part:
        return None
    return part.split("\r\n\r\n", 1)[1].split("\r\n", 1)[0]


async def _answer(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


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
