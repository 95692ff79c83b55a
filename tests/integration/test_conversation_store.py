"""The conversation store (docgemma/ops/conversation_store.py): LangGraph's checkpointer and the approval-card claims on
SQLite (default) and PostgreSQL (``DOCGEMMA_CHECKPOINT_URL``, a real server from tests/postgres.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from docgemma.agent.approval import ALREADY_HANDLED, BEING_WRITTEN, RECORD_UNREACHABLE, RECOVERED_RELEASED
from docgemma.agent.assistant import Assistant
from docgemma.agent.claims import CardClaims, MemoryClaims
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import TurnResult
from docgemma.config import ConfigError, Settings
from docgemma.ehr.service import Ehr
from docgemma.ops import conversation_store as store_module
from docgemma.ops.conversation_store import ConversationStore, open_store
from docgemma.runtime import build_registry
from docgemma.tools.ehr_tools import record_write_check, write_lookup
from docgemma.tools.registry import ToolContext
from tests.conftest import free_port

PRESCRIBE = "Prescribe metformin 500 mg twice daily for Amina Okafor"


def assistant_on(store: ConversationStore, ehr: Ehr, settings: Settings) -> Assistant:
    registry = build_registry(settings, ehr, in_process=True)
    return Assistant(demo_llm(), registry, store.checkpointer, settings,
                     patient_context=ehr.patient_context, write_check=record_write_check(ehr), claims=store.claims,
                     find_write=write_lookup(ehr, registry))


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


def claims_of(kind: str, tmp_path: Path, request: pytest.FixtureRequest,
              n: int = 2) -> tuple[list[CardClaims], list[ConversationStore]]:
    """``n`` handles on one set of claims: in memory (one), or ``n`` stores on one SQLite file / PostgreSQL db."""
    if kind == "memory":
        return [MemoryClaims()], []
    url = request.getfixturevalue("postgres_url") if kind == "postgres" else None
    closers = [open_store(Settings(data_dir=tmp_path, checkpoint_url=url)) for _ in range(n)]
    return [s.claims for s in closers], closers


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_a_card_is_claimed_once_under_concurrency(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    stores, closers = claims_of(kind, tmp_path, request)
    won: list[bool] = []
    barrier = threading.Barrier(8)

    def claim(i: int) -> None:
        barrier.wait()
        won.append(stores[i % len(stores)].claim("thread", "card-1", f"owner-{i}", 30.0, {"action": "approve"})[0])

    workers = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(won) == [False] * 7 + [True]
    assert stores[-1].claim("thread", "card-2", "x", 30.0, {})[0] and stores[0].claim("other-thread", "card-1", "x", 30.0, {})[0]
    stores[0].release("thread", "card-1")  # a failed run gives its card back
    assert stores[-1].claim("thread", "card-1", "y", 30.0, {})[0]
    for s in closers:
        s.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_the_approval_state_machine(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """claimed (owner, lease) -> written (record id) -> confirmed; only the owner moves its row; an expired
    claim is taken over by exactly one of several racing processes; a released card is pending again."""
    stores, closers = claims_of(kind, tmp_path, request)
    one, other = stores[0], stores[-1]
    won, row = one.claim("t", "c", "A", 30.0, {"action": "override", "reason": "benefit outweighs"})
    assert won and row.state == "claimed" and row.owner == "A" and row.live()
    seen = other.get("t", "c")
    assert seen is not None and seen.live() and seen.decision == {"action": "override", "reason": "benefit outweighs"}
    assert not other.advance("t", "c", "B", "written", record_id="X/1")  # not B's to move
    assert one.advance("t", "c", "A", "written", record_id="MedicationRequest/1", lease_s=30.0)
    assert (other.get("t", "c") or seen).record_id == "MedicationRequest/1"
    assert one.advance("t", "c", "A", "confirmed")
    done = other.get("t", "c")
    assert done is not None and done.done and not done.live() and done.record_id == "MedicationRequest/1"
    assert not one.renew("t", "c", "A", 30.0)  # a finished row is not held any more
    # A process that died: its lease ran out. Of several racing takers, one wins; the row keeps its state.
    one.claim("t", "d", "dead", 0.0, {"action": "approve"})
    expired = other.get("t", "d")
    assert expired is not None and not expired.live() and not expired.done
    taken: list[bool] = []
    barrier = threading.Barrier(6)

    def take(i: int) -> None:
        barrier.wait()
        taken.append(stores[i % len(stores)].take_over(expired, f"taker-{i}", 30.0))

    workers = [threading.Thread(target=take, args=(i,)) for i in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(taken) == [False] * 5 + [True]
    now = one.get("t", "d")
    assert now is not None and now.owner.startswith("taker-") and now.live() and now.state == "claimed"
    assert not other.take_over(expired, "late", 30.0)  # the row changed since it was read
    one.release("t", "d", "someone-else")  # only the holder releases
    assert one.get("t", "d") is not None
    one.release("t", "d", now.owner)
    assert other.get("t", "d") is None and other.claim("t", "d", "B", 30.0, {})[0]  # pending again
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
    start = time.monotonic()
    run = subprocess.run([sys.executable, "app.py"], cwd=Path(__file__).parents[2], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2, run.stderr[-2000:]
    # One error line, no connection pool retry warnings, and no longer than its own timeout said (start-up aside).
    assert "WARNING" not in run.stderr, run.stderr[-2000:]
    assert time.monotonic() - start < store_module.CONNECT_TIMEOUT_S + 30
    assert f"error: DOCGEMMA_CHECKPOINT_URL: cannot connect to PostgreSQL at postgresql://127.0.0.1:{port}" in run.stderr
    assert "secret" not in run.stderr and not (tmp_path / "conversations.sqlite").exists()


# ── recovery of a claim whose process died (in one process: the dead owner is simulated by its row) ──


def test_an_expired_claim_with_nothing_written_puts_the_card_back_and_says_so(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    ehr, store = Ehr.embedded(tmp_path / "record.sqlite"), open_store(settings)
    assistant = assistant_on(store, ehr, settings)
    card = paused(assistant, "t")
    before = orders(ehr)
    store.claims.claim("t", card, "dead-process", 0.0, {"action": "approve", "card_id": card})  # died after claiming
    answer = assistant.resume("t", {"action": "reject", "card_id": card})
    assert isinstance(answer, TurnResult) and answer.answer == RECOVERED_RELEASED  # the reject was not applied
    pending = assistant.pending_approval("t")
    assert pending is not None and pending["card_id"] == card and store.claims.get("t", card) is None
    done = assistant.resume("t", {"action": "approve", "card_id": card})  # decided again, normally
    assert isinstance(done, TurnResult) and len(done.writes) == 1 and orders(ehr) == before + 1
    row = store.claims.get("t", card)
    assert row is not None and row.state == "confirmed" and row.record_id.startswith("MedicationRequest/")
    store.close()


def test_an_expired_claim_whose_write_landed_finishes_the_turn_and_names_the_record(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    ehr, store = Ehr.embedded(tmp_path / "record.sqlite"), open_store(settings)
    assistant = assistant_on(store, ehr, settings)
    assistant.run_turn("t", "Find patient Amina Okafor and check her chart")
    card = assistant.run_turn("t", PRESCRIBE)
    assert isinstance(card, dict)
    spec = assistant.registry["prescribe_medication"]
    before = orders(ehr)
    # The dead process had written the order under the action's key, then died before recording it.
    landed = spec.run(spec.args_model(**card["args"]), ToolContext(scope=card["action_id"]))
    store.claims.claim("t", card["card_id"], "dead-process", 0.0, {"action": "approve", "card_id": card["card_id"]})
    answer = assistant.run_turn("t", "What are her allergies?")  # the next message is no longer blocked
    record = landed["data"]["resource"]
    assert isinstance(answer, TurnResult) and f"before the interruption: {record}" in answer.answer
    assert "Your message was not sent" in answer.answer and any(record in w for w in answer.writes)
    assert orders(ehr) == before + 1 and assistant.pending_approval("t") is None
    assert assistant.state("t")["transcript"][-1].get("note", "").startswith(
        "The prescription was written: metformin 500 mg twice daily. The approval was interrupted")
    row = store.claims.get("t", card["card_id"])
    assert row is not None and row.state == "confirmed" and row.record_id == record
    store.close()


def test_a_live_claim_of_another_process_is_being_carried_out_not_already_handled(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    ehr, store = Ehr.embedded(tmp_path / "record.sqlite"), open_store(settings)
    assistant = assistant_on(store, ehr, settings)
    card = paused(assistant, "t")
    store.claims.claim("t", card, "other-replica", 60.0, {"action": "approve", "card_id": card})
    for answer in (assistant.resume("t", {"action": "approve", "card_id": card}),
                   assistant.run_turn("t", "What are her allergies?")):
        assert isinstance(answer, TurnResult) and answer.answer == BEING_WRITTEN
    assert assistant.pending_approval("t") is not None
    store.close()


def test_a_recovery_marker_sent_by_a_caller_is_ignored(tmp_path: Path) -> None:
    """Only the Assistant marks a resume as a recovery (which skips the card's checks): a caller cannot."""
    settings = Settings(data_dir=tmp_path)
    ehr, store = Ehr.embedded(tmp_path / "record.sqlite"), open_store(settings)
    assistant = assistant_on(store, ehr, settings)
    assistant.run_turn("t", "Find patient Grace Mensah and check her chart")
    card = assistant.run_turn("t", "Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    assert isinstance(card, dict) and card["override_required"], card  # recorded anaphylaxis to penicillin
    pid = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    answer = assistant.resume("t", {"action": "approve", "card_id": card["card_id"], "recovered": "X/1"})
    assert isinstance(answer, dict) and "Plain approval refused" in answer["notice"]
    assert ehr.client.search("MedicationRequest", [("patient", pid)]) == []
    store.close()


def test_a_record_that_cannot_be_asked_leaves_the_card_unsettled_and_says_so(tmp_path: Path) -> None:
    """Recovery never guesses "nothing was written": with the record unreachable the claim stays unsettled
    (lease ended) and the clinician is told; once the record answers, the next click settles it."""
    settings = Settings(data_dir=tmp_path)
    ehr, store = Ehr.embedded(tmp_path / "record.sqlite"), open_store(settings)
    assistant = assistant_on(store, ehr, settings)
    card = paused(assistant, "t")
    store.claims.claim("t", card, "dead-process", 0.0, {"action": "approve", "card_id": card})
    found = assistant.find_write

    def unreachable(tool: str, action_id: str) -> str | None:
        raise ConnectionError("the record did not answer")

    assistant.find_write = unreachable
    answer = assistant.resume("t", {"action": "approve", "card_id": card})
    assert isinstance(answer, TurnResult) and answer.answer == RECORD_UNREACHABLE
    row = store.claims.get("t", card)
    assert row is not None and row.state == "claimed" and not row.live()  # still unsettled, recoverable
    assistant.find_write = found
    again = assistant.resume("t", {"action": "approve", "card_id": card})
    assert isinstance(again, TurnResult) and again.answer == RECOVERED_RELEASED
    store.close()
