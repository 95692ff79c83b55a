"""Who may reach a server of ours beyond this machine: one policy for every server that hands out patient data
(the FHIR API of ``ehr serve``, the MCP tool server over HTTP, the web app).

Loopback needs nothing; any other address needs a bearer token (the web app: a login, ``DOCGEMMA_AUTH``), or the
server refuses to start. With a token, every request but the server's declared public ones must carry
``Authorization: Bearer <token>`` (compared in constant time), also on loopback.

The one exception, asked for explicitly: ``DOCGEMMA_PUBLIC_DEMO=on`` lets the web app serve beyond loopback without
a login, and only over the embedded record holding nothing but the synthetic demo patients (``serve.py`` checks
the record before the model loads; a page notice and a logged warning say it is public). A Hugging Face Space
binds 0.0.0.0, so a Space starts only with a login or with that variable set in its settings.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from docgemma.attempt_limit import AttemptLimiter
from docgemma.config import ConfigError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def authorized(headers: Mapping[str, str], token: str | None) -> bool:
    """True when no token is required, or the request carries it (compared in constant time)."""
    if token is None:
        return True
    given = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


#: Shortest bearer token accepted beyond loopback: a short one is guessed (a one-character token was accepted).
MIN_TOKEN_CHARS = 32


def check_exposure(host: str, token: str | None, *, what: str, variable: str) -> None:
    """Refuse to serve ``what`` beyond loopback without a token, or with one shorter than :data:`MIN_TOKEN_CHARS`
    (``ConfigError`` naming ``variable``, the fix)."""
    if is_loopback(host):
        return
    if not token:
        raise ConfigError(f"refusing to serve {what} on {host} without a token: set {variable} "
                          "(clients send it as 'Authorization: Bearer <token>'), or keep the default --host 127.0.0.1")
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"refusing to serve {what} on {host} with a {len(token)}-character token: {variable} needs "
                          f"{MIN_TOKEN_CHARS} or more characters (for example: python -c 'import secrets; "
                          "print(secrets.token_urlsafe(32))')")


#: What the page and the log say while the web app serves without a login beyond loopback.
PUBLIC_DEMO_NOTICE = ("PUBLIC DEMO: no login — anyone with this address can read and write this record, which holds "
                      "only synthetic demo patients. Never enter real patient data.")


def check_web_exposure(host: str, *, auth: str | None, public_demo: bool, external_record: bool) -> str | None:
    """Refuse to serve the web app beyond loopback without a login (``ConfigError`` naming ``DOCGEMMA_AUTH``).
    Returns :data:`PUBLIC_DEMO_NOTICE` when it will serve without one by the explicit ``DOCGEMMA_PUBLIC_DEMO=on``
    (the caller then checks that the record is the synthetic demo record), None otherwise."""
    if is_loopback(host) or auth:
        return None
    if not public_demo:
        raise ConfigError(f"refusing to serve the web app on {host} without a login: set DOCGEMMA_AUTH=user:password "
                          "(on a Hugging Face Space, as a secret in the Space's settings), or keep "
                          "GRADIO_SERVER_NAME=127.0.0.1; a public demo over the synthetic demo record only needs "
                          "DOCGEMMA_PUBLIC_DEMO=on")
    if external_record:
        raise ConfigError(f"refusing to serve the web app on {host} without a login: DOCGEMMA_PUBLIC_DEMO=on serves "
                          "only the embedded synthetic demo record, and DOCGEMMA_FHIR_BASE_URL names another record; "
                          "set DOCGEMMA_AUTH=user:password")
    return PUBLIC_DEMO_NOTICE


#: A token check's answers: passed, wrong (401), or refused unchecked while the client is over the limit (429).
TOKEN_OK, TOKEN_WRONG, TOKEN_LIMITED = 200, 401, 429


class TokenGuesses:
    """Bearer tokens checked with failed guesses limited per client address, as failed sign-ins are
    (``attempt_limit.py``: a token was open to guessing at full speed). A right token clears nothing: the limit is
    per address, and a client over it is refused until the window has passed."""

    def __init__(self, token: str | None, limiter: AttemptLimiter | None = None) -> None:
        self.token = token
        self.limiter = limiter or AttemptLimiter()

    def check(self, client: str, headers: Mapping[str, str]) -> int:
        """:data:`TOKEN_OK`, :data:`TOKEN_WRONG` (counted) or :data:`TOKEN_LIMITED` for a request from ``client``."""
        if self.token is None:
            return TOKEN_OK
        if self.limiter.wait_s(client, "bearer") > 0:
            return TOKEN_LIMITED
        if authorized(headers, self.token):
            return TOKEN_OK
        if any(k.lower() == "authorization" for k in headers):  # a guess; a request with no token guesses nothing
            self.limiter.failed(client, "bearer")
        return TOKEN_WRONG


def client_of(scope: Scope) -> str:
    """The client address of an ASGI request ("?" when the server gives none)."""
    return str((scope.get("client") or ("?",))[0])


class BearerGate:
    """ASGI middleware: HTTP requests without the bearer token get 401 (``public(method, path)`` ones pass)."""

    def __init__(self, app: Asgi, token: str, realm: str,
                 public: Callable[[str, str], bool] = lambda method, path: False) -> None:
        self.app, self.realm, self.public = app, realm, public
        self.guesses = TokenGuesses(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.public(scope.get("method", ""), scope.get("path", "")):
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
            status = self.guesses.check(client_of(scope), headers)
            if status != TOKEN_OK:
                body = (b'{"error": "too many wrong tokens from this address: try again later"}'
                        if status == TOKEN_LIMITED else
                        b'{"error": "a bearer token is required (Authorization: Bearer ...)"}')
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", f'Bearer realm="{self.realm}"'.encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
