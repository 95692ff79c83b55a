"""Every setting, read from ``DOCGEMMA_*`` environment variables in one place.

Nothing else in the package reads the environment: modules receive a :class:`Settings` (or the
values they need) from their caller, so tests can build one without touching ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar, cast

Backend = Literal["transformers", "openai", "fake", "llamacpp"]
BACKENDS: tuple[Backend, ...] = ("transformers", "openai", "fake", "llamacpp")
ToolTransport = Literal["inprocess", "mcp"]

#: The model the product is built for; loaded in 4-bit NF4 when CUDA is available.
MEDGEMMA_MODEL_ID = "google/medgemma-1.5-4b-it"


class ConfigError(ValueError):
    """A setting has a value the application cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    """Application settings. Build with :meth:`from_env` or directly in tests."""

    backend: Backend = "transformers"
    #: Model id, local directory or ``.gguf`` file; ``None`` = MedGemma on CUDA, the embedded model on CPU.
    model: str | None = None
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_api_key: str | None = None
    #: Seconds one call to the OpenAI-compatible server may take in all; past it the turn says the model is not
    #: answering.
    openai_timeout_s: float = 120.0
    fhir_base_url: str | None = None
    fhir_client_id: str | None = None
    fhir_client_secret: str | None = None
    fhir_token_url: str | None = None
    #: SMART Backend Services: PEM private key (RSA → RS384, EC P-384 → ES384) and its ``kid`` in the JWKS the
    #: FHIR server's authorization server knows; with ``fhir_client_id`` this replaces the client secret.
    fhir_private_key: Path | None = None
    fhir_key_id: str | None = None
    fhir_scopes: str = "system/*.read system/*.write"
    #: A fixed bearer token for the FHIR server (``ehr serve`` elsewhere with ``DOCGEMMA_EHR_TOKEN``).
    fhir_token: str | None = None
    #: Bearer token ``ehr serve`` requires (mandatory when bound to a non-loopback address).
    ehr_token: str | None = None
    #: Bearer token the MCP tool server over HTTP requires (mandatory when bound to a non-loopback address).
    mcp_token: str | None = None
    #: The key the app signs a clinician-approved write with and ``mcp --allow-writes`` checks it with (the app
    #: makes a fresh one for the stdio server it starts).
    mcp_approval_key: str | None = None
    #: Host names our servers answer to besides loopback and their bound address (``DOCGEMMA_ALLOWED_HOSTS``, names
    #: separated by commas; a Hugging Face Space's ``SPACE_HOST`` is added): any other ``Host`` is refused (421).
    allowed_hosts: str | None = None
    #: A Hugging Face Space's public host name (``SPACE_HOST``): its pages' ``Origin``, but not a ``Host`` check (the
    #: Space's proxy and health checks may name the server otherwise, and a public server is no DNS-rebinding target).
    space_host: str | None = None
    data_dir: Path = field(default_factory=lambda: Path.home() / ".docgemma")
    #: Where a GGUF model (the embedded default) is kept once converted to transformers' own format
    #: (``DOCGEMMA_MODEL_CACHE``, ``off`` for none): loading the GGUF (dequantising it, reading its vocabulary) took 14 s
    #: of every start on 2 cores, the converted copy 0.2 s (about 540 MB on disk, float32 as computed).
    model_cache_dir: Path | None = field(default_factory=lambda: default_model_cache(os.environ))
    #: Longest clinician message accepted as is; longer ones are truncated with a visible note.
    max_message_chars: int = 4000
    #: Largest image upload accepted, in bytes.
    max_image_bytes: int = 20 * 1024 * 1024
    #: Largest image accepted, in pixels (width × height of one frame), checked before decoding.
    max_image_pixels: int = 50_000_000
    #: A page session's state is dropped this long after its tab closed, or after this long without an event
    #: (``DOCGEMMA_SESSION_CLOSED_S``, ``DOCGEMMA_SESSION_IDLE_S``): Gradio kept every session otherwise.
    session_closed_s: int = 120
    session_idle_s: int = 4 * 3600
    #: Bounds of the on-disk store of uploaded images (``data_dir/images``): total bytes and file count.
    image_store_bytes: int = 1024 * 1024 * 1024
    image_store_files: int = 500
    #: Entries of the knowledge tools' in-memory HTTP response cache (least recently used evicted).
    http_cache_entries: int = 256
    tool_timeout_s: float = 10.0
    #: ``user:password`` to require a login for the web app (``DOCGEMMA_AUTH``); None = open on loopback only.
    auth: str | None = None
    #: ``DOCGEMMA_PUBLIC_DEMO=on``: the web app may serve beyond loopback without ``DOCGEMMA_AUTH``, and only with
    #: the embedded record holding nothing but the synthetic demo patients (a public demo Space); on by default on a
    #: Hugging Face Space (``SPACE_ID``), off everywhere else.
    public_demo: bool = False
    log_level: str = "WARNING"
    openfda_api_key: str | None = None
    ncbi_api_key: str | None = None
    ncbi_email: str | None = None
    #: API base URLs: the only hosts the tools may call (tests point them at local fixture servers).
    openfda_url: str = "https://api.fda.gov"
    eutils_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    europepmc_url: str = "https://www.ebi.ac.uk/europepmc/webservices/rest"
    ctgov_url: str = "https://clinicaltrials.gov/api/v2"
    #: ``inprocess`` (default) or ``mcp``: TOOL_EXECUTE calls the tools through an MCP client.
    tool_transport: ToolTransport = "inprocess"
    #: ``postgresql://user:password@host:port/db``: conversation threads and approval claims in PostgreSQL, shared
    #: by every app replica (``deploy/``). None = the SQLite file :attr:`checkpoint_path` (one process).
    checkpoint_url: str | None = None
    #: Seconds an approval's claim is held without renewal: the process carrying out an approved write renews it
    #: while it runs; after a crash, another process (or the restarted one) recovers the card once it ran out.
    approval_lease_s: float = 30.0
    #: Whether local backends reuse the previous call's KV cache for a common prompt prefix
    #: (``DOCGEMMA_PREFIX_CACHE``: ``on``, ``off``, or ``auto`` = None). None: on, except where reuse is measured not
    #: to reproduce a full prefill (the transformers backend with bf16 compute: see ``llm/prefix_cache.py``).
    prefix_cache: bool | None = None
    #: Where the web app listens: Gradio's own variables (``GRADIO_SERVER_NAME``, ``GRADIO_SERVER_PORT``), read here
    #: with the rest so one place reads the environment.
    server_name: str = "127.0.0.1"
    server_port: int = 7860

    @property
    def checkpoint_path(self) -> Path:
        """SQLite file holding conversation threads (LangGraph checkpointer)."""
        return self.data_dir / "conversations.sqlite"

    @property
    def image_store_path(self) -> Path:
        """Directory of uploaded images (content-hash file names), referenced from conversation threads."""
        return self.data_dir / "images"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``env`` (default: ``os.environ``); raise :class:`ConfigError` on bad values."""
        env = os.environ if env is None else env
        backend = env.get("DOCGEMMA_BACKEND", "transformers").strip().lower()
        if backend not in BACKENDS:
            raise ConfigError(f"DOCGEMMA_BACKEND={backend!r} is not one of {', '.join(BACKENDS)}")
        defaults = cls()
        data_dir = Path(env["DOCGEMMA_DATA_DIR"]).expanduser() if env.get("DOCGEMMA_DATA_DIR") else None
        return cls(
            backend=cast(Backend, backend),  # checked against BACKENDS above
            model=env.get("DOCGEMMA_MODEL") or None,
            openai_base_url=env.get("DOCGEMMA_OPENAI_BASE_URL", defaults.openai_base_url),
            openai_api_key=env.get("DOCGEMMA_OPENAI_API_KEY") or None,
            openai_timeout_s=_float(env, "DOCGEMMA_OPENAI_TIMEOUT_S", defaults.openai_timeout_s),
            fhir_base_url=(env.get("DOCGEMMA_FHIR_BASE_URL") or "").rstrip("/") or None,
            fhir_client_id=env.get("DOCGEMMA_FHIR_CLIENT_ID") or None,
            fhir_client_secret=env.get("DOCGEMMA_FHIR_CLIENT_SECRET") or None,
            fhir_token_url=env.get("DOCGEMMA_FHIR_TOKEN_URL") or None,
            fhir_private_key=Path(key).expanduser() if (key := env.get("DOCGEMMA_FHIR_PRIVATE_KEY")) else None,
            fhir_key_id=env.get("DOCGEMMA_FHIR_KEY_ID") or None,
            fhir_scopes=env.get("DOCGEMMA_FHIR_SCOPES") or defaults.fhir_scopes,
            fhir_token=env.get("DOCGEMMA_FHIR_TOKEN") or None,
            ehr_token=env.get("DOCGEMMA_EHR_TOKEN") or None,
            mcp_token=env.get("DOCGEMMA_MCP_TOKEN") or None,
            mcp_approval_key=env.get("DOCGEMMA_MCP_APPROVAL_KEY") or None,
            allowed_hosts=env.get("DOCGEMMA_ALLOWED_HOSTS") or None,
            space_host=env.get("SPACE_HOST") or None,
            data_dir=data_dir or defaults.data_dir,
            model_cache_dir=_model_cache(env),
            max_message_chars=_int(env, "DOCGEMMA_MAX_MESSAGE_CHARS", defaults.max_message_chars),
            max_image_bytes=_int(env, "DOCGEMMA_MAX_IMAGE_BYTES", defaults.max_image_bytes),
            max_image_pixels=_int(env, "DOCGEMMA_MAX_IMAGE_PIXELS", defaults.max_image_pixels),
            session_closed_s=_int(env, "DOCGEMMA_SESSION_CLOSED_S", defaults.session_closed_s),
            session_idle_s=_int(env, "DOCGEMMA_SESSION_IDLE_S", defaults.session_idle_s),
            image_store_bytes=_int(env, "DOCGEMMA_IMAGE_STORE_BYTES", defaults.image_store_bytes),
            image_store_files=_int(env, "DOCGEMMA_IMAGE_STORE_FILES", defaults.image_store_files),
            http_cache_entries=_int(env, "DOCGEMMA_HTTP_CACHE_ENTRIES", defaults.http_cache_entries),
            tool_timeout_s=_float(env, "DOCGEMMA_TOOL_TIMEOUT_S", defaults.tool_timeout_s),
            log_level=env.get("DOCGEMMA_LOG_LEVEL", defaults.log_level).upper(),
            auth=_login(env, "DOCGEMMA_AUTH"),
            # A Hugging Face Space (SPACE_ID, set by the platform) is a public demo unless told otherwise: it must
            # serve on 0.0.0.0, and the start-up check still refuses any record but the synthetic demo one and any
            # external FHIR server, so a copy of the Space holding real data stops at start instead.
            public_demo=bool(_SWITCH[_choice(env, "DOCGEMMA_PUBLIC_DEMO", ("on", "off"),
                                             "on" if env.get("SPACE_ID") else "off")]),
            openfda_api_key=env.get("OPENFDA_API_KEY") or None,
            ncbi_api_key=env.get("NCBI_API_KEY") or None,
            ncbi_email=env.get("NCBI_EMAIL") or None,
            openfda_url=env.get("DOCGEMMA_OPENFDA_URL", defaults.openfda_url).rstrip("/"),
            eutils_url=env.get("DOCGEMMA_EUTILS_URL", defaults.eutils_url).rstrip("/"),
            europepmc_url=env.get("DOCGEMMA_EUROPEPMC_URL", defaults.europepmc_url).rstrip("/"),
            ctgov_url=env.get("DOCGEMMA_CTGOV_URL", defaults.ctgov_url).rstrip("/"),
            tool_transport=cast(ToolTransport, _choice(env, "DOCGEMMA_TOOL_TRANSPORT", ("inprocess", "mcp"),
                                                       defaults.tool_transport)),
            checkpoint_url=_database_url(env, "DOCGEMMA_CHECKPOINT_URL"),
            approval_lease_s=_float(env, "DOCGEMMA_APPROVAL_LEASE_S", defaults.approval_lease_s),
            prefix_cache=_SWITCH[_choice(env, "DOCGEMMA_PREFIX_CACHE", tuple(_SWITCH), "auto")],
            server_name=env.get("GRADIO_SERVER_NAME", defaults.server_name),
            server_port=_port(env, "GRADIO_SERVER_PORT", defaults.server_port),
        )

    def to_env(self) -> dict[str, str]:
        """These settings as the environment variables :meth:`from_env` reads (a subprocess's settings, given to it
        explicitly); a setting that is None is left out."""
        out: dict[str, str] = {}
        for name, variable in ENV_NAMES.items():
            value = getattr(self, name)
            if value is None and name == "model_cache_dir":
                out[variable] = "off"  # None is "no cache", not "the default cache"
                continue
            if value is None:
                continue
            out[variable] = {True: "on", False: "off"}[value] if isinstance(value, bool) else str(value)
        return out


#: A switch's words and values (``auto``: the component decides).
_SWITCH: dict[str, bool | None] = {"auto": None, "on": True, "off": False}

#: Each setting's environment variable (what :meth:`Settings.from_env` reads and :meth:`Settings.to_env` writes).
ENV_NAMES: dict[str, str] = {
    name: f"DOCGEMMA_{name.upper()}" for name in Settings.__dataclass_fields__
    if name not in ("openfda_api_key", "ncbi_api_key", "ncbi_email", "server_name", "server_port", "model_cache_dir")
} | {"model_cache_dir": "DOCGEMMA_MODEL_CACHE", "openfda_api_key": "OPENFDA_API_KEY", "ncbi_api_key": "NCBI_API_KEY",
     "ncbi_email": "NCBI_EMAIL", "server_name": "GRADIO_SERVER_NAME", "server_port": "GRADIO_SERVER_PORT"}


NumberT = TypeVar("NumberT", int, float)


def _positive(env: Mapping[str, str], name: str, default: NumberT, kind: type[NumberT], what: str) -> NumberT:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError as exc:
        raise ConfigError(f"{name}={raw!r} is not {what}") from exc
    if value <= 0:
        raise ConfigError(f"{name}={raw!r} must be positive")
    return value


def default_model_cache(env: Mapping[str, str]) -> Path:
    """The user's cache folder (``XDG_CACHE_HOME``, else ``~/.cache``), ``docgemma/models`` in it."""
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "docgemma" / "models"


def _model_cache(env: Mapping[str, str]) -> Path | None:
    """``DOCGEMMA_MODEL_CACHE``: a folder, ``off`` (None: no cache), or unset (the user's cache folder)."""
    cache = env.get("DOCGEMMA_MODEL_CACHE", "").strip()
    if cache.lower() == "off":
        return None
    return Path(cache).expanduser() if cache else default_model_cache(env)


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    return _positive(env, name, default, int, "a whole number")


def _port(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, str(default))
    try:
        port = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a port number") from None
    if not 0 < port < 65536:
        raise ConfigError(f"{name}={port} is not a port number (1-65535)")
    return port


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    return _positive(env, name, default, float, "a number")


#: URL schemes of the PostgreSQL checkpointer (libpq accepts both).
DATABASE_SCHEMES = ("postgresql://", "postgres://")


def _database_url(env: Mapping[str, str], name: str) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if not raw.startswith(DATABASE_SCHEMES) or len(raw) <= len(raw.split("//")[0]) + 2:
        # The value may hold a password: the message names the variable and the expected form, not the value.
        raise ConfigError(f"{name} must be a postgresql://user:password@host:port/database URL "
                          "(leave it unset for the SQLite file under DOCGEMMA_DATA_DIR)")
    return raw


def _login(env: Mapping[str, str], name: str) -> str | None:
    """``user:password``, both parts non-empty (the password may hold colons); None when unset."""
    raw = env.get(name) or ""
    if not raw:
        return None
    user, colon, password = raw.partition(":")
    if not colon or not user.strip() or not password:
        # Started anyway, nobody could sign in: refuse at start. The message never repeats the value (a password).
        raise ConfigError(f"{name} must be user:password with a non-empty user name and password "
                          "(leave it unset for no login, on 127.0.0.1 only)")
    return raw


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    value = env.get(name, default).strip().lower()
    if value not in choices:
        raise ConfigError(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value
