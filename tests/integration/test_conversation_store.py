"""The conversation store (docgemma/ops/store.py): LangGraph's checkpointer and the approval-card claims on
SQLite (default) and PostgreSQL (``DOCGEMMA_CHECKPOINT_URL``, a real server from tests/postgres.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from docgemma.agent.approval import ALREADY_HANDLED
from docgemma.agent.assistant import Assistant
from docgemma.agent.claims import CardClaims, MemoryClaims
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import TurnResult
from docgemma.config import ConfigError, Settings
from docgemma.ehr.service import Ehr
from docgemma.ops import store as store_module
from docgemma.ops.store import ConversationStore, open_store
from docgemma.runtime import build_registry
from docgemma.tools.ehr_tools import record_write_check
from tests.conftest import free_port

PRESCRIBE = "Prescribe metformin 500 mg twice daily for Amina Okafor"


def assistant_on(store: ConversationStore, ehr: Ehr, settings: Settings) -> Assistant:
    return Assistant(demo_llm(), build_registry(settings, ehr, in_process=True), store.checkpointer, settings,
                     patient_context=ehr.patient_context, write_check=record_write_check(ehr), claims=store.claims)


def paused(assistant: Assistant, thread: str) -> str:
    assistant.run_turn(thread, "Find patient Amina Okafor and check her chart")
    card = assistant.run_turn(thread, PRESCRIBE)
    assert isinstance(card, dict) and card["tool"] == "prescribe_medication"
    return card["card_id"]


def orders(ehr: Ehr) -> int:
    pid = ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    return len(ehr.client.search("MedicationRequest", [("patient", pid)]))


def test_turn_pause_and_resume_on_postgres_seen_by_a_second_store(postgres_url: str, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, checkpoint_url=postgres_url)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    first = open_store(settings)
    assert first.where.startswith("postgresql://127.0.0.1:") and not (tmp_path / "conversations.sqlite").exists()
    one = assistant_on(first, ehr, settings)
    card = paused(one, "t")
    before = orders(ehr)
    second = open_store(settings)  # another pool: what a second replica or a restarted process opens
    two = assistant_on(second, ehr, settings)
    pending = two.pending_approval("t")
    assert pending is not None and pending["card_id"] == card
    assert two.state("t")["active_patient"]["name"] == "Amina Okafor"  # type: ignore[index]
    done = two.resume("t", {"action": "approve", "card_id": card})
    assert isinstance(done, TurnResult) and len(done.writes) == 1
    refused = one.resume("t", {"action": "approve", "card_id": card})
    assert isinstance(refused, TurnResult) and refused.answer == ALREADY_HANDLED
    assert orders(ehr) == before + 1 and one.pending_approval("t") is None
    first.ping()
    first.close()
    second.close()


def test_two_stores_on_one_sqlite_file_decide_a_card_once(tmp_path: Path) -> None:
    """The durable claim on the default store: two processes' worth of connections to one file."""
    settings = Settings(data_dir=tmp_path)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    a_store, b_store = open_store(settings), open_store(settings)
    assert a_store.where == f"sqlite:{tmp_path / 'conversations.sqlite'}"  # SQLite stays the default
    a, b = assistant_on(a_store, ehr, settings), assistant_on(b_store, ehr, settings)
    card = paused(a, "t")
    before = orders(ehr)
    done = b.resume("t", {"action": "approve", "card_id": card})
    assert isinstance(done, TurnResult) and len(done.writes) == 1
    refused = a.resume("t", {"action": "approve", "card_id": card})
    assert isinstance(refused, TurnResult) and refused.answer == ALREADY_HANDLED and orders(ehr) == before + 1
    a_store.close()
    b_store.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_a_card_is_claimed_once_under_concurrency(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if kind == "memory":
        stores: list[CardClaims] = [MemoryClaims()]
        closers: list[ConversationStore] = []
    else:
        url = request.getfixturevalue("postgres_url") if kind == "postgres" else None
        closers = [open_store(Settings(data_dir=tmp_path, checkpoint_url=url)) for _ in range(2)]
        stores = [s.claims for s in closers]
    won: list[bool] = []
    barrier = threading.Barrier(8)

    def claim(i: int) -> None:
        barrier.wait()
        won.append(stores[i % len(stores)].claim("thread", "card-1"))

    workers = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(won) == [False] * 7 + [True]
    assert stores[-1].claim("thread", "card-2") and stores[0].claim("other-thread", "card-1")
    stores[0].release("thread", "card-1")  # a failed run gives its card back
    assert stores[-1].claim("thread", "card-1")
    for s in closers:
        s.close()


@pytest.mark.parametrize("url", ["mysql://user:secret@db/docgemma", "conversations.sqlite", "postgresql://"])
def test_a_checkpoint_url_that_is_not_postgresql_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="DOCGEMMA_CHECKPOINT_URL") as info:
        Settings.from_env({"DOCGEMMA_CHECKPOINT_URL": url})
    assert "secret" not in str(info.value)


def test_an_unreachable_database_is_an_error_not_a_fallback_to_sqlite(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CONNECT_TIMEOUT_S", 1.0)
    port = free_port()
    settings = Settings.from_env({"DOCGEMMA_DATA_DIR": str(tmp_path),
                                  "DOCGEMMA_CHECKPOINT_URL": f"postgresql://app:secret@127.0.0.1:{port}/docgemma"})
    with pytest.raises(ConfigError, match=f"cannot connect to PostgreSQL at postgresql://127.0.0.1:{port}/docgemma") as info:
        open_store(settings)
    assert "secret" not in str(info.value) and not (tmp_path / "conversations.sqlite").exists()


def test_the_app_refuses_to_start_on_an_unreachable_database(tmp_path: Path) -> None:
    """``python app.py`` says which setting and host, exits 2, and has not fallen back to SQLite."""
    import os
    import subprocess
    import sys

    port = free_port()
    env = {**os.environ, "DOCGEMMA_BACKEND": "fake", "DOCGEMMA_DATA_DIR": str(tmp_path),
           "DOCGEMMA_CHECKPOINT_URL": f"postgresql://app:secret@127.0.0.1:{port}/docgemma"}
    run = subprocess.run([sys.executable, "app.py"], cwd=Path(__file__).parents[2], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2, run.stderr[-2000:]
    assert f"error: DOCGEMMA_CHECKPOINT_URL: cannot connect to PostgreSQL at postgresql://127.0.0.1:{port}" in run.stderr
    assert "secret" not in run.stderr and not (tmp_path / "conversations.sqlite").exists()
