"""The conversation store: LangGraph's checkpointer and the approval-card claims, in one database.

SQLite (the default, one process: the file ``conversations.sqlite`` under ``DOCGEMMA_DATA_DIR``) or PostgreSQL
(``DOCGEMMA_CHECKPOINT_URL=postgresql://…``, shared by every app replica). The claims live beside the
checkpoints so that "one decision per card" holds wherever the conversation can be resumed: a claim is one
row under a unique key, inserted with ``ON CONFLICT DO NOTHING``, and whoever inserted it decides.

A bad URL or an unreachable database is a :class:`~docgemma.config.ConfigError` at start-up: there is no
fallback to SQLite, which would split the conversations between replicas without anyone noticing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from langgraph.checkpoint.base import BaseCheckpointSaver

from docgemma.agent.claims import CardClaims
from docgemma.config import ConfigError, Settings

CLAIMS_TABLE = "docgemma_card_claims"
_CREATE = (f"CREATE TABLE IF NOT EXISTS {CLAIMS_TABLE} (thread_id TEXT NOT NULL, card_id TEXT NOT NULL, "
           "claimed_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (thread_id, card_id))")
#: pg_advisory_lock key held while the tables are set up (any fixed number unique to this app).
SETUP_LOCK = 0x646F6367  # "docg"
#: Seconds to wait for PostgreSQL at start-up before saying it cannot be reached.
CONNECT_TIMEOUT_S = 10.0


@dataclass
class ConversationStore:
    """Where conversations and card claims live, and how to check that it answers."""

    checkpointer: BaseCheckpointSaver[Any]
    claims: CardClaims
    #: Raises when the database does not answer (the readiness check).
    ping: Callable[[], None]
    #: Where, for logs and the readiness answer: never the password.
    where: str
    close: Callable[[], None]


def redacted(url: str) -> str:
    """``postgresql://host:port/db`` of a database URL: without user and password."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


def open_store(settings: Settings, *, max_connections: int = 8) -> ConversationStore:
    """The store ``settings`` name, created if new (tables are set up idempotently)."""
    if settings.checkpoint_url:
        return _postgres(settings.checkpoint_url, max_connections)
    return _sqlite(settings)


# ── SQLite ──


class SqliteClaims:
    """Card claims in the conversation's SQLite file (its own connection: SQLite locks the file between them)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._lock = threading.Lock()  # one connection shared by the app's worker threads
        with self._lock:
            self._db.execute(_CREATE.replace("DOUBLE PRECISION", "REAL"))

    def claim(self, thread_id: str, card_id: str) -> bool:
        with self._lock:
            cursor = self._db.execute(
                f"INSERT INTO {CLAIMS_TABLE} (thread_id, card_id, claimed_at) VALUES (?, ?, ?) "
                "ON CONFLICT (thread_id, card_id) DO NOTHING", (thread_id, card_id, time.time()))
            return cursor.rowcount == 1

    def release(self, thread_id: str, card_id: str) -> None:
        with self._lock:
            self._db.execute(f"DELETE FROM {CLAIMS_TABLE} WHERE thread_id = ? AND card_id = ?", (thread_id, card_id))


def _sqlite(settings: Settings) -> ConversationStore:
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:
        raise ImportError("conversation memory needs: pip install langgraph-checkpoint-sqlite") from exc
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # One connection shared by the app's worker threads; SqliteSaver serialises access with its own lock.
    connection = sqlite3.connect(settings.checkpoint_path, check_same_thread=False)
    checkpointer = SqliteSaver(connection)
    checkpointer.setup()
    # Autocommit (isolation_level=None): each claim is its own transaction; wait up to 30 s for the file lock.
    claims_db = sqlite3.connect(settings.checkpoint_path, check_same_thread=False, timeout=30, isolation_level=None)
    claims = SqliteClaims(claims_db)

    def ping() -> None:
        with checkpointer.lock:
            connection.execute("SELECT 1").fetchone()

    def close() -> None:
        claims_db.close()
        connection.close()

    return ConversationStore(checkpointer, claims, ping, f"sqlite:{settings.checkpoint_path}", close)


# ── PostgreSQL ──


class PostgresClaims:
    """Card claims in PostgreSQL, beside LangGraph's checkpoint tables."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        with self._pool.connection() as conn:
            conn.execute(_CREATE)

    def claim(self, thread_id: str, card_id: str) -> bool:
        with self._pool.connection() as conn:
            cursor = conn.execute(
                f"INSERT INTO {CLAIMS_TABLE} (thread_id, card_id, claimed_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (thread_id, card_id) DO NOTHING", (thread_id, card_id, time.time()))
            return bool(cursor.rowcount == 1)

    def release(self, thread_id: str, card_id: str) -> None:
        with self._pool.connection() as conn:
            conn.execute(f"DELETE FROM {CLAIMS_TABLE} WHERE thread_id = %s AND card_id = %s", (thread_id, card_id))


def _postgres(url: str, max_connections: int) -> ConversationStore:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import DictRow, dict_row
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError as exc:
        raise ImportError("DOCGEMMA_CHECKPOINT_URL=postgresql://… needs: pip install langgraph-checkpoint-postgres "
                          "'psycopg[binary]' psycopg-pool (all in requirements.txt)") from exc
    where = redacted(url)
    # autocommit and dict rows are what PostgresSaver expects of its connections; prepare_threshold=0 keeps it
    # working behind a transaction-mode pooler (PgBouncer).
    pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(
        url, min_size=1, max_size=max_connections, open=False, name="docgemma-checkpoints",
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
                "connect_timeout": int(CONNECT_TIMEOUT_S)})
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    except PoolTimeout as exc:
        pool.close()
        raise ConfigError(f"DOCGEMMA_CHECKPOINT_URL: cannot connect to PostgreSQL at {where} within "
                          f"{CONNECT_TIMEOUT_S:.0f} s (is it running, and are the user, password and database "
                          "right?)") from exc
    checkpointer = PostgresSaver(pool)
    # Replicas starting together on a new database would run LangGraph's migrations at the same time (seen: a
    # duplicate key in checkpoint_migrations): one at a time, under a session advisory lock.
    # Polled with pg_try_advisory_lock, not waited for with pg_advisory_lock: a session blocked in that statement
    # holds a snapshot, and the migrations' CREATE INDEX CONCURRENTLY waits for every snapshot (a deadlock that
    # PostgreSQL does not detect; seen here).
    with pool.connection() as conn:
        deadline = time.monotonic() + 120.0
        while not (conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (SETUP_LOCK,)).fetchone() or {}).get("ok"):
            if time.monotonic() > deadline:
                raise ConfigError(f"DOCGEMMA_CHECKPOINT_URL: another process has been setting up {where} for 2 minutes")
            time.sleep(0.2)
        try:
            checkpointer.setup()
            claims = PostgresClaims(pool)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))

    def ping() -> None:
        with pool.connection(timeout=3.0) as conn:
            conn.execute("SELECT 1").fetchone()

    return ConversationStore(checkpointer, claims, ping, where, pool.close)
