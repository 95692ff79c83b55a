"""Writes per approval card under concurrent clicks: the app is served in-process with the
rule-based demo model and an embedded record on a temp file; each trial opens a new browser session
(gradio_client), asks for a prescription, then sends the card's buttons together (they run on separate Gradio
queues). If an edit won, its new card is approved afterwards. Counted per trial: MedicationRequests and
Provenance resources created. Target: exactly 1 per card when no Reject is among the clicks, at most 1 with it.

    python bench/bench_writes.py [--trials 50] [--root PATH] [--out bench/results/results_writes.json]

``--root`` runs the same bench against another checkout (e.g. the code before the fix) for a comparison.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APPROVAL_ARGS = 2  # position of the editable arguments in /respond's outputs (value components only)
#: Position of the card's reference (its id and version) in /respond's outputs: a decision names the card it is for,
#: and is refused for any other (docgemma/ui/card.py). A checkout from before that (--root) needs the bench of its day.
CARD_REF = 10
MODES = {"approve+edit+approve": ("/approve", "/edit", "/approve"),
         "approve+edit+reject": ("/approve", "/edit", "/reject")}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose docgemma is measured")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "results_writes.json")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    logging.disable(logging.WARNING)

    from gradio_client import Client

    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.ehr.service import Ehr
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.tools.registry import default_registry
    try:
        from docgemma.ui.page import build_demo
    except ModuleNotFoundError:  # a checkout (--root) from before the page module was named for what it holds
        from docgemma.ui.app import build_demo  # type: ignore[import-not-found,no-redef]

    ehr = Ehr.embedded(Path(tempfile.mkdtemp()) / "record.sqlite")
    try:
        from docgemma.tools.binding import ToolClients, bind_tools

        registry = bind_tools(default_registry(), ToolClients(record=ehr))
    except ModuleNotFoundError:  # a checkout (--root) from before the tools declared what they need
        from docgemma.tools.ehr_tools import ehr_executors  # type: ignore[attr-defined]

        executors, formatters = ehr_executors(ehr)
        registry = default_registry().with_executors(executors, formatters)
    assistant = Assistant(demo_llm(), registry,
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr))
    if "workspace" in inspect.signature(build_demo).parameters:
        from docgemma.workspace import Workspace

        demo = build_demo(Workspace(assistant, ehr), "Demo rules · CPU", "bench")
    else:  # a checkout (--root) from before the page was given an assembled workspace
        demo = build_demo(assistant, ehr, "Demo rules · CPU", "bench")  # type: ignore[arg-type]
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    pid = str(ehr.client.search("Patient", [("name", "Garcia")])[0]["id"])

    def counts() -> tuple[int, int]:
        return (len(ehr.client.search("MedicationRequest", [("patient", pid)], limit=1000)),
                len(ehr.client.search("Provenance", [("patient", pid)], limit=1000)))

    results: dict[str, Any] = {}
    start = time.perf_counter()
    try:
        for mode, buttons in MODES.items():
            per_trial: list[dict[str, int]] = []
            for _ in range(args.trials):
                client = Client(url, verbose=False)
                out = client.predict({"text": f"Prescribe lisinopril 10 mg once daily for patient {pid}", "files": []},
                                     [], None, api_name="/respond")
                history, card_args, card = out[0], str(out[APPROVAL_ARGS]), out[CARD_REF]
                edited = card_args.replace("10 mg", "20 mg")
                before = counts()
                jobs = [client.submit(edited if b == "/edit" else card_args, history, card, api_name=b) for b in buttons]
                done = [job.result() for job in jobs]
                burst = counts()
                # The edited card, if the edit won: the card its answer shows (an edit makes a new card); if a click
                # before it won, this approval names a card that is gone and is refused.
                after_edit = done[buttons.index("/edit")][CARD_REF] or card
                client.predict(edited, history, after_edit, api_name="/approve")
                after = counts()
                per_trial.append({"requests": after[0] - before[0], "provenance": after[1] - before[1],
                                  "requests_in_burst": burst[0] - before[0]})
            writes = Counter(t["requests"] for t in per_trial)
            results[mode] = {
                "trials": len(per_trial),
                "writes_per_card": {str(k): v for k, v in sorted(writes.items())},
                "trials_with_more_than_one_write": sum(t["requests"] > 1 for t in per_trial),
                "trials_with_exactly_one_write": writes.get(1, 0),
                "provenance_equals_requests": all(t["provenance"] == t["requests"] for t in per_trial),
                "max_writes_per_card": max(t["requests"] for t in per_trial),
                # Which click won: a write during the burst (an approve), none then one after (the edit), none.
                "won_by_approve": sum(t["requests_in_burst"] >= 1 for t in per_trial),
                "won_by_edit_then_approved": sum(t["requests_in_burst"] == 0 and t["requests"] >= 1 for t in per_trial),
                "nothing_written": writes.get(0, 0),
            }
    finally:
        demo.close()
    report = {
        "figure": "writes per approval card under concurrent clicks (target: exactly 1 without Reject, at most 1 with it)",
        "code": "this checkout" if args.root.resolve() == ROOT else f"checkout at {args.root}",
        "setup": "in-process Gradio app, demo rule model, embedded SQLite record; one gradio_client session per trial; "
                 "buttons submitted together; an edited card approved afterwards",
        "seconds": round(time.perf_counter() - start, 1),
        "modes": results,
    }
    text = json.dumps(report, indent=2)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
