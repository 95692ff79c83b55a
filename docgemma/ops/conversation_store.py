"""The conversation store: LangGraph's checkpointer and the approval-card claims, in one database.

SQLite (the default, one process: the file ``conversations.sqlite`` under ``DOCGEMMA_DATA_DIR``) or PostgreSQL
(``DOCGEMMA_CHECKPOINT_URL=postgresql://…``, shared by every app replica). The claims live beside the
checkpoints so that "one decision per card" holds wherever the conversation can be resumed: a claim is one
row under a unique key, inserted with ``ON CONFLICT DO NOTHING``, and whoever inserted it decides; the row then
follows the decision (claimed, written with the record id, confirmed) so that a process that takes over after a
crash knows how far it got (:mod:`docgemma.agent.claims`).

A bad URL or an unreachable database is a :class:`~docgemma.config.ConfigError` at start-up: there is no
fallback to SQLite, which would split the conversations between replicas without anyone noticing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from langgraph.checkpoint.base import BaseCheckpointSaver

from docgemma.agent.claims import STATES, CardClaims, Claim, State
from docgemma.config import ConfigError, Settings
from docgemma.private_files import private_database

#: One row per decided approval card: the state machine of agent/claims.py. (The table of the earlier one-shot
#: claims, ``docgemma_card_claims``, is no longer read: a card it had consumed is no longer pending anyway.)
CLAIMS_TABLE = "docgemma_approvals"
_CREATE = (f"CREATE TABLE IF NOT EXISTS {CLAIMS_TABLE} (thread_id TEXT NOT NULL, card_id TEXT NOT NULL, "
           "state TEXT NOT NULL, owner TEXT NOT NULL, lease_until DOUBLE PRECISION NOT NULL, "
           "version INTEGER NOT NULL, record_id TEXT NOT NULL, decision TEXT NOT NULL, "
           "updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (thread_id, card_id))")
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


class SqlClaims:
    """The claims' rows in SQL, for SQLite and PostgreSQL alike: ``run(sql, params)`` executes one statement in
    its own transaction (autocommit) and returns (rows affected, rows fetched); ``mark`` is the placeholder."""

    def __init__(self, run: Callable[[str, tuple[Any, ...]], tuple[int, list[tuple[Any, ...]]]], mark: str) -> None:
        self._run = run
        self._mark = mark

    def _sql(self, sql: str, *params: Any) -> tuple[int, list[tuple[Any, ...]]]:
        return self._run(sql.replace("?", self._mark), params)

    def claim(self, thread_id: str, card_id: str, owner: str, lease_s: float,
              decision: dict[str, Any]) -> tuple[bool, Claim]:
        now = time.time()
        for _ in range(3):  # the row may be released between the insert and the read: insert again
            inserted, _rows = self._sql(
                f"INSERT INTO {CLAIMS_TABLE} (thread_id, card_id, state, owner, lease_until, version, record_id, "
                "decision, updated_at) VALUES (?, ?, 'claimed', ?, ?, 0, '', ?, ?) "
                "ON CONFLICT (thread_id, card_id) DO NOTHING",
                thread_id, card_id, owner, now + lease_s, json.dumps(decision, default=str), now)
            if inserted == 1:
                return True, Claim(thread_id, card_id, "claimed", owner, now + lease_s, 0, "", dict(decision))
            held = self.get(thread_id, card_id)
            if held is not None:
                return False, held
        raise RuntimeError("approval claim: the row kept disappearing between insert and read")

    def take_over(self, held: Claim, owner: str, lease_s: float) -> bool:
        changed, _rows = self._sql(
            f"UPDATE {CLAIMS_TABLE} SET owner = ?, lease_until = ?, version = version + 1, updated_at = ? "
            "WHERE thread_id = ? AND card_id = ? AND version = ?",
            owner, time.time() + lease_s, time.time(), held.thread_id, held.card_id, held.version)
        return changed == 1

    def advance(self, thread_id: str, card_id: str, owner: str, state: State, *, record_id: str = "",
                lease_s: float = 0.0) -> bool:
        record = ", record_id = ?" if record_id else ""
        changed, _rows = self._sql(
            f"UPDATE {CLAIMS_TABLE} SET state = ?{record}, lease_until = ?, version = version + 1, updated_at = ? "
            "WHERE thread_id = ? AND card_id = ? AND owner = ?",
            state, *([record_id] if record_id else []), time.time() + lease_s, time.time(), thread_id, card_id, owner)
        return changed == 1

    def renew(self, thread_id: str, card_id: str, owner: str, lease_s: float) -> bool:
        changed, _rows = self._sql(
            f"UPDATE {CLAIMS_TABLE} SET lease_until = ?, version = version + 1, updated_at = ? "
            "WHERE thread_id = ? AND card_id = ? AND owner = ? AND state <> 'confirmed'",
            time.time() + lease_s, time.time(), thread_id, card_id, owner)
        return changed == 1

    def release(self, thread_id: str, card_id: str, owner: str | None = None) -> None:
        if owner is None:
            self._sql(f"DELETE FROM {CLAIMS_TABLE} WHERE thread_id = ? AND card_id = ?", thread_id, card_id)
        else:
            self._sql(f"DELETE FROM {CLAIMS_TABLE} WHERE thread_id = ? AND card_id = ? AND owner = ?",
                      thread_id, card_id, owner)

    def get(self, thread_id: str, card_id: str) -> Claim | None:
        _count, rows = self._sql(
            f"SELECT state, owner, lease_until, version, record_id, decision FROM {CLAIMS_TABLE} "
            "WHERE thread_id = ? AND card_id = ?", thread_id, card_id)
        if not rows:
            return None
        state, owner, lease_until, version, record_id, decision = rows[0]
        if state not in STATES:
            raise ValueError(f"approval row in an unknown state: {state!r}")
        return Claim(thread_id, card_id, state, str(owner), float(lease_until), int(version), str(record_id),
                     dict(json.loads(decision or "{}")))


def sqlite_claims(connection: sqlite3.Connection) -> SqlClaims:
    """Claims on an autocommit SQLite connection, shared by the app's worker threads under one lock."""
    lock = threading.Lock()

    def run(sql: str, params: tuple[Any, ...]) -> tuple[int, list[tuple[Any, ...]]]:
        with lock:
            cursor = connection.execute(sql, params)
            rows = cursor.fetchall() if cursor.description else []
            return cursor.rowcount, rows

    run(_CREATE.replace("DOUBLE PRECISION", "REAL"), ())
    return SqlClaims(run, "?")


def _sqlite(settings: Settings) -> ConversationStore:
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:
        raise ImportError("conversation memory needs: pip install langgraph-checkpoint-sqlite") from exc
    private_database(settings.checkpoint_path)  # conversations hold patient data: owner-only (0600, folder 0700)
    # One connection shared by the app's worker threads; SqliteSaver serialises access with its own lock.
    connection = sqlite3.connect(settings.checkpoint_path, check_same_thread=False)
    checkpointer = SqliteSaver(connection)
    checkpointer.setup()
    # Autocommit (isolation_level=None): each claim is its own transaction; wait up to 30 s for the file lock.
    claims_db = sqlite3.connect(settings.checkpoint_path, check_same_thread=False, timeout=30, isolation_level=None)
    claims = sqlite_claims(claims_db)

    def ping() -> None:
        with checkpointer.lock:
            connection.execute("SELECT 1").fetchone()

    def close() -> None:
        claims_db.close()
        connection.close()

    return ConversationStore(checkpointer, claims, ping, f"sqlite:{settings.checkpoint_path}", close)


# ── PostgreSQL ──


def postgres_claims(pool: Any) -> SqlClaims:
    """Claims in PostgreSQL, beside LangGraph's checkpoint tables (the pool's connections are autocommit)."""

    def run(sql: str, params: tuple[Any, ...]) -> tuple[int, list[tuple[Any, ...]]]:
        with pool.connection() as conn:
            cursor = conn.execute(sql, params)
            rows = [tuple(row.values()) if isinstance(row, dict) else tuple(row)
                    for row in (cursor.fetchall() if cursor.description else [])]
            return int(cursor.rowcount), rows

    run(_CREATE, ())
    return SqlClaims(run, "%s")


def _probe(url: str, where: str) -> None:
    """One connection attempt, bounded by CONNECT_TIMEOUT_S, before the pool starts: an unreachable server is one
    error line with psycopg's reason, not the pool's retry warnings and a wait beyond the stated timeout."""
    from psycopg import Connection, OperationalError

    try:
        Connection.connect(url, connect_timeout=int(CONNECT_TIMEOUT_S)).close()
    except OperationalError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"DOCGEMMA_CHECKPOINT_URL: cannot connect to PostgreSQL at {where} within "
                          f"{CONNECT_TIMEOUT_S:.0f} s: {reason} (is it running, and are the user, password and "
                          "database right?)") from exc


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
    _probe(url, where)
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
            claims = postgres_claims(pool)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))

    def ping() -> None:
        with pool.connection(timeout=3.0) as conn:
            conn.execute("SELECT 1").fetchone()

    return ConversationStore(checkpointer, claims, ping, where, pool.close)
