"""scripts/walkthrough.py without a browser or a model: the scenes' steps, the app's environment per backend, and
the cut of the recording and its length."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

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
        if value:
            self.log.append(f"fill {self.label}={value}")

    def press_sequentially(self, value: str, **kwargs: object) -> None:
        self.log.append(f"fill {self.label}={value}")  # typed, as the video shows it


class FakeLocator:
    """Answers every wait at once; counts nothing busy."""

    first: FakeLocator

    def __init__(self) -> None:
        self.first = self

    def get_by_text(self, *args: object, **kwargs: object) -> FakeLocator:
        return self

    def scroll_into_view_if_needed(self) -> None:
        return None

    def wait_for(self, **kwargs: object) -> None:
        return None


class FakeDriver:
    """The steps' calls, recorded instead of done in a browser."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.page = self
        self.recording = walkthrough.Recording()

    def press_sequentially(self, text: str, **kwargs: object) -> None:
        return None

    def scroll_into_view_if_needed(self) -> None:
        return None

    def wait_for_timeout(self, ms: float) -> None:
        return None

    def evaluate(self, script: str, *args: object) -> None:
        self.log.append("scroll to top" if "scrollTo(0, 0)" in script else f"evaluate {script[:20]}")

    def locator(self, selector: str, **kwargs: object) -> FakeLocator:
        return FakeLocator()

    def reload(self, **kwargs: object) -> None:
        self.log.append("reload")

    def caption(self, text: str, narration: str = "") -> None:
        assert narration  # every scene's narration is on the page with its caption
        self.log.append(f"caption {text}")

    def hold(self, seconds: float) -> None:
        self.log.append(f"hold {seconds}")

    def ask(self, text: str, attach: Path | None = None) -> None:
        self.log.append(f"ask {text}" + (f" +{attach.name}" if attach else ""))

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
    for i, line in enumerate(d.log):  # every shot is taken with its step's caption on the page, held to be read
        if line.startswith("shot "):
            before = [entry for entry in d.log[:i] if entry != "scroll to top"]
            assert before[-1].startswith("hold ") and before[-2].startswith("caption ")
    assert d.log[d.log.index("click #approve"):].count("scroll to top") >= 1  # the written order in view


def test_transformers_and_the_default_run_the_same_model_and_the_fixtures_answer_the_look_ups(tmp_path: Path) -> None:
    gpu = walkthrough.app_env("transformers", tmp_path, 7000, "http://127.0.0.1:9")
    assert gpu["DOCGEMMA_BACKEND"] == "transformers"
    assert gpu["DOCGEMMA_OPENFDA_URL"] == "http://127.0.0.1:9" and gpu["DOCGEMMA_DATA_DIR"] == str(tmp_path)
    live = walkthrough.app_env("fake", tmp_path, 7000, None)
    assert live["DOCGEMMA_BACKEND"] == "fake" and "http://127.0.0.1:9" not in live.values()


def test_the_cut_fits_three_minutes_with_the_waits_sped_up_and_what_is_shown_at_speed() -> None:
    """Issue 47: the video is the page in motion, cut to at most 3 minutes: waiting for an answer is sped up, the
    typing, the answer and the narration's reading time are kept at speed while they fit."""
    spans = [(0.0, 20.0, "show"), (20.0, 200.0, "wait"), (200.0, 320.0, "show"), (320.0, 330.0, "wait")]
    plan = walkthrough.edit_plan(spans)
    assert sum((b - a) / speed for a, b, speed in plan) <= walkthrough.MAX_VIDEO_S + 1e-6
    assert [speed for *_, speed in plan if speed == 1.0] == [1.0, 1.0]  # shown at speed
    assert all(speed >= 4 for (_, _, speed), (*_, kind) in zip(plan, spans, strict=True) if kind == "wait")
    long_show = walkthrough.edit_plan([(0.0, 400.0, "show"), (400.0, 410.0, "wait")])
    assert sum((b - a) / speed for a, b, speed in long_show) <= walkthrough.MAX_VIDEO_S + 1e-6


def test_the_scenes_are_held_long_enough_to_read_and_the_whole_fits_three_minutes() -> None:
    held = sum(walkthrough.seconds_for(step.narration) for step in walkthrough.STEPS)
    cards = sum(walkthrough.seconds_for(" ".join(lines)) for _, lines in (walkthrough.OPENING, walkthrough.CLOSING))
    assert held + cards <= walkthrough.MAX_VIDEO_S - 20  # room for typing and the sped-up waits
    for step in walkthrough.STEPS:  # about 3 words a second
        assert walkthrough.seconds_for(step.narration) >= len(step.narration.split()) / 3.2


def test_the_story_has_its_problem_an_image_scene_and_says_what_was_not_run() -> None:
    assert "resource-limited" in " ".join(walkthrough.OPENING[1])
    assert any(isinstance(step.run, walkthrough.AskWithImage) for step in walkthrough.STEPS)
    assert "Not run here: MedGemma" in " ".join(walkthrough.CLOSING[1])
    assert walkthrough.ct_image().exists()


def test_the_recording_marks_become_stretches() -> None:
    recording = walkthrough.Recording()
    recording.marks = [(0.0, "show"), (3.0, "wait"), (10.0, "show"), (10.0, "wait"), (12.0, "show")]
    assert recording.spans(15.0) == [(0.0, 3.0, "show"), (3.0, 10.0, "wait"), (10.0, 12.0, "wait"),
                                     (12.0, 15.0, "show")]


def test_each_frame_is_held_until_the_next_at_its_stretchs_speed() -> None:
    plan = [(0.0, 10.0, 1.0), (10.0, 50.0, 4.0), (50.0, 60.0, 1.0)]
    durations = walkthrough.frame_durations([0.0, 5.0, 30.0, 55.0], 60.0, plan)
    assert durations == [5.0, 5.0 + 20.0 / 4, 20.0 / 4 + 5.0, 5.0]
    assert sum(durations) == 10.0 + 40.0 / 4 + 10.0


def test_many_short_frames_do_not_each_round_up_to_a_video_frame() -> None:
    """The committed cut was 193 s for a 180 s plan: a thousand frames of a few milliseconds (a sped-up wait)
    each rounded up to 1/25 s."""
    durations = [0.004] * 1000 + [10.0]
    grid = walkthrough.on_frame_grid(durations)
    assert sum(grid) == round(sum(durations) * 25)
    assert sum(1 for n in grid if n > 0) <= 102


def test_the_cut_lasts_what_its_frames_add_up_to(tmp_path: Path) -> None:
    """The committed cut was 195 s for a 180 s plan: the concat demuxer showed the last frame (the closing card,
    14 s) twice."""
    from PIL import Image

    frames = []
    for i in range(10):
        path = tmp_path / f"{i:05d}.jpg"
        Image.new("RGB", (320, 200), (i * 20, 0, 0)).save(path)
        frames.append((i * 1.0, path))
    walked = walkthrough.Walked(frames, [(0.0, 10.0, "show")], 10.0)
    assert walkthrough.cut(walked, [(0.0, 10.0, 1.0)], tmp_path / "cut.mp4") == 10.0
