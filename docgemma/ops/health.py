"""Readiness of a replica (``/readyz``): the model answers, the conversation database answers, the FHIR
server answers. Each check raises when its part is not ready; the report names the parts that failed and why,
in words that hold no secret (no URL credentials, no token) and no patient data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from docgemma.config import Settings
    from docgemma.ehr.service import Ehr
    from docgemma.ops.conversation_store import ConversationStore

#: Seconds each check may take: a probe every few seconds must not pile up behind a hung dependency.
PROBE_TIMEOUT_S = 3.0


class NotReady(RuntimeError):
    """A part the app needs does not answer."""


@dataclass
class Readiness:
    """Named checks; :meth:`report` runs them all."""

    checks: dict[str, Callable[[], None]] = field(default_factory=dict)

    def report(self) -> tuple[bool, dict[str, str]]:
        """(all ready, {part: "ok" or why not})."""
        parts: dict[str, str] = {}
        for name, check in self.checks.items():
            try:
                check()
                parts[name] = "ok"
            except Exception as exc:  # noqa: BLE001 - each failure is reported, by part, to the prober
                parts[name] = f"{type(exc).__name__}: {str(exc)[:200]}" if str(exc) else type(exc).__name__
        return all(v == "ok" for v in parts.values()), parts


def model_check(settings: Settings, loaded: Callable[[], bool],
                down: Callable[[], str | None] = lambda: None) -> Callable[[], None]:
    """In-process backends: the model is loaded. The OpenAI-compatible backend (vLLM): the server lists models
    and serves ``DOCGEMMA_MODEL``. Any backend: its latest call was answered (``down`` gives why it was not: a
    served model that lists itself but times out or answers in the wrong framing, a ZeroGPU quota or worker
    error), so a probe sees what a clinician just met."""

    def check() -> None:
        if not loaded():
            raise NotReady("the model is not loaded")
        failed = down()
        if failed is not None:
            raise NotReady(f"the model's latest call was not answered ({failed})")
        if settings.backend != "openai":
            return
        headers = {"Authorization": f"Bearer {settings.openai_api_key}"} if settings.openai_api_key else {}
        try:
            response = httpx.get(f"{settings.openai_base_url.rstrip('/')}/models", headers=headers,
                                 timeout=PROBE_TIMEOUT_S)
        except httpx.HTTPError as exc:
            raise NotReady(f"model server unreachable ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise NotReady(f"model server answered {response.status_code} to GET /models")
        served = [m.get("id") for m in response.json().get("data", []) if isinstance(m, dict)]
        if settings.model not in served:
            raise NotReady(f"the model server does not serve {settings.model!r} (it serves {served[:5]})")

    return check


def checkpoint_check(store: ConversationStore) -> Callable[[], None]:
    """The conversation database answers ``SELECT 1``."""

    def check() -> None:
        try:
            store.ping()
        except Exception as exc:
            raise NotReady(f"conversation database {store.where} does not answer ({type(exc).__name__})") from exc

    return check


def fhir_check(ehr: Ehr) -> Callable[[], None]:
    """The FHIR server returns its CapabilityStatement (``GET /metadata``, public on FHIR servers)."""

    def check() -> None:
        client = ehr.client
        try:
            response = client.http.get(f"{client.base_url}/metadata", timeout=PROBE_TIMEOUT_S)
        except httpx.HTTPError as exc:
            raise NotReady(f"FHIR server unreachable ({type(exc).__name__})") from exc
        if response.status_code >= 400:
            raise NotReady(f"FHIR server answered {response.status_code} to GET /metadata")

    return check
