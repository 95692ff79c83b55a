"""kill -9 from outside at a random moment of an approved write, single app process on SQLite: does every card
end written exactly once or not at all, does the reopened conversation say what landed, and is the conversation
ever left stuck?

Each trial: the app process (``tests/replica_worker.py``: the app's own ``build_assistant``, demo model,
embedded record, conversations in ``DATA_DIR/conversations.sqlite``) finds a patient, is asked for a
prescription and shows the card; the card is approved and the process is sent SIGKILL after a random delay
(uniform over 1.2 × the time a normal approval takes). A new process is started on the same files and, at once
(the approval lease is the default 30 s: it is never waited out), the conversation is reopened
(``Assistant.settle``, what the page does on load). Then the card, if still waiting, is approved. Outcomes:

* ``finished`` — the approval completed before the kill (no card left);
* ``recovered_written`` — reopening said the write reached the record before the interruption (the record id);
* ``recovered_released`` — reopening said nothing was written and the card waits again (approved afterwards);
* ``no_claim`` — the kill came before the decision was claimed: the card simply waits, and is approved now;
* ``being_carried_out`` — reopening said another server is carrying it out (on a single server: the fault);
* ``stuck`` — "already handled" while the card is still pending: the conversation is blocked (the fault);
* ``other`` — anything else (printed).

Reported: of the trials whose write had landed in the record at the kill, how many reopened conversations name
it (the record id in the chat: a note or a write confirmation), and how long reopening took.

Invariant in every trial: at most one new order per card, exactly one once the card is settled and approved.

    python bench/bench_approval_kills.py [--trials 40] [--root PATH] [--out bench/results/results_approval_kills.json]

``--root`` runs another checkout's app (the code before the fix) for a comparison (it needs the ``open`` command
of ``tests/replica_worker.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The default lease (``Settings.approval_lease_s``): a crash on this machine must not make anyone wait it out.
LEASE_S = 30.0
PRESCRIBE = "Prescribe metformin 500 mg twice daily for Amina Okafor"
ALREADY = "already handled"
BEING = "being carried out right now"


class App:
    """One app process driven over stdin/stdout (JSON lines)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "tests.replica_worker"], cwd=root, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True)
        assert self.read() == {"ready": True}

    def read(self, timeout_s: float = 120.0) -> dict[str, Any]:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout_s):
                raise TimeoutError("the app did not answer")
        line = self.process.stdout.readline()
        if not line:
            raise EOFError(f"the app exited ({self.process.poll()})")
        return dict(json.loads(line))

    def send(self, **command: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def ask(self, **command: Any) -> dict[str, Any]:
        self.send(**command)
        return self.read()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)


def settle(app: App, thread: str, card: str, opened: dict[str, Any], landed: int, violations: list[str],
           trial: str) -> str:
    """What reopening the conversation did (the outcome), and the card approved when it still waits."""
    said = str(opened["said"])
    if opened["card_id"] is None:
        if "before the interruption" not in said:
            return "finished"
        if landed != 1:
            violations.append(f"{trial}: said written, record had {landed}")
        return "recovered_written"
    if BEING in said:
        return "being_carried_out"
    if "before anything was written" in said and landed != 0:
        violations.append(f"{trial}: said nothing written, record had {landed}")
    answer = app.ask(op="decide", thread=thread, card_id=card, action="approve")
    if ALREADY in str(answer["answer"]):
        return "stuck"
    if len(answer["writes"]) != 1:
        print(f"{trial}: {answer}", file=sys.stderr)
        return "other"
    return "recovered_released" if "before anything was written" in said else "no_claim"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose app is measured")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--window", type=float, default=0.0,
                        help="kill within this many seconds of the approval (default: 1.2 × a measured approval)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "results_approval_kills.json"), help="'' = print only")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from docgemma.ehr.service import Ehr

    rng = random.Random(args.seed)
    data = Path(tempfile.mkdtemp(prefix="docgemma-kills-"))
    dead = "http://127.0.0.1:9"  # the knowledge APIs: never the internet
    env = {**os.environ, "PYTHONPATH": str(args.root.resolve()), "DOCGEMMA_BACKEND": "fake",
           "DOCGEMMA_DATA_DIR": str(data), "DOCGEMMA_APPROVAL_LEASE_S": str(LEASE_S), "DOCGEMMA_OPENFDA_URL": dead,
           "DOCGEMMA_EUTILS_URL": dead, "DOCGEMMA_EUROPEPMC_URL": dead, "DOCGEMMA_CTGOV_URL": dead}
    app = App(args.root, env)
    record = Ehr.embedded(data / "record.sqlite")
    pid = record.client.search("Patient", [("name", "Okafor")])[0]["id"]

    def order_ids() -> set[str]:
        return {f"MedicationRequest/{r['id']}" for r in record.client.search("MedicationRequest", [("patient", pid)])}

    def orders() -> int:
        return len(order_ids())

    def card_for(thread: str) -> str:
        app.ask(op="turn", thread=thread, message="Find patient Amina Okafor and check her chart")
        card = app.ask(op="turn", thread=thread, message=PRESCRIBE)
        assert card.get("tool") == "prescribe_medication", card
        return str(card["card_id"])

    # Calibration: how long a normal approval takes here.
    thread = f"calibrate-{uuid.uuid4().hex[:6]}"
    card = card_for(thread)
    start = time.perf_counter()
    app.ask(op="decide", thread=thread, card_id=card, action="approve")
    window = args.window or 1.2 * (time.perf_counter() - start)

    began = time.perf_counter()
    outcomes: Counter[str] = Counter()
    violations: list[str] = []
    landed_total = reported = 0
    open_s: list[float] = []
    for trial in range(args.trials):
        thread = f"kill-{trial}-{uuid.uuid4().hex[:6]}"
        card = card_for(thread)
        known = order_ids()
        before = len(known)
        app.send(op="decide", thread=thread, card_id=card, action="approve")
        time.sleep(rng.uniform(0.0, window))
        app.kill()
        landed_ids = order_ids() - known
        landed = len(landed_ids)
        app = App(args.root, env)  # restarted on the same files, reopened at once
        start = time.perf_counter()
        opened = app.ask(op="open", thread=thread)
        open_s.append(time.perf_counter() - start)
        shown = " ".join([str(opened["said"]), *map(str, opened["chat"])])
        if landed:
            landed_total += 1
            reported += all(i in shown for i in landed_ids)  # the reopened chat names the record id
        outcome = settle(app, thread, card, opened, landed, violations, f"trial {trial}")
        outcomes[outcome] += 1
        new = orders() - before
        if new > 1 or (outcome not in ("stuck", "being_carried_out") and new != 1):
            violations.append(f"trial {trial}: {outcome} with {new} new orders")
        print(f"trial {trial}: {outcome} (in the record at the kill: {landed}, at the end: {new})", file=sys.stderr)
    app.kill()
    result = {"trials": args.trials, "root": "this checkout" if args.root.resolve() == ROOT else str(args.root),
              "command": "python " + " ".join(sys.argv), "lease_s": LEASE_S, "kill_window_s": round(window, 3),
              "outcomes": dict(sorted(outcomes.items())), "landed": landed_total, "landed_and_reported": reported,
              "reopen_s_max": round(max(open_s, default=0.0), 2), "violations": violations,
              "seconds": round(time.perf_counter() - began, 1)}
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    faults = outcomes["stuck"] or outcomes["other"] or outcomes["being_carried_out"] or reported < landed_total
    return 1 if violations or faults else 0


if __name__ == "__main__":
    raise SystemExit(main())
