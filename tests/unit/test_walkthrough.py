"""scripts/walkthrough.py without a browser or a model: the scenes' steps, the app's environment per backend, and
the captioned slideshow's frames and length."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("walkthrough", ROOT / "scripts" / "walkthrough.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["walkthrough"] = module
    spec.loader.exec_module(module)
    return module


walkthrough = _script()


class FakeField:
    def __init__(self, log: list[str], label: str) -> None:
        self.log, self.label = log, label

    def fill(self, value: str) -> None:
        self.log.append(f"fill {self.label}={value}")


class FakeLocator:
    """Answers every wait at once; counts nothing busy."""

    first: FakeLocator

    def __init__(self) -> None:
        self.first = self

    def get_by_text(self, *args: object, **kwargs: object) -> FakeLocator:
        return self

    def wait_for(self, **kwargs: object) -> None:
        return None


class FakeDriver:
    """The steps' calls, recorded instead of done in a browser."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.page = self

    def locator(self, selector: str, **kwargs: object) -> FakeLocator:
        return FakeLocator()

    def reload(self, **kwargs: object) -> None:
        self.log.append("reload")

    def caption(self, text: str) -> None:
        self.log.append(f"caption {text}")

    def ask(self, text: str) -> None:
        self.log.append(f"ask {text}")

    def settle(self) -> None:
        return None

    def click(self, selector: str, settle: bool = True) -> None:
        self.log.append(f"click {selector}")

    def field(self, label: str) -> FakeField:
        return FakeField(self.log, label)

    def shot(self, name: str, anchor: str | None = None) -> None:
        self.log.append(f"shot {name}")


def test_the_scenes_ask_edit_approve_and_reload_with_a_captioned_shot_per_step() -> None:
    d = FakeDriver()
    walkthrough.run_steps(d, walkthrough.STEPS)
    shots = [line[5:] for line in d.log if line.startswith("shot ")]
    assert shots == [step.shot for step in walkthrough.STEPS]
    assert len(set(shots)) == len(shots)
    asked = [line[4:] for line in d.log if line.startswith("ask ")]
    assert "Check FDA warnings for Coumadin" in asked
    assert "Prescribe amoxicillin 500 mg three times daily for Grace Mensah" in asked
    assert "fill Drug=azithromycin" in d.log and "click #edit" in d.log and "click #approve" in d.log
    assert d.log.index("click #edit") < d.log.index("click #approve") < d.log.index("reload")
    for i, line in enumerate(d.log):  # every shot is taken with its step's caption on the page
        if line.startswith("shot "):
            assert d.log[i - 1].startswith("caption ")


def test_transformers_and_the_default_run_the_same_model_and_the_fixtures_answer_the_look_ups(tmp_path: Path) -> None:
    gpu = walkthrough.app_env("transformers", tmp_path, 7000, "http://127.0.0.1:9")
    assert gpu["DOCGEMMA_BACKEND"] == "transformers"
    assert gpu["DOCGEMMA_OPENFDA_URL"] == "http://127.0.0.1:9" and gpu["DOCGEMMA_DATA_DIR"] == str(tmp_path)
    live = walkthrough.app_env("fake", tmp_path, 7000, None)
    assert live["DOCGEMMA_BACKEND"] == "fake" and "http://127.0.0.1:9" not in live.values()


def test_the_slideshow_fits_three_minutes_and_each_frame_carries_its_narration(tmp_path: Path) -> None:
    total = sum(walkthrough.seconds_for(step.narration) for step in walkthrough.STEPS)
    assert total <= walkthrough.MAX_VIDEO_S
    shot = tmp_path / "s.png"
    Image.new("RGB", (1440, 900), (255, 255, 255)).save(shot)
    out = tmp_path / "f.png"
    walkthrough.frame(shot, walkthrough.STEPS[0].narration, out)
    with Image.open(out) as image:
        assert image.width == walkthrough.VIDEO_WIDTH and image.height > 800
        band = image.crop((0, 800, image.width, image.height)).convert("L")
        assert band.getextrema() != (band.getextrema()[0], band.getextrema()[0])  # text drawn on the dark band
