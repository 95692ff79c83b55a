"""The embedded FHIR REST API on loopback: ``python -m docgemma ehr serve [--port N]``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from docgemma.ehr.api import FHIR_JSON, FhirApi
from docgemma.ehr.store import FhirStore

log = logging.getLogger(__name__)
BASE_PATH = "/fhir"


def make_app(api: FhirApi) -> Any:
    """A Starlette app serving ``api`` under ``/fhir``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> JSONResponse:
        body = await request.body()
        reply = api.handle(request.method, request.path_params.get("path", ""), list(request.query_params.multi_items()),
                           dict(request.headers), body)
        return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers, media_type=FHIR_JSON)

    routes = [Route(BASE_PATH + "/{path:path}", endpoint, methods=["GET", "POST", "PUT"]),
              Route(BASE_PATH, endpoint, methods=["POST"])]
    return Starlette(routes=routes)


def serve(store_path: Path, host: str = "127.0.0.1", port: int = 8090) -> None:
    """Serve until stopped (loopback by default: the record is not meant for the network)."""
    import uvicorn

    base = f"http://{host}:{port}{BASE_PATH}"
    app = make_app(FhirApi(FhirStore(store_path), base))
    log.warning("FHIR R4 API at %s (store %s)", base, store_path)
    uvicorn.run(app, host=host, port=port, log_level="warning")
