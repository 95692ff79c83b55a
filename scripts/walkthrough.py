"""The judges' walkthrough, made by a script: start the app, drive Chromium through the scenes of
``kaggle_submission/walkthrough.md`` with a caption per scene, and write every scene's screenshot and a video
(at most 3 minutes) into ``kaggle_submission/``.

    python scripts/walkthrough.py                       # demo rules (DOCGEMMA_BACKEND=fake): fast, any machine
    python scripts/walkthrough.py --backend transformers  # the default model: MedGemma on a GPU, SmolLM2 on CPU
    python scripts/walkthrough.py --examples --backend transformers --out docs/screenshots/examples
                                                        # every example prompt of the page, one screenshot each

The app is started as ``python app.py`` on a fresh data directory (the demo patients) and a free port, and
stopped at the end. Needs Chromium (``apt-get install chromium``) and ``pip install playwright``; the video is
WebM, converted to MP4 when ``ffmpeg`` is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VIEWPORT = {"width": 1440, "height": 900}
MAX_VIDEO_S = 180
CAPTION_JS = """(text) => {
  let box = document.getElementById('walkthrough-caption');
  if (!box) {
    box = document.createElement('div');
    box.id = 'walkthrough-caption';
    box.style.cssText = 'position:fixed;left:50%;bottom:18px;transform:translateX(-50%);z-index:99999;' +
      'max-width:80%;padding:10px 18px;border-radius:8px;background:rgba(17,24,39,.88);color:#fff;' +
      'font:600 17px/1.35 system-ui,sans-serif;box-shadow:0 4px 16px rgba(0,0,0,.3);pointer-events:none';
    document.body.appendChild(box);
  }
  box.textContent = text;
  box.style.display = text ? 'block' : 'none';
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_app(backend: str, data: Path, port: int, log: Path) -> Iterator[str]:
    """``python app.py`` on ``data`` and ``port``: its URL once /readyz answers; stopped afterwards."""
    env = {**os.environ, "DOCGEMMA_DATA_DIR": str(data), "GRADIO_SERVER_PORT": str(port)}
    if backend:
        env["DOCGEMMA_BACKEND"] = backend
    else:  # the default model of this machine
        env.pop("DOCGEMMA_BACKEND", None)
    with log.open("ab") as out:
        process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900  # a model loads in ~30 s on an idle CPU, minutes on a busy one
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the app stopped: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/readyz", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the app did not get ready: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url + "/"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def small(path: Path) -> None:
    """The screenshot as a 64-colour PNG: a third of the size, text as sharp (the page has few colours)."""
    from PIL import Image

    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    reduced.save(path, optimize=True)


class Driver:
    """The page in Chromium: type, click, wait for a turn to finish, caption, screenshot."""

    def __init__(self, page: Any, shots: Path) -> None:
        self.page = page
        self.shots = shots
        self.taken: list[str] = []

    def caption(self, text: str) -> None:
        self.page.evaluate(CAPTION_JS, text)

    def settle(self, timeout_s: float = 600) -> None:
        """Wait until the chat has stopped changing (a turn finished, streaming included)."""
        deadline = time.monotonic() + timeout_s
        last, stable = None, 0
        self.page.wait_for_timeout(700)
        while time.monotonic() < deadline:
            text = self.page.locator("#chat").inner_text()
            busy = self.page.locator("#chat .pending, #input .progress-text, .eta-bar").count()
            stable = stable + 1 if text == last and not busy else 0
            if stable >= 3:
                return
            last = text
            self.page.wait_for_timeout(500)
        raise TimeoutError("the turn did not finish")

    def ask(self, text: str) -> None:
        box = self.page.locator("#input textarea")
        box.fill(text)
        self.page.wait_for_timeout(400)
        box.press("Enter")
        self.settle()

    def click(self, selector: str, settle: bool = True) -> None:
        self.page.locator(selector).first.click()
        if settle:
            self.settle()

    def pick_patient(self, name: str) -> None:
        self.page.locator("#patient-matches input").first.click()
        self.page.get_by_role("option", name=name, exact=False).first.click()
        self.page.locator("#patient-select").click()
        self.page.locator("#patient-summary").get_by_text(name, exact=False).first.wait_for(timeout=60_000)

    def shot(self, name: str, full_page: bool = False, top: bool = True) -> None:
        """A screenshot; ``top``: of the page scrolled to the top (the chat, the timeline and the panel's head)."""
        if top:
            self.page.evaluate("window.scrollTo(0, 0)")
            self.page.wait_for_timeout(300)
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        small(path)
        self.taken.append(path.name)


@dataclass
class Scene:
    """One scene of walkthrough.md: its caption and what it does."""

    name: str
    caption: str
    run: Callable[[Driver], None]


def _scene_direct(d: Driver) -> None:
    d.ask("What is hypertension?")


def _scene_single_tool(d: Driver) -> None:
    d.ask("Check FDA warnings for Coumadin")


def _scene_patient(d: Driver) -> None:
    d.ask("Find patient Amina Okafor and check her chart")
    d.ask("What were her last kidney function results?")


def _scene_clarify(d: Driver) -> None:
    d.ask("Find patient James Wilson and check his chart")
    d.shot("scene4a_two_patients_one_name")
    d.ask("the second one")


def _scene_image(d: Driver) -> None:
    d.pick_patient("Samuel Kariuki")
    d.settle()
    d.page.locator("#record-images img").first.click()
    d.page.wait_for_timeout(500)
    d.page.keyboard.press("Escape")
    d.click("#send-image", settle=False)
    d.page.get_by_text("Attached to your next message", exact=False).first.wait_for(timeout=60_000)
    d.shot("scene5a_record_image_attached")
    d.ask("What does this image show?")


def _scene_approval(d: Driver) -> None:
    d.ask("Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    d.page.locator("#approval").first.scroll_into_view_if_needed()
    d.shot("scene6a_approval_card_severe_finding", top=False)
    d.page.locator("#override-reason textarea, #override-reason input").first.fill(
        "tolerated a supervised amoxicillin challenge in allergy clinic")
    d.click("#override")
    d.page.locator("#chat").get_by_text("Written to the record", exact=False).first.wait_for(timeout=60_000)


def _scene_reopened(d: Driver) -> None:
    d.page.reload(wait_until="domcontentloaded")
    d.page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=120_000)
    d.settle()


SCENES = [
    Scene("scene1_direct_question", "1 · A general question: code routes it, no tool runs; the timeline shows "
          "every step beside the answer.", _scene_direct),
    Scene("scene2_single_tool", "2 · One look-up: the brand name resolves to warfarin and the FDA label is checked "
          "(offline, the app says so and answers nothing from memory).", _scene_single_tool),
    Scene("scene3_patient_two_tools", "3 · A patient: search, then the chart; 'her' in the next question reads her "
          "record.", _scene_patient),
    Scene("scene4_error_recovery", "4 · Two patients share a name: code asks, never guesses; 'the second one' "
          "continues the request.", _scene_clarify),
    Scene("scene5_image", "5 · An image from the record goes to the chat (MedGemma reads it; a demo says it "
          "cannot).", _scene_image),
    Scene("scene6_approval", "6 · A write needs the clinician: a severe allergy finding refuses plain approval; an "
          "override needs a reason; written once.", _scene_approval),
    Scene("scene7_reopened", "7 · Reload: the whole conversation comes back from the server (the browser keeps "
          "only its id).", _scene_reopened),
]


def examples() -> list[str]:
    """The page's example prompts (from this checkout)."""
    sys.path.insert(0, str(ROOT))
    from docgemma.ui.page import EXAMPLES

    return list(EXAMPLES)


def use_system_ffmpeg() -> None:
    """Playwright records video through its own ffmpeg build, which it downloads; where no download is
    possible, point it at the system's ffmpeg (same command line: MJPEG in, VP8 WebM out)."""
    import playwright

    system = shutil.which("ffmpeg")
    browsers = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    if system is None or not browsers.exists():
        return
    revision = next(b["revision"] for b in json.loads(browsers.read_text())["browsers"] if b["name"] == "ffmpeg")
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    target = root / f"ffmpeg-{revision}" / "ffmpeg-linux"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(system)
        print(f"video: using {system} for Playwright's recorder ({target})")


def walk(url: str, out: Path, video: Path | None, only_examples: bool) -> list[str]:
    """Drive the page through the scenes (or every example); the screenshots' names."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    if video is not None:
        use_system_ffmpeg()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run"])
        context = browser.new_context(viewport=VIEWPORT, **(
            {"record_video_dir": str(video), "record_video_size": VIEWPORT} if video else {}))
        page = context.new_page()
        page.goto(url, wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=120_000)
        d = Driver(page, out)
        d.shot("00_on_load")
        if only_examples:
            for i, text in enumerate(examples(), 1):
                if "image" in text.lower():
                    d.pick_patient("Samuel Kariuki")
                    d.page.locator("#record-images img").first.click()
                    d.page.wait_for_timeout(500)
                    d.page.keyboard.press("Escape")
                    d.click("#send-image", settle=False)
                    d.page.wait_for_timeout(800)
                d.ask(text)
                slug = "".join(c if c.isalnum() else "_" for c in text.lower())[:48].strip("_")
                d.shot(f"{i:02d}_{slug}", full_page=True)
                if d.page.locator("#approve").is_visible():  # a write card (in the shot above): approve or reject it
                    button = "#approve" if d.page.locator("#approve").is_enabled() else "#reject"
                    d.click(button)
                    d.shot(f"{i:02d}c_after_decision", full_page=True)
        else:
            for scene in SCENES:
                d.caption(scene.caption)
                page.wait_for_timeout(1500)
                scene.run(d)
                page.wait_for_timeout(1200)
                d.shot(scene.name)
            d.caption("")
        context.close()
        browser.close()
    return d.taken


def finish_video(recorded: Path, out: Path) -> Path | None:
    """The recording as ``out/walkthrough.mp4`` (ffmpeg) or ``.webm``; None when nothing was recorded."""
    files = sorted(recorded.glob("*.webm"))
    if not files:
        return None
    webm = out / "walkthrough.webm"
    shutil.move(str(files[0]), webm)
    if shutil.which("ffmpeg"):
        mp4 = out / "walkthrough.mp4"
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", str(webm), "-t", str(MAX_VIDEO_S),
                        "-c:v", "libx264", "-preset", "veryfast", "-crf", "30", "-pix_fmt", "yuv420p",
                        "-movflags", "+faststart", str(mp4)], check=True)
        webm.unlink()
        return mp4
    return webm


def duration_s(video: Path) -> float | None:
    """The video's length (ffprobe), or None without ffprobe."""
    if not shutil.which("ffprobe"):
        return None
    shown = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", str(video)],
                           capture_output=True, text=True, check=True)
    return float(json.loads(shown.stdout)["format"]["duration"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="fake", help="DOCGEMMA_BACKEND for the app ('' for the default model)")
    parser.add_argument("--out", type=Path, default=ROOT / "kaggle_submission")
    parser.add_argument("--examples", action="store_true", help="every example prompt instead of the scenes")
    parser.add_argument("--no-video", action="store_true")
    args = parser.parse_args(argv)
    backend = "" if args.backend in ("", "default", "transformers") and not os.environ.get("DOCGEMMA_MODEL") \
        else args.backend
    with tempfile.TemporaryDirectory(prefix="docgemma-walkthrough-") as tmp:
        work = Path(tmp)
        shots = args.out if args.examples else args.out / "screenshots"
        recorded = None if (args.no_video or args.examples) else work / "video"
        with running_app(backend, work / "data", free_port(), work / "app.log") as url:
            taken = walk(url, shots, recorded, args.examples)
        for name in taken:
            print(f"screenshot: {shots / name}")
        if recorded is not None:
            video = finish_video(recorded, args.out)
            if video is not None:
                length = duration_s(video)
                print(f"video: {video}" + (f" ({length:.0f} s)" if length is not None else ""))
                if length is not None and length > MAX_VIDEO_S:
                    print(f"the video is longer than {MAX_VIDEO_S} s", file=sys.stderr)
                    return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
