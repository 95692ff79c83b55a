"""The web app as a server: the Gradio page mounted on FastAPI, with the endpoints an orchestrator and a
monitoring system use beside it.

    /healthz   200 while the process serves requests (liveness: restart the replica when it fails)
    /readyz    200 when the model, the conversation database and the FHIR server answer; 503 with the part
               that failed (readiness: send no traffic to the replica until it passes)
    /metrics   Prometheus text format (docgemma/ops/metrics.py)

The probes are not behind ``DOCGEMMA_AUTH``: they say nothing about patients. Every other route is
(``ui/login.py``: Gradio's login left some of its own routes open), and a client may name only files Gradio stored
for it (``ui/uploads.py``). The Gradio API names (/respond,
/approve, /edit, /reject, /override, /search_patients, /select_patient) are the page's, unchanged.

Two ways to serve the same page and probes: :func:`serve` (uvicorn, everywhere but ZeroGPU) and
:func:`serve_through_gradio` (``gradio.Blocks.launch``: on ZeroGPU the ``spaces`` package initialises only
there). Both end open event streams at SIGTERM and exit promptly (``ui/shutdown.py``). A notebook (Kaggle's)
serves the same way without blocking: :func:`launch_in_background`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docgemma.browser_guard import LOOPBACK, BrowserGuard, ServedNames
from docgemma.ui.login import LOGIN_PATHS

if TYPE_CHECKING:
    from fastapi import FastAPI

    from docgemma.ops.health import Readiness
    from docgemma.ops.metrics import Metrics

HEALTH_PATHS = ("/healthz", "/readyz", "/metrics")
#: The page's own posts that are not JSON: Gradio's sign-in form and its file uploads (multipart).
FORM_PATHS = LOGIN_PATHS | frozenset({"/gradio_api/upload", "/upload", "/gradio_api/component_server",
                                      "/component_server"})


def probe_routes(demo: Any, ready: Readiness, metrics: Metrics) -> list[Any]:
    """``/healthz``, ``/readyz`` and ``/metrics`` as routes for a FastAPI app (ours, or Gradio's own)."""
    from fastapi.responses import JSONResponse, Response
    from fastapi.routing import APIRoute
    from prometheus_client import CONTENT_TYPE_LATEST

    def healthz() -> dict[str, str]:
        return {"status": "alive"}

    def readyz() -> JSONResponse:
        ok, parts = ready.report()
        failed = [name for name, state in parts.items() if state != "ok"]
        body = {"status": "ready" if ok else "not ready", "failed": failed, "checks": parts}
        return JSONResponse(body, status_code=200 if ok else 503)

    queue = getattr(demo, "_queue", None)  # Gradio's event queue: len() is the events waiting for a worker
    if queue is not None:
        metrics.watch_queue(lambda: len(queue))

    def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return [APIRoute("/healthz", healthz, methods=["GET"]), APIRoute("/readyz", readyz, methods=["GET"]),
            APIRoute("/metrics", prometheus, methods=["GET"])]


def build_app(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None = None,
              max_file_size: int | None = None, served: ServedNames = LOOPBACK) -> FastAPI:
    """FastAPI with the probes and ``/metrics``, and the Gradio page at ``/``, answering only the host names
    ``served`` (``docgemma/browser_guard.py``)."""
    import gradio as gr
    from fastapi import FastAPI

    from docgemma.ui.login import LoginGate
    from docgemma.ui.style import page_options
    from docgemma.ui.uploads import UploadGate, enable_gradio_check

    enable_gradio_check(demo)  # mounted, not launched: Gradio would skip its upload-folder check
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, routes=probe_routes(demo, ready, metrics))
    # A client's file must be one Gradio stored for it (ui/uploads.py), checked before Gradio reads the request.
    app.add_middleware(UploadGate)
    # The login in front of every route but the probes; outermost, so nothing runs for a stranger.
    app.add_middleware(LoginGate, gradio_app=lambda: _mounted(app))
    # What a browser could forge (another Host: DNS rebinding; a cross-origin or non-JSON write), refused first.
    app.add_middleware(BrowserGuard, served=served, form_paths=FORM_PATHS)
    # page_options: the page's CSS, and Gradio's run history off (it kept answers with patient data in the browser).
    return gr.mount_gradio_app(app, demo, path="", auth=auth, max_file_size=max_file_size, **page_options())


def _mounted(app: Any) -> Any:
    """The Gradio app mounted on ``app`` (its login's sessions), or None before it is."""
    from starlette.routing import Mount

    return next((r.app for r in app.routes if isinstance(r, Mount)), None)


def serve(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None, max_file_size: int,
          host: str, port: int, on_started: Callable[[], None] | None = None, served: ServedNames = LOOPBACK) -> None:
    """Serve until SIGTERM or Ctrl-C (uvicorn, one process: replicas are separate processes behind a load
    balancer); ``on_started`` runs once the socket listens."""
    import uvicorn

    from docgemma.ui.shutdown import GRACE_S, EndStreamsOnStop, StopSignal, stop_on_signals

    stop = StopSignal()

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            stop.set()  # end the event streams now, or uvicorn waits for them until the grace period ends
            super().handle_exit(sig, frame)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if stop.is_set:  # a stop asked for before uvicorn took the signals over
                self.should_exit = True
            elif on_started is not None and not self.should_exit:
                on_started()

    app = EndStreamsOnStop(build_app(demo, ready, metrics, auth=auth, max_file_size=max_file_size, served=served), stop)
    server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=GRACE_S))
    with stop_on_signals(stop.set):
        server.run()


def launch_options(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None,
                   max_file_size: int, stop: Any, served: ServedNames | None = None) -> dict[str, Any]:
    """``Blocks.launch`` keyword arguments for the app: the page's options, the probes as routes of Gradio's app,
    and the browser guard (``served``: the names this server answers to; None behind Gradio's share link, whose
    host name this process does not choose — the login still guards it), the login, stop and upload gates in
    front of it (what :func:`serve` puts around the page)."""
    from starlette.middleware import Middleware

    from docgemma.ui.login import LoginGate
    from docgemma.ui.shutdown import EndStreamsOnStop
    from docgemma.ui.style import page_options
    from docgemma.ui.uploads import UploadGate

    return {"auth": auth, "max_file_size": max_file_size, "ssr_mode": False, **page_options(),
            "app_kwargs": {"routes": probe_routes(demo, ready, metrics), "docs_url": None, "redoc_url": None,
                           "openapi_url": None,
                           # The first is outermost: what a browser could forge is refused before anything.
                           "middleware": [*([Middleware(BrowserGuard, served=served, form_paths=FORM_PATHS)]
                                            if served is not None else []),
                                          Middleware(LoginGate, gradio_app=lambda: getattr(demo, "server_app", None)),
                                          Middleware(EndStreamsOnStop, stop=stop), Middleware(UploadGate)]}}


def launch_in_background(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None,
                         max_file_size: int, share: bool = False) -> None:
    """Serve with ``Blocks.launch`` and return at once (a notebook's app: Kaggle's), with what the other ways of
    serving put around the page (:func:`launch_options`); ``share``: Gradio's public link, printed by Gradio.
    Address from ``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT``, as Gradio reads them; ``demo.close()`` stops it."""
    from docgemma.ui.shutdown import StopSignal

    demo.launch(share=share, prevent_thread_lock=True,
                **launch_options(demo, ready, metrics, auth=auth, max_file_size=max_file_size, stop=StopSignal()))


def serve_through_gradio(demo: Any, ready: Readiness, metrics: Metrics, *, auth: tuple[str, str] | None,
                         max_file_size: int, host: str, port: int,
                         on_started: Callable[[], None] | None = None, served: ServedNames = LOOPBACK) -> None:
    """Serve with ``demo.launch()``, as ZeroGPU needs, with the same probes (routes of Gradio's app) and the same
    prompt stop. Differences from :func:`serve`: Gradio's own server settings (no SSR), and the probes are
    answered by Gradio's app rather than ours."""
    from docgemma.ui.shutdown import GRACE_S, StopSignal, stop_on_signals

    stop = StopSignal()
    stopping = threading.Event()

    def on_stop() -> None:
        stop.set()
        stopping.set()

    with stop_on_signals(on_stop):
        demo.launch(server_name=host, server_port=port, prevent_thread_lock=True, quiet=True,
                    **launch_options(demo, ready, metrics, auth=auth, max_file_size=max_file_size, stop=stop,
                                     served=served))
        if on_started is not None:
            on_started()
        while not stopping.wait(0.5):
            pass
        demo.close(verbose=False)
        thread = getattr(demo.server, "thread", None)
        if thread is not None:
            thread.join(GRACE_S + 1)
