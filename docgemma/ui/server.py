"""The web app as a server: the Gradio page mounted on FastAPI, with the endpoints an orchestrator and a
monitoring system use beside it.

    /healthz   200 while the process serves requests (liveness: restart the replica when it fails)
    /readyz    200 when the model, the conversation database and the FHIR server answer; 503 with the part
               that failed (readiness: send no traffic to the replica until it passes)
    /metrics   Prometheus text format (docgemma/ops/metrics.py)

The probes are not behind ``DOCGEMMA_AUTH``: they say nothing about patients. The Gradio API names (/respond,
/approve, /edit, /reject, /override, /search_patients, /select_patient) are the page's, unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from docgemma.config import Settings
    from docgemma.ops.health import Readiness
    from docgemma.ops.metrics import Metrics
    from docgemma.ops.store import ConversationStore
    from docgemma.workspace import Record

HEALTH_PATHS = ("/healthz", "/readyz", "/metrics")


def readiness(settings: Settings, store: ConversationStore, ehr: Record | None) -> Readiness:
    """The checks of a replica built from ``settings``: model, conversation database, FHIR server."""
    from docgemma.ops.health import Readiness, checkpoint_check, fhir_check, model_check

    checks = {"model": model_check(settings, lambda: True),  # built before serving: the model loaded
              "checkpoints": checkpoint_check(store)}
    if ehr is not None:
        checks["fhir"] = fhir_check(ehr)
    return Readiness(checks)


def build_app(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None = None,
              max_file_size: int | None = None) -> FastAPI:
    """FastAPI with the probes and ``/metrics``, and the Gradio page at ``/``."""
    import gradio as gr
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, Response
    from prometheus_client import CONTENT_TYPE_LATEST

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "alive"}

    @app.get("/readyz")
    def readyz() -> JSONResponse:
        ok, parts = ready.report()
        failed = [name for name, state in parts.items() if state != "ok"]
        body = {"status": "ready" if ok else "not ready", "failed": failed, "checks": parts}
        return JSONResponse(body, status_code=200 if ok else 503)

    queue = getattr(demo, "_queue", None)  # Gradio's event queue: len() is the events waiting for a worker
    if queue is not None:
        metrics.watch_queue(lambda: len(queue))

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    from docgemma.ui.style import page_options

    # page_options: the page's CSS, and Gradio's run history off (it kept answers with patient data in the browser).
    return gr.mount_gradio_app(app, demo, path="", auth=auth, max_file_size=max_file_size, **page_options())


def serve(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None, max_file_size: int,
          host: str, port: int) -> None:
    """Serve until stopped (uvicorn, one process: replicas are separate processes behind a load balancer)."""
    import uvicorn

    # A stop (SIGTERM from the orchestrator) waits at most 10 s for open requests: Gradio's event streams stay
    # open while a browser is connected, and would otherwise hold the replica up until it is killed.
    uvicorn.run(build_app(demo, ready, metrics, auth=auth, max_file_size=max_file_size), host=host, port=port,
                log_level="warning", timeout_graceful_shutdown=10)
