"""kill -9 during an approved write, at each step of the approval's state machine (agent/claims.py): after the
claim, after the write reached the record but before the row says so, and after the row says *written* but
before the turn finished. The process kills itself with SIGKILL at that step (``DOCGEMMA_TEST_CRASH_AT``).

Single process on SQLite (the app restarted on the same files) and two replicas on PostgreSQL (the other
replica takes over): the card ends written exactly once or not at all, and the chat says which. The dead
process is on this machine, so the card is settled at once, without waiting its lease out (a long one here):
a restarted single server said "being carried out by another server" for 20-32 s. The conversation reopened
says what landed without any click ("The prescription was written: metformin 500 mg …"). A live claim of a
process on another machine is still answered "being carried out right now" until its lease ends
(tests/unit/test_page_approval_recovery.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from docgemma.agent.approval import ALREADY_HANDLED, RECOVERED_RELEASED
from docgemma.ehr.client import FhirClient
from docgemma.ehr.service import Ehr
from tests.conftest import free_port, wait_for_port
from tests.integration.test_replicas import PRESCRIBE, Replica
from tests.postgres import Postgres

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
#: Long: a dead process of this machine is known dead at once, its lease is never waited out.
LEASE_S = 60.0
#: (step the process dies at, whether the write had reached the record by then)
STEPS = [("claimed", False), ("wrote", True), ("written", True)]


def base_env(data_dir: Path) -> dict[str, str]:
    dead = f"http://127.0.0.1:{free_port()}"  # the knowledge APIs: never the internet from a test
    return {**os.environ, "DOCGEMMA_BACKEND": "fake", "DOCGEMMA_DATA_DIR": str(data_dir),
            "DOCGEMMA_APPROVAL_LEASE_S": str(LEASE_S), "DOCGEMMA_OPENFDA_URL": dead, "DOCGEMMA_EUTILS_URL": dead,
            "DOCGEMMA_EUROPEPMC_URL": dead, "DOCGEMMA_CTGOV_URL": dead}


def started(env: dict[str, str], crash_at: str | None = None) -> Replica:
    replica = Replica({**env, **({"DOCGEMMA_TEST_CRASH_AT": crash_at} if crash_at else {})})
    assert replica.read() == {"ready": True}
    return replica


def paused_turn(replica: Replica) -> tuple[str, str]:
    thread = f"crash-{uuid.uuid4().hex[:8]}"
    replica.ask(op="turn", thread=thread, message="Find patient Amina Okafor and check her chart")
    card = replica.ask(op="turn", thread=thread, message=PRESCRIBE)
    assert card.get("tool") == "prescribe_medication", card
    return thread, str(card["card_id"])


def approve_and_die(replica: Replica, thread: str, card: str) -> float:
    """Approve on ``replica``, which kills itself at its crash step; returns when it died."""
    replica.send(op="decide", thread=thread, card_id=card, action="approve")
    assert replica.process.wait(120) == -signal.SIGKILL, replica.log.read_text()[-2000:]
    return time.time()


def check_outcome(answer: dict[str, object], landed: bool, replica: Replica, thread: str, card: str,
                  orders: Callable[[], int], before: int) -> None:
    """Written exactly once (and the chat names the record id) or not at all (and the card waits again)."""
    text = str(answer["answer"])
    if landed:
        assert "had already reached the record before the interruption: MedicationRequest/" in text, answer
        written = text.split("interruption: ")[1].split(" ")[0]
        assert orders() == before + 1
        assert replica.ask(op="pending", thread=thread) == {"card_id": None}  # the conversation went on
        assert any(written in w for w in answer["writes"]), answer  # type: ignore[attr-defined]
    else:
        assert text.startswith(RECOVERED_RELEASED), answer
        assert orders() == before and answer["writes"] == []
        assert replica.ask(op="pending", thread=thread) == {"card_id": card}  # waiting for a decision again
        again = replica.ask(op="decide", thread=thread, card_id=card, action="approve")
        assert len(again["writes"]) == 1 and orders() == before + 1, again  # type: ignore[arg-type]
    # Settled: a late click on the card changes nothing.
    late = replica.ask(op="decide", thread=thread, card_id=card, action="approve")
    assert late == {"answer": ALREADY_HANDLED, "writes": []} and orders() == before + 1


# ── one process on SQLite: restarted on the same files ──


@pytest.mark.parametrize(("step", "landed"), STEPS)
def test_kill_9_at_each_step_single_process_on_sqlite(step: str, landed: bool, tmp_path: Path) -> None:
    env = base_env(tmp_path)
    crashing = started(env, crash_at=step)
    record = Ehr.embedded(tmp_path / "record.sqlite")  # the app's embedded record (the demo patients)
    pid = record.client.search("Patient", [("name", "Okafor")])[0]["id"]

    def orders() -> int:
        return len(record.client.search("MedicationRequest", [("patient", pid)]))

    thread, card = paused_turn(crashing)
    before = orders()
    died = approve_and_die(crashing, thread, card)
    assert orders() == before + (1 if landed else 0)  # what the crash left in the record
    restarted = started(env)
    try:
        # The clinician's next message is no longer blocked behind a card nobody is handling: it settles it,
        # at once (the lease is a minute long).
        answer = restarted.ask(op="turn", thread=thread, message="What are her allergies?")
        assert "Your message was not sent" in str(answer["answer"]) and time.time() < died + LEASE_S / 2
        if not landed:  # the card waits again as a new card, its notice quoting the message (kept for a reload)
            waiting = restarted.ask(op="pending", thread=thread)["card_id"]
            assert waiting != card and restarted.ask(op="decide", thread=thread, card_id=card,
                                                     action="approve") == {"answer": ALREADY_HANDLED, "writes": []}
            card = str(waiting)
        check_outcome(answer, landed, restarted, thread, card, orders, before)
    finally:
        restarted.stop()


@pytest.mark.parametrize(("step", "landed"), STEPS)
def test_the_reopened_conversation_says_what_landed(step: str, landed: bool, tmp_path: Path) -> None:
    """Reopened after the crash, before any click or message: a write that landed is reported in the chat, every
    time; a card nothing was written for waits again, and says so."""
    env = base_env(tmp_path)
    crashing = started(env, crash_at=step)
    thread, card = paused_turn(crashing)
    died = approve_and_die(crashing, thread, card)
    restarted = started(env)
    try:
        opened = restarted.ask(op="open", thread=thread)
        assert time.time() < died + LEASE_S / 2  # not the lease waited out
        if landed:
            said = str(opened["said"])
            assert said.startswith("The prescription was written: metformin 500 mg twice daily."), opened
            record = said.split("interruption: ")[1].split(" ")[0]
            assert opened["card_id"] is None and any(record in line for line in opened["chat"])  # type: ignore[attr-defined]
            again = restarted.ask(op="open", thread=thread)  # reopened again: still said, nothing done twice
            note = said.split("\n\n")[0]  # the note leads the finished turn's answer
            assert again["said"] == "" and note in again["chat"], again  # type: ignore[operator]
        else:
            assert opened == {"said": RECOVERED_RELEASED, "card_id": card, "chat": []}, opened
    finally:
        restarted.stop()


# ── two replicas on PostgreSQL: the other one takes over ──


@pytest.fixture(scope="module")
def record_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    record = tmp_path_factory.mktemp("record")
    Ehr.embedded(record / "record.sqlite")  # the demo patients
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "docgemma", "ehr", "serve", "--port", str(port)], cwd=ROOT,
                              env={**os.environ, "DOCGEMMA_DATA_DIR": str(record)}, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/fhir"
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.parametrize(("step", "landed"), STEPS)
def test_kill_9_at_each_step_two_replicas_on_postgres(step: str, landed: bool, record_server: str,
                                                      postgres: Postgres, tmp_path: Path) -> None:
    env = {**base_env(tmp_path), "DOCGEMMA_CHECKPOINT_URL": postgres.database(),
           "DOCGEMMA_FHIR_BASE_URL": record_server}
    client = FhirClient(record_server)
    pid = client.search("Patient", [("name", "Okafor")])[0]["id"]

    def orders() -> int:
        return len(client.search("MedicationRequest", [("patient", pid)]))

    a, b = started(env, crash_at=step), started(env)
    try:
        thread, card = paused_turn(a)
        before = orders()
        died = approve_and_die(a, thread, card)
        assert orders() == before + (1 if landed else 0)  # what the crash left in the record
        # A died on this machine: B knows it at once and takes the card over (the lease is a minute long).
        answer = b.ask(op="decide", thread=thread, card_id=card, action="approve")
        assert time.time() < died + LEASE_S / 2
        check_outcome(answer, landed, b, thread, card, orders, before)
    finally:
        a.stop()
        b.stop()
