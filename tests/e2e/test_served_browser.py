"""The page as a deployment serves it: mounted on FastAPI beside the probes (ui/server.py), driven in Chromium
through a turn that streams, a write card and its approval."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_browser import TIMEOUT_MS, ask, page  # noqa: F401  (fixture)
from tests.integration.test_server import Served, served  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


def test_the_mounted_page_streams_a_turn_and_approves_a_write(served: Served, page: Any) -> None:  # noqa: F811
    pid = served.ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    before = len(served.ehr.client.search("MedicationRequest", [("patient", pid)]))
    page.goto(served.url + "/", wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    ask(page, "Find patient Amina Okafor and check her chart")
    page.locator("#patient-summary").get_by_text("Amina Okafor", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    ask(page, "Prescribe metformin 500 mg twice daily for Amina Okafor")
    page.locator("#approve").wait_for(state="visible", timeout=TIMEOUT_MS)
    page.locator("#approve").click()
    # The confirmation names the saved order (the welcome text also says "written to the record").
    page.locator("#chat .check-ok").first.wait_for(timeout=TIMEOUT_MS)  # the "Written to the record" badge
    assert "metformin 500 mg twice daily — prescription for Amina Okafor" in \
        page.locator("#chat").inner_text()
    assert len(served.ehr.client.search("MedicationRequest", [("patient", pid)])) == before + 1
