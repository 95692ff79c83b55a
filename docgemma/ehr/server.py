"""The embedded FHIR REST API: ``python -m docgemma ehr serve [--host H] [--port N]``.

Loopback by default: the record is not meant for the network. Bound to any other address it refuses to
start without a bearer token (``DOCGEMMA_EHR_TOKEN``), and then every request but ``GET /metadata`` must carry
``Authorization: Bearer <token>`` (401 OperationOutcome otherwise). A token also protects a loopback server
when one is set. What a browser could forge is refused first (``docgemma/browser_guard.py``): a ``Host`` this
server does not serve (421: DNS rebinding), a cross-origin write (403), a write that is not JSON (415).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from docgemma.browser_guard import LOOPBACK, BrowserGuard, ServedNames, served_names
from docgemma.ehr.api import FHIR_JSON, FhirApi
from docgemma.ehr.store import FhirError, FhirStore
from docgemma.exposure import TOKEN_LIMITED, TOKEN_OK, TokenGuesses, authorized, is_loopback
from docgemma.exposure import check_exposure as _check_exposure

log = logging.getLogger(__name__)
BASE_PATH = "/fhir"


def make_app(api: FhirApi, token: str | None = None, served: ServedNames = LOOPBACK) -> Any:
    """A Starlette app serving ``api`` under ``/fhir`` (requiring ``token`` as a bearer token, if given) to the
    host names ``served``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    guesses = TokenGuesses(token)  # wrong tokens limited per client address, as failed sign-ins are

    async def endpoint(request: Request) -> JSONResponse:
        path = request.path_params.get("path", "")
        headers = dict(request.headers)
        public = request.method == "GET" and path.strip("/") == "metadata"
        status = TOKEN_OK if public else guesses.check(request.client.host if request.client else "?", headers)
        if status != TOKEN_OK:
            error = (FhirError(429, "throttled", "too many wrong tokens from this address: try again later")
                     if status == TOKEN_LIMITED else
                     FhirError(401, "login", "a bearer token is required (Authorization: Bearer ...)"))
            return JSONResponse(error.outcome(), status_code=status, media_type=FHIR_JSON,
                                headers={"WWW-Authenticate": 'Bearer realm="docgemma-fhir"'})
        body = await request.body()
        reply = api.handle(request.method, path, list(request.query_params.multi_items()), headers, body)
        return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers, media_type=FHIR_JSON)

    routes = [Route(BASE_PATH + "/{path:path}", endpoint, methods=["GET", "POST", "PUT"]),
              Route(BASE_PATH, endpoint, methods=["POST"])]
    return BrowserGuard(Starlette(routes=routes), served)


__all__ = ["BASE_PATH", "authorized", "check_exposure", "is_loopback", "make_app", "serve"]


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve the record beyond loopback without a token (``ConfigError`` naming the fix): the policy
    every server of ours shares (:mod:`docgemma.exposure`)."""
    _check_exposure(host, token, what="the patient record", variable="DOCGEMMA_EHR_TOKEN")


def serve(store_path: Path, host: str = "127.0.0.1", port: int = 8090, token: str | None = None,
          allowed_hosts: tuple[str, ...] = ()) -> None:
    """Serve until stopped (to the loopback names, ``host`` and ``allowed_hosts``)."""
    check_exposure(host, token)
    import uvicorn

    base = f"http://{host}:{port}{BASE_PATH}"
    app = make_app(FhirApi(FhirStore(store_path), base), token, served_names(host, allowed_hosts))
    log.warning("FHIR R4 API at %s (store %s, %s)", base, store_path,
                "bearer token required" if token else "no token: loopback only")
    uvicorn.run(app, host=host, port=port, log_level="warning")
