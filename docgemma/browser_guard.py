"""What a web page in a browser could forge, refused by every server of ours: the web app (``ui/server.py``), the
record's FHIR API (``ehr serve``) and the MCP tool server over HTTP all wrap their app in :class:`BrowserGuard`.

Loopback is no boundary for a browser: a page on another origin can point its own DNS name at 127.0.0.1 (DNS
rebinding) and then read what our server answers, or post a "simple" cross-site request (``text/plain``, a form)
that needs no preflight. So:

* ``Host`` must name this server (the loopback names, the address it is bound to, and the names the deployer
  configures: ``DOCGEMMA_ALLOWED_HOSTS``, and a Hugging Face Space's ``SPACE_HOST``); anything else is 421, before
  the app reads the request. A server bound to every address (0.0.0.0) with no names configured cannot know its
  names: it then checks no ``Host`` and says so in the log (it needs a token or a login there anyway).
* A write (any method but GET, HEAD, OPTIONS) with an ``Origin`` must come from this server's own origin (403
  otherwise), and must carry a JSON body (``application/json``, ``application/fhir+json``; 415 otherwise) unless
  its path is one of the app's own form posts (Gradio's sign-in and upload), which a browser sends with the
  same-origin ``Origin`` the check above requires.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
#: Addresses that bind every interface: the server's own names are then the deployer's to say.
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _normal(name: str) -> str:
    """A host name as compared: lower case, no brackets, no trailing dot."""
    return name.strip().strip("[]").rstrip(".").lower()


def host_name(header: str) -> str:
    """The name part of a ``Host`` header (``127.0.0.1:7860`` → ``127.0.0.1``, ``[::1]:80`` → ``::1``)."""
    header = header.strip()
    if header.startswith("["):
        return _normal(header[1:].split("]", 1)[0])
    if header.count(":") == 1:
        header = header.split(":", 1)[0]
    return _normal(header)


@dataclass(frozen=True)
class ServedNames:
    """The host names a server answers to; ``any_host`` when it cannot know them (see the module)."""

    names: frozenset[str]
    any_host: bool = False

    def serves(self, host_header: str) -> bool:
        return self.any_host or host_name(host_header) in self.names


#: A loopback server's names (what a server with no other configuration answers to).
LOOPBACK = ServedNames(LOOPBACK_NAMES)


def configured_names(value: str | None) -> list[str]:
    """``DOCGEMMA_ALLOWED_HOSTS``-style text (names separated by commas or spaces) as names."""
    return [_normal(n) for n in (value or "").replace(",", " ").split() if _normal(n)]


def served_names(bind_host: str, configured: Iterable[str] = (), public: Iterable[str] = ()) -> ServedNames:
    """The names a server bound to ``bind_host`` answers to: loopback's, the bound address, ``configured``;
    ``public``: a public deployment's names (a Space's host), accepted as its pages' origin without restricting
    ``Host``."""
    bound = _normal(bind_host)
    extra = {_normal(n) for n in configured if _normal(n)}
    shown = {_normal(n) for n in public if _normal(n)}
    names = frozenset(LOOPBACK_NAMES | extra | shown | ({bound} if bound not in WILDCARDS else set()))
    if bound in WILDCARDS and not extra:
        log.warning("bound to every address with no host names configured: the Host header is not checked "
                    "(set DOCGEMMA_ALLOWED_HOSTS to the names clients use, to refuse DNS rebinding)")
        return ServedNames(names, any_host=True)
    return ServedNames(names)


def _is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def _same_origin(origin: str, host_header: str, served: ServedNames) -> bool:
    """True when ``origin`` is this server's own (its host and port as the request's ``Host`` says), or one of its
    configured names (a Space's page and its API share the Space's host)."""
    if origin == "null":
        return False
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    if parts.netloc.lower() == host_header.strip().lower():
        return True
    name = _normal(parts.hostname)
    return name in served.names and name not in LOOPBACK_NAMES and not _is_ip(name)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class BrowserGuard:
    """ASGI middleware: the ``Host``, ``Origin`` and content-type checks of the module, before ``app`` runs."""

    def __init__(self, app: Asgi, served: ServedNames, form_paths: frozenset[str] = frozenset()) -> None:
        self.app, self.served, self.form_paths = app, served, form_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        origin = headers.get("origin")
        if not self.served.serves(host):
            await self._refuse(scope, send, 421, "this server does not serve that host name")
            return
        if scope["type"] == "websocket":
            if origin is not None and not _same_origin(origin, host, self.served):
                await self._refuse(scope, send, 403, "cross-origin request refused")
                return
        elif str(scope.get("method", "GET")).upper() not in SAFE_METHODS:
            if origin is not None and not _same_origin(origin, host, self.served):
                await self._refuse(scope, send, 403, "cross-origin write refused")
                return
            path = str(scope.get("path", "")).rstrip("/") or "/"
            if not _is_json(headers.get("content-type", "")) and path not in self.form_paths:
                await self._refuse(scope, send, 415, "a write must be sent as JSON (Content-Type: application/json)")
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, send: Send, status: int, detail: str) -> None:
        log.warning("refused %s %s: %s", scope.get("method", scope["type"]), status, detail)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
