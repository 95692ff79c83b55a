"""The web app assembled and started (``python app.py``, ``docgemma serve``, the Kaggle notebook): the one place
that builds the conversation store, metrics, record, ``Assistant``, workspace, readiness checks and page, and
serves them. ``ui/`` only lays the page out over the workspace it is given.

Served on ``GRADIO_SERVER_NAME``:``GRADIO_SERVER_PORT`` (127.0.0.1:7860) with ``/healthz``, ``/readyz`` and
``/metrics`` beside the page (``ui/server.py``): through uvicorn everywhere, except on a ZeroGPU Space, where
the ``spaces`` package initialises only from ``gradio.Blocks.launch`` and the app serves through it.
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docgemma.browser_guard import configured_names, served_names
from docgemma.config import Settings

if TYPE_CHECKING:
    from docgemma.agent.assistant import Assistant
    from docgemma.llm.base import LLM
    from docgemma.ops.conversation_store import ConversationStore
    from docgemma.ops.health import Readiness
    from docgemma.ops.metrics import Metrics
    from docgemma.tools.spec import ToolSpec
    from docgemma.workspace import Record

log = logging.getLogger(__name__)

#: Seconds to wait for the page to answer once the server listens, before giving up on saying "ready".
READY_TIMEOUT_S = 60.0


def local_url(host: str, port: int) -> str:
    """The page's address from this machine (a wildcard bind answers on loopback)."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def announce_when_answering(url: str, on_ready: Callable[[str], None], timeout_s: float = READY_TIMEOUT_S) -> None:
    """In the background: GET ``url`` until the page answers, then call ``on_ready(url)`` once."""

    def poll() -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        on_ready(url)
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        log.error("the page at %s did not answer within %.0f s", url, timeout_s)

    threading.Thread(target=poll, name="docgemma-ready", daemon=True).start()


def readiness(settings: Settings, store: ConversationStore, ehr: Record | None,
              model_down: Callable[[], str | None] = lambda: None) -> Readiness:
    """The checks of a replica built from ``settings``: model, conversation database, FHIR server.
    ``model_down``: why the model's latest call could not be answered (None: it answered, or none was made)."""
    from docgemma.ops.health import Readiness, checkpoint_check, fhir_check, model_check

    checks = {"model": model_check(settings, lambda: True, model_down),  # built before serving: the model loaded
              "checkpoints": checkpoint_check(store)}
    if ehr is not None:
        checks["fhir"] = fhir_check(ehr)
    return Readiness(checks)


def model_line(llm: LLM) -> str:
    """The model as the page's header names it."""
    describe = getattr(llm, "describe", None)
    return describe() if callable(describe) else llm.name


@dataclass
class Application:
    """Everything one web app process serves: the page and what it stands on."""

    demo: Any
    assistant: Assistant
    ehr: Record
    store: ConversationStore
    metrics: Metrics
    ready: Readiness


def require_synthetic(ehr: Record) -> None:
    """Refuse (``ConfigError``) a record holding any patient that is not one of the synthetic demo patients
    (``meta.tag`` ``urn:docgemma|synthetic-demo``, as ``data/demo`` ships them): a public demo serves no one else."""
    from docgemma.config import ConfigError

    patients = ehr.client.search("Patient", [("_count", "100")], limit=1_000_000)
    real = [p for p in patients if not any(t.get("system") == "urn:docgemma" and t.get("code") == "synthetic-demo"
                                           for t in (p.get("meta") or {}).get("tag", []))]
    if real or not patients:
        raise ConfigError(f"DOCGEMMA_PUBLIC_DEMO=on serves only the synthetic demo record, and this record holds "
                          f"{len(real)} patient(s) that are not demo patients (DOCGEMMA_DATA_DIR): set "
                          "DOCGEMMA_AUTH=user:password, or use an empty DOCGEMMA_DATA_DIR")


def assemble(settings: Settings, llm: LLM | None = None, public_notice: str | None = None,
             tools: Sequence[ToolSpec] = ()) -> Application:
    """Build the application from ``settings``: conversation store, metrics, record, ``Assistant`` (with ``llm``
    when a model is already loaded, e.g. a notebook's), workspace, readiness checks and the page. With
    ``public_notice`` (served without a login: ``exposure.check_web_exposure``) the record must be the synthetic
    demo record (checked before the model loads) and the page's status line carries the notice. ``tools``: tools
    of this assembly's own, added to the registry after the catalog and the installed ones (``docgemma.tools``
    entry points); the page shows each with its label and form like the catalog's."""
    from docgemma.ops.conversation_store import open_store
    from docgemma.ops.logsafe import remember_record
    from docgemma.ops.metrics import Metrics
    from docgemma.runtime import build_assistant, build_ehr, network_probe
    from docgemma.ui.page import NetworkStatus, build_demo
    from docgemma.workspace import Workspace

    store = open_store(settings)
    metrics = Metrics()
    ehr = build_ehr(settings)
    remember_record(ehr)  # every patient's name and identifiers out of the log, not only those a page lists
    if public_notice:
        require_synthetic(ehr)
    assistant = build_assistant(settings, ehr, store, metrics, llm=llm, tools=tools)
    note = " ".join(n for n in (public_notice, getattr(assistant.llm, "fallback_note", None)) if n) or None
    workspace = Workspace(assistant, ehr, metrics)
    demo = build_demo(workspace, model_line(assistant.llm), note, NetworkStatus(network_probe(settings)))
    ready = readiness(settings, store, ehr, lambda: assistant.model.unavailable)
    return Application(demo, assistant, ehr, store, metrics, ready)


def launch(settings: Settings, on_ready: Callable[[str], None] | None = None) -> None:
    """Load everything and serve until SIGTERM or Ctrl-C; ``on_ready(url)`` once the page answers.

    Raises :class:`~docgemma.config.ConfigError` for an address, setting or service the app cannot use."""
    from docgemma.exposure import check_web_exposure
    from docgemma.llm.platform import on_zerogpu, zerogpu_wrapper
    from docgemma.ops import logsafe
    from docgemma.ops.listen import ensure_can_listen
    from docgemma.ui import server
    from docgemma.ui.sessions import SessionReaper

    host, port = settings.server_name, settings.server_port
    # First: nothing is loaded for an app that would serve the record to anyone who can reach it.
    public = check_web_exposure(host, auth=settings.auth, public_demo=settings.public_demo,
                                external_record=settings.fhir_base_url is not None)
    logsafe.install()  # no patient data in any log line or printed traceback from here on
    zerogpu = on_zerogpu()
    if zerogpu:
        zerogpu_wrapper()  # imports spaces: before the model touches CUDA, and so that it patches Blocks.launch
    ensure_can_listen(host, port, "set GRADIO_SERVER_PORT to a free port")
    if public:
        log.warning("%s (DOCGEMMA_PUBLIC_DEMO=on, serving on %s)", public, host)
    app = assemble(settings, public_notice=public)
    demo = app.demo
    # Gradio keeps each page session's state until 10,000 have come: closed and idle ones are dropped instead.
    reaper = SessionReaper(demo, closed_s=settings.session_closed_s, idle_s=settings.session_idle_s).start()
    auth = None
    if settings.auth:
        user, _, password = settings.auth.partition(":")
        auth = (user, password)
    url = local_url(host, port)

    def started() -> None:
        if on_ready is not None:
            announce_when_answering(url, on_ready)

    serve = server.serve_through_gradio if zerogpu else server.serve
    try:
        serve(demo, app.ready, app.metrics, auth=auth, max_file_size=settings.max_image_bytes, host=host, port=port,
              on_started=started, served=served_names(host, configured_names(settings.allowed_hosts),
                                                      public=configured_names(settings.space_host)))
    finally:
        reaper.stop()
        app.store.close()
