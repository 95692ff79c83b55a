"""Only true and clinical text on the page, on the real default model (issue 27): every example prompt and every
walkthrough turn answered by the embedded SmolLM2 (transformers backend, loaded once for the module), through
the page's own handlers, its text scanned for internal words (record ids, FHIR references, code identifiers, raw
timings, lab code names) and for sentences the turn makes untrue (tests/unit/test_page_text.py runs the same scan
on the demo rules under SmolLM2's flags, without the model). The knowledge look-ups answer from the recorded
fixtures (tests/fixture_api.py), as in the walkthrough."""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_page_text import scan, uploads_with_image

pytestmark = [pytest.mark.slow, pytest.mark.serial]
WALKTHROUGH = Path(__file__).parents[2] / "scripts" / "walkthrough.py"
GREETING = "Good morning!"


def walkthrough_turns() -> list[str]:
    """The messages the walkthrough's scenes send (scripts/walkthrough.py, ``Ask`` steps), in order."""
    spec = importlib.util.spec_from_file_location("walkthrough", WALKTHROUGH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return [step.run.text for step in module.STEPS if isinstance(step.run, module.Ask)]



@pytest.fixture(scope="module")
def api_url() -> Iterator[str]:
    from tests.fixture_api import serve

    with serve() as url:
        yield url


def app_on(embedded: Any, api_url: str, data: Path, monkeypatch: Any) -> Any:
    """The page's handlers over the embedded model, a fresh record and the recorded look-ups."""
    import tests.unit.test_page_session as session
    from docgemma.config import Settings

    monkeypatch.setattr(session, "demo_llm", lambda tools=None: embedded)
    monkeypatch.setattr(session, "Settings", functools.partial(
        Settings, openfda_url=api_url, eutils_url=api_url, europepmc_url=api_url, ctgov_url=api_url))
    return session.App.start(data)


def test_every_example_and_walkthrough_turn_on_the_embedded_model_is_clinical_and_true(
        embedded: Any, api_url: str, tmp_path: Path, monkeypatch: Any) -> None:
    from docgemma.ui.page import EXAMPLES

    turns = walkthrough_turns()
    assert GREETING in turns and "Prescribe amoxicillin 500 mg three times daily for Grace Mensah" in turns
    image = uploads_with_image(tmp_path, monkeypatch)
    found: list[tuple[str, str, str]] = []
    for name, prompts in (("examples", list(EXAMPLES)), ("walkthrough", turns)):
        app = app_on(embedded, api_url, tmp_path / name, monkeypatch)
        found += scan(app, prompts, image)
        app.store.close()
    assert not found, found


def test_the_greeting_is_the_models_line_and_the_timeline_counts_its_one_call(
        embedded: Any, api_url: str, tmp_path: Path) -> None:
    """The walkthrough's scene 0b on the real model: one model call, shown in the timeline; the rest by code."""
    from docgemma.agent.assistant import Assistant, TurnResult
    from docgemma.tools.registry import default_registry
    from docgemma.ui.messages import timeline_markdown

    result = Assistant(embedded, default_registry()).run_turn("greet", GREETING)
    assert isinstance(result, TurnResult) and result.llm_calls == 1
    assert "**model calls:** 1" in timeline_markdown(result)
    # Greedy decoding: SmolLM2 answers "Hello there! I'm glad you're here. What can I help with?"; code keeps the
    # first two sentences.
    assert "written by the demo model" in result.timeline[-1]["decision"], result.timeline[-1]
    line, capabilities = result.answer.split("\n\n", 1)
    assert capabilities.startswith("I can help with:") and 0 < len(line.split()) <= 14
