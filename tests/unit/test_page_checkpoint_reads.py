"""One pass per turn (issue 29): the turn's result carries what the page shows after it (answer, timeline, active
patient, panel and strip, the patient list), so the page's turn handler does not go back to the conversation's
checkpoint for them. Counted as the checkpointer's reads made by the page's handler beyond the reads the same turn
makes when run through the workspace alone (the graph's and the assistant's own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docgemma.ui.page import Handlers
from tests.unit.test_page_session import ALLERGY, App

FIND = "Find patient Amina Okafor and check her chart"


class Counted:
    """Counts the checkpointer's reads (``get_tuple``: what ``get_state`` and the start of a run both call)."""

    def __init__(self, on: Handlers) -> None:
        self.reads = 0
        checkpointer = on.workspace.assistant.graph.checkpointer
        read = checkpointer.get_tuple

        def counted(config: Any) -> Any:
            self.reads += 1
            return read(config)

        checkpointer.get_tuple = counted  # type: ignore[method-assign]

    def during(self, run: Iterator[Any]) -> tuple[int, list[Any]]:
        before = self.reads
        out = list(run)
        return self.reads - before, out


def _page_turn(app: App, thread: str, text: str) -> Iterator[dict[Any, Any]]:
    return app.on.respond({"text": text, "files": []}, [], thread, None)


def test_the_page_reads_no_checkpoint_after_a_finished_turn_and_one_after_a_paused_one(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    count = Counted(app.on)
    alone_find, _ = count.during(app.on.workspace.turn("web-alone", FIND))
    page_find, updates = count.during(_page_turn(app, "web-page", FIND))
    shown = {k: v for update in updates for k, v in update.items()}
    assert page_find - alone_find == 0  # a finished turn: everything shown comes with its result
    assert "Amina Okafor" in shown[app.page.patient_md] and "Amina Okafor" in shown[app.page.patient_strip]
    assert "Amina Okafor" in str(shown[app.page.matches]["value"])  # the list shows the patient the turn made active

    alone_write, _ = count.during(app.on.workspace.turn("web-alone", ALLERGY))
    page_write, updates = count.during(_page_turn(app, "web-page", ALLERGY))
    shown = {k: v for update in updates for k, v in update.items()}
    assert page_write - alone_write == 1  # paused for approval: the paused turn's timeline so far, read once
    assert shown[app.page.approval]["visible"] and "Amina Okafor" in shown[app.page.patient_md]
    assert "Waiting for your approval" in shown[app.page.timeline]

    alone_refused, _ = count.during(app.on.workspace.turn("web-alone", "What is metformin?"))
    refused, updates = count.during(_page_turn(app, "web-page", "What is metformin?"))  # the card still waits
    shown = {k: v for update in updates for k, v in update.items()}
    assert refused - alone_refused == 1
    assert shown[app.page.approval]["visible"] and "Amina Okafor" in shown[app.page.patient_md]
    app.store.close()
