"""Builds the application from settings: model backend, patient record, tool registry (in-process or over
MCP), and the durable conversation store."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence

from docgemma.agent.assistant import Assistant
from docgemma.clinical.entities import DrugDictionary
from docgemma.config import ENV_NAMES, ConfigError, Settings
from docgemma.ehr.service import Ehr
from docgemma.image_store import ImageStore
from docgemma.llm import LLM, make_llm
from docgemma.ops.conversation_store import ConversationStore, open_store
from docgemma.ops.metrics import Metrics
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_facts, record_write_check, write_lookup
from docgemma.tools.patient_roster import record_roster
from docgemma.tools.registry import ToolRegistry, ToolSpec, installed_registry

log = logging.getLogger(__name__)


def build_ehr(settings: Settings) -> Ehr:
    """The embedded record under ``data_dir`` (demo patients on first run), or the FHIR server at
    ``DOCGEMMA_FHIR_BASE_URL``: SMART Backend Services when ``DOCGEMMA_FHIR_PRIVATE_KEY`` and
    ``DOCGEMMA_FHIR_CLIENT_ID`` are set, a fixed bearer token with ``DOCGEMMA_FHIR_TOKEN``, OAuth2 client
    credentials with ``DOCGEMMA_FHIR_CLIENT_SECRET``."""
    if settings.fhir_base_url is None:
        return Ehr.embedded(settings.data_dir / "record.sqlite")
    from docgemma.ehr.client import FhirClient

    if settings.fhir_private_key is not None:
        if not settings.fhir_client_id:
            raise ConfigError("DOCGEMMA_FHIR_PRIVATE_KEY needs DOCGEMMA_FHIR_CLIENT_ID (the registered client)")
        try:
            pem = settings.fhir_private_key.read_bytes()
        except OSError as exc:
            raise ConfigError(f"DOCGEMMA_FHIR_PRIVATE_KEY: cannot read {settings.fhir_private_key} ({exc.strerror})") from exc
        try:
            client = FhirClient(settings.fhir_base_url).use_smart_backend(
                settings.fhir_client_id, pem, key_id=settings.fhir_key_id, scopes=settings.fhir_scopes,
                token_url=settings.fhir_token_url)
        except ValueError as exc:  # not a PEM key, or not RSA / EC P-384
            raise ConfigError(f"DOCGEMMA_FHIR_PRIVATE_KEY: {exc}") from exc
        return Ehr(client)
    if settings.fhir_token:
        from docgemma.ehr.client import BearerToken

        client = FhirClient(settings.fhir_base_url)
        client.auth = BearerToken(settings.fhir_token)
        return Ehr(client)
    credentials = None
    if settings.fhir_client_id and settings.fhir_client_secret:
        token_url = settings.fhir_token_url or settings.fhir_base_url.split("/fhir")[0] + "/oauth2/token"
        credentials = (token_url, settings.fhir_client_id, settings.fhir_client_secret)
    return Ehr(FhirClient(settings.fhir_base_url, credentials=credentials))


def build_registry(settings: Settings, ehr: Ehr | None = None, *, tools: Sequence[ToolSpec] = (),
                   in_process: bool | None = None) -> ToolRegistry:
    """Every tool with its executor: the catalog, the tools installed distributions name (``docgemma.tools``
    entry points) and ``tools`` (the assembly's own), each bound as it declares (``tools/binding.py``). Over MCP
    (``DOCGEMMA_TOOL_TRANSPORT=mcp``) the tools run in a ``python -m docgemma mcp`` subprocess, except image
    analysis, which needs the app's image and model."""
    ehr = ehr or build_ehr(settings)
    local = bind_tools(installed_registry(tools), knowledge_clients(settings, record=ehr))
    if in_process or (in_process is None and settings.tool_transport == "inprocess"):
        return local
    from docgemma.extras import require_extra
    from docgemma.tools.mcp_client import McpToolClient

    require_extra("mcp")  # DOCGEMMA_TOOL_TRANSPORT=mcp without the extra: say how to install it

    client = McpToolClient(env=subprocess_env(settings))
    served = installed_registry().names  # the server's own registry: the assembly's extra tools stay in process
    remote = {s.name: client.executor(s.name) for s in local
              if s.executor is not None and not s.needs_image and s.name in served}
    return local.with_executors(remote)


def subprocess_env(settings: Settings) -> dict[str, str]:
    """The environment of a subprocess of ours (the MCP tool server): this process's, with every setting given
    explicitly from ``settings`` (settings built in code reach it too; a variable of ours they leave unset is
    removed, not inherited)."""
    ours = set(ENV_NAMES.values())
    return {**{k: v for k, v in os.environ.items() if k not in ours}, **settings.to_env()}


def network_probe(settings: Settings) -> Callable[[], bool]:
    """A check that the knowledge APIs answer (one small openFDA request, 3 s)."""

    def probe() -> bool:
        from urllib.parse import urlsplit

        from docgemma.tools.http import HttpClient, HttpError, hosts_of, note_unreachable

        http = HttpClient(hosts_of([settings.openfda_url]), deadline_s=3.0, max_retries=0)
        try:
            http.get_json(f"{settings.openfda_url}/drug/label.json", {"limit": 1}, cache=False)
        except HttpError as exc:
            if exc.error_type in ("service_unavailable", "timeout", "offline"):
                # The agent's sentences and buttons follow what the probe found (a connection that times out is
                # as unreachable as one refused), until a look-up answers.
                note_unreachable(urlsplit(settings.openfda_url).hostname or "")
                return False
            return True
        finally:
            http.close()
        return True

    return probe


def load_llm(settings: Settings) -> LLM:
    """The model ``settings.backend`` names: the llm layer's backends, and the agent's rule-based demo model."""
    from docgemma.agent.demo_llm import AGENT_BACKENDS

    return make_llm(settings, AGENT_BACKENDS)


def build_assistant(settings: Settings, ehr: Ehr | None = None, store: ConversationStore | None = None,
                    metrics: Metrics | None = None, llm: LLM | None = None, tools: Sequence[ToolSpec] = ()) -> Assistant:
    """Load the model, open the record and the conversation store (``store``, or the one ``settings`` name:
    SQLite under ``data_dir`` by default, PostgreSQL with ``DOCGEMMA_CHECKPOINT_URL``). With ``metrics``, each
    model call's latency is observed. ``llm``: a model already loaded (a notebook's), used instead of loading
    the one ``settings`` name: one copy on the GPU. ``tools``: tools of the assembly's own, added to the
    registry (see :func:`build_registry`)."""
    store = store or open_store(settings)
    log.info("conversations: %s", store.where)
    DrugDictionary.warm()
    ehr = ehr or build_ehr(settings)
    llm = llm if llm is not None else load_llm(settings)
    log.info("model: %s", llm.name)
    if metrics is not None:
        llm = metrics.timed(llm)
    images = ImageStore(settings.image_store_path, max_file_bytes=settings.max_image_bytes,
                        max_total_bytes=settings.image_store_bytes, max_files=settings.image_store_files)
    registry = build_registry(settings, ehr, tools=tools)
    return Assistant(llm, registry, store.checkpointer, settings,
                     patient_context=ehr.patient_context, write_check=record_write_check(ehr),
                     record_facts=record_facts(ehr), image_store=images,
                     claims=store.claims, find_write=write_lookup(ehr, registry), patient_roster=record_roster(ehr))
