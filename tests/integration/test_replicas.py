"""Two app replicas (separate processes) on one PostgreSQL conversation database and one FHIR server by URL:
a turn paused for approval on one replica is approved on the other; both approving the same card at the same
moment write once; a pending approval survives a replica's restart.

Each replica is ``python -m tests.replica_worker``: the app's own ``build_assistant`` from ``DOCGEMMA_*``
settings (demo model, PostgreSQL checkpointer, the record over HTTP from ``python -m docgemma ehr serve``).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.approval import ALREADY_HANDLED, BEING_WRITTEN
from docgemma.ehr.client import FhirClient
from docgemma.ehr.service import Ehr
from tests.conftest import free_port, wait_for_port
from tests.postgres import Postgres

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
PRESCRIBE = "Prescribe metformin 500 mg twice daily for Amina Okafor"


class Replica:
    """One app process, driven over its stdin/stdout."""

    def __init__(self, env: dict[str, str]) -> None:
        self.log = Path(env["DOCGEMMA_DATA_DIR"]) / f"replica-{uuid.uuid4().hex[:6]}.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "tests.replica_worker"], cwd=ROOT, env=env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)

    def read(self, timeout_s: float = 180.0) -> dict[str, Any]:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout_s):
                raise TimeoutError("the replica did not answer")
        line = self.process.stdout.readline()
        assert line, f"the replica exited ({self.process.poll()}): {self.log.read_text()[-2000:]}"
        return dict(json.loads(line))

    def send(self, **command: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def ask(self, **command: Any) -> dict[str, Any]:
        self.send(**command)
        return self.read()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(30)


@dataclass
class Deployment:
    fhir: str
    env: dict[str, str]
    a: Replica
    b: Replica

    def replica(self) -> Replica:
        started = Replica(self.env)
        assert started.read() == {"ready": True}
        return started

    def orders(self) -> int:
        client = FhirClient(self.fhir)
        pid = client.search("Patient", [("name", "Okafor")])[0]["id"]
        return len(client.search("MedicationRequest", [("patient", pid)]))

    def paused_turn(self, replica: Replica) -> tuple[str, str]:
        thread = f"replicas-{uuid.uuid4().hex[:8]}"
        replica.ask(op="turn", thread=thread, message="Find patient Amina Okafor and check her chart")
        card = replica.ask(op="turn", thread=thread, message=PRESCRIBE)
        assert card.get("tool") == "prescribe_medication", card
        return thread, str(card["card_id"])


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres) -> Iterator[Deployment]:
    record = tmp_path_factory.mktemp("record")
    Ehr.embedded(record / "record.sqlite")  # the demo patients
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "docgemma", "ehr", "serve", "--port", str(port)], cwd=ROOT,
                              env={**os.environ, "DOCGEMMA_DATA_DIR": str(record)}, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    fhir = f"http://127.0.0.1:{port}/fhir"
    dead = f"http://127.0.0.1:{free_port()}"  # the knowledge APIs: never the internet from a test
    env = {**os.environ, "DOCGEMMA_BACKEND": "fake", "DOCGEMMA_CHECKPOINT_URL": postgres.database(),
           "DOCGEMMA_FHIR_BASE_URL": fhir, "DOCGEMMA_DATA_DIR": str(tmp_path_factory.mktemp("app")),
           "DOCGEMMA_OPENFDA_URL": dead, "DOCGEMMA_EUTILS_URL": dead, "DOCGEMMA_EUROPEPMC_URL": dead,
           "DOCGEMMA_CTGOV_URL": dead}
    a, b = Replica(env), Replica(env)
    deployment = Deployment(fhir, env, a, b)
    try:
        assert a.read() == {"ready": True} and b.read() == {"ready": True}
        yield deployment
    finally:
        # A test may replace a replica (the restart test): stop the ones running now as well as the first ones
        # (a leftover replica outlived the test run and held the session).
        for replica in {id(r): r for r in (a, b, deployment.a, deployment.b)}.values():
            replica.stop()
        server.terminate()
        server.wait(30)


def test_turn_on_one_replica_is_approved_on_the_other_once(deployment: Deployment) -> None:
    before = deployment.orders()
    thread, card = deployment.paused_turn(deployment.a)
    assert deployment.b.ask(op="pending", thread=thread) == {"card_id": card}  # B sees A's paused turn
    approved = deployment.b.ask(op="decide", thread=thread, card_id=card, action="approve")
    assert len(approved["writes"]) == 1 and "metformin" in approved["writes"][0]
    again = deployment.a.ask(op="decide", thread=thread, card_id=card, action="approve")  # A's stale button
    assert again == {"answer": ALREADY_HANDLED, "writes": []}
    assert deployment.a.ask(op="pending", thread=thread) == {"card_id": None}
    assert deployment.orders() == before + 1


def test_both_replicas_approving_the_same_card_at_once_write_once(deployment: Deployment) -> None:
    before = deployment.orders()
    thread, card = deployment.paused_turn(deployment.a)
    at = time.time() + 1.0
    for replica in (deployment.a, deployment.b):
        replica.send(op="decide", thread=thread, card_id=card, action="approve", at=at)
    answers = [deployment.a.read(), deployment.b.read()]
    assert sorted(len(answer["writes"]) for answer in answers) == [0, 1], answers
    # The loser finds the card claimed: still being carried out on the other replica, or already handled there.
    assert next(answer["answer"] for answer in answers if not answer["writes"]) in (ALREADY_HANDLED, BEING_WRITTEN)
    assert deployment.orders() == before + 1


def test_a_pending_approval_survives_a_replica_restart(deployment: Deployment) -> None:
    before = deployment.orders()
    thread, card = deployment.paused_turn(deployment.a)
    deployment.a.stop()
    deployment.a = deployment.replica()  # a new process on the same database
    assert deployment.a.ask(op="pending", thread=thread) == {"card_id": card}
    approved = deployment.a.ask(op="decide", thread=thread, card_id=card, action="approve")
    assert len(approved["writes"]) == 1
    assert deployment.orders() == before + 1
