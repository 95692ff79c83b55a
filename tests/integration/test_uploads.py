"""Uploads that cannot hurt: image bytes stay out of the conversation checkpoint (a bounded image store on
disk holds them), a pixel bomb gets a clear message in the CLI, and the CLI prints answers written without
a model (the empty-message note)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from docgemma.__main__ import main
from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.image_store import ImageRef, ImageStore, load_image_bytes
from docgemma.images import ImageError
from docgemma.tools.registry import default_registry
from tests.fixture_images import bomb_png, noise_png


class Checkpoints:
    """The conversation store as the app opens it (SQLite, write-ahead log) and its size on disk."""

    def __init__(self, path: Path) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.path = path
        self.connection = sqlite3.connect(path, check_same_thread=False)
        self.saver = SqliteSaver(self.connection)
        self.saver.setup()

    def size(self) -> int:
        self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # fold the write-ahead log into the file
        return self.path.stat().st_size


def _assistant(tmp_path: Path, max_image_bytes: int = 20_000_000) -> tuple[Assistant, Checkpoints, ImageStore]:
    db = Checkpoints(tmp_path / "conversations.sqlite")
    settings = Settings(max_image_bytes=max_image_bytes, data_dir=tmp_path)
    store = ImageStore(settings.image_store_path, max_file_bytes=max_image_bytes, max_files=3)
    return Assistant(demo_llm(), default_registry(), db.saver, settings, image_store=store), db, store


def _answer(outcome: TurnResult | dict[str, object]) -> str:
    assert isinstance(outcome, TurnResult)
    return outcome.answer


def test_an_image_turn_does_not_put_the_image_into_the_checkpoint(tmp_path: Path) -> None:
    """The bytes used to be part of the graph state, so every image turn grew conversations.sqlite by the
    image's size (601 MB after two refused 300 MB uploads)."""
    assistant, db, store = _assistant(tmp_path)
    assistant.run_turn("t", "What is hypertension?")
    before = db.size()
    image = noise_png(600, 600)  # ~1 MB that does not compress
    assistant.run_turn("t", "What does this image show?", {"filename": "scan.png", "data": image})
    growth = db.size() - before
    assert growth < len(image) / 4, f"checkpoint grew by {growth} bytes for a {len(image)}-byte image"
    ref = assistant.state("t")["image_ref"]
    assert ref is not None and "data" not in ref and load_image_bytes(ref) == image
    assert store.usage() == (1, len(image))


def test_a_refused_upload_is_neither_stored_nor_checkpointed(tmp_path: Path) -> None:
    assistant, db, store = _assistant(tmp_path, max_image_bytes=100_000)
    assistant.run_turn("t", "What is hypertension?")
    before = db.size()
    big = noise_png(400, 400)  # ~480 kB, over the 100 kB limit
    answer = _answer(assistant.run_turn("t", "Look at this", {"filename": "big.png", "data": big}))
    assert "the limit is" in answer
    assert db.size() - before < len(big) / 4 and store.usage() == (0, 0)


def test_the_store_is_bounded_and_an_evicted_image_gets_a_clear_message(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images", max_file_bytes=10_000_000, max_files=3)
    refs: list[ImageRef] = [store.put(f"{i}.png", noise_png(20, 20, seed=i)) for i in range(5)]
    assert store.usage()[0] == 3
    assert load_image_bytes(refs[-1]) == noise_png(20, 20, seed=4)
    with pytest.raises(ImageError, match="no longer available"):
        load_image_bytes(refs[0])
    again = store.put("again.png", noise_png(20, 20, seed=4))  # same content: one file
    assert again["path"] == refs[-1]["path"] and store.usage()[0] == 3


def test_a_thread_checkpointed_with_bytes_still_reads_its_image() -> None:
    """Threads saved before the store existed hold ``{"filename", "data"}``: a resumed approval still works."""
    assert load_image_bytes({"filename": "old.png", "data": b"\x89PNG"}) == b"\x89PNG"  # type: ignore[typeddict-item]


def test_a_pixel_bomb_gets_a_clear_message_in_a_turn(tmp_path: Path) -> None:
    assistant, _, _ = _assistant(tmp_path)
    answer = _answer(assistant.run_turn("t", "What does this show?", {"filename": "bomb.png", "data": bomb_png(14_000, 14_000)}))
    assert "14000×14000 pixels" in answer and "limit is 50 megapixels" in answer


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DOCGEMMA_BACKEND", "fake")
    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path / "data"))
    # Knowledge tools point at a closed local port: nothing can reach the network.
    for name in ("OPENFDA", "EUTILS", "EUROPEPMC", "CTGOV"):
        monkeypatch.setenv(f"DOCGEMMA_{name}_URL", "http://127.0.0.1:9")
    return tmp_path


@pytest.mark.slow
def test_cli_pixel_bomb_is_a_clear_message_not_a_crash(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 14000×14000 PNG crashed ``python -m docgemma chat`` with DecompressionBombError."""
    bomb = cli_env / "bomb.png"
    bomb.write_bytes(bomb_png(14_000, 14_000))
    assert main(["chat", "What does this image show?", "--image", str(bomb)]) == 0
    out = capsys.readouterr().out
    assert "14000×14000 pixels" in out and "limit is 50 megapixels" in out


@pytest.mark.slow
def test_cli_refuses_an_oversized_file_before_reading_it(cli_env: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCGEMMA_MAX_IMAGE_BYTES", "1000")
    big = cli_env / "big.png"
    big.write_bytes(noise_png(100, 100))
    assert main(["chat", "Look", "--image", str(big)]) == 2
    assert "the limit is" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_answer_has_no_template_debris(cli_env: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from docgemma.llm.fake import FakeLLM

    echo = FakeLLM(responder=lambda call: "Clinician's answer: Raised blood pressure.\n{{ (hint: none)\nCheck it."
                   if call.schema is None else {"intent": "DIRECT", "task_summary": "bp", "suggested_tool": None})
    monkeypatch.setattr("docgemma.runtime.load_llm", lambda settings: echo)
    assert main(["chat", "What is hypertension?"]) == 0
    out = capsys.readouterr().out
    assert "Raised blood pressure.\n" in out and "Check it." in out
    assert "Clinician's answer" not in out and "{{" not in out


@pytest.mark.slow
def test_cli_prints_the_empty_message_note(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note was only in the result, never printed: an empty message printed just a bare timeline."""
    assert main(["chat", "   "]) == 0
    assert "Please type a question" in capsys.readouterr().out


@pytest.mark.slow
def test_the_web_app_sets_gradios_upload_limit(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``launch`` gives the served page the byte limit (Gradio's ``max_file_size``): it had none, so a 300 MB
    upload reached the app before being refused. The page is served mounted on FastAPI (``ui/server.py``), so
    the limit must reach the mounted Blocks; the server itself is not started (it would serve until stopped)."""
    from docgemma.serve import launch
    from docgemma.ui import server

    seen: dict[str, object] = {}

    def build_only(demo: Any, ready: Any, metrics: Any, **kwargs: Any) -> None:
        server.build_app(demo, ready, metrics, auth=kwargs["auth"], max_file_size=kwargs["max_file_size"])
        seen["max_file_size"] = demo.max_file_size

    monkeypatch.setattr(server, "serve", build_only)
    monkeypatch.setenv("DOCGEMMA_MAX_IMAGE_BYTES", "1234567")
    launch(Settings.from_env())
    assert seen["max_file_size"] == 1234567


@pytest.mark.slow
def test_the_app_refuses_an_oversized_upload_without_reading_it(tmp_path: Path) -> None:
    """Even when Gradio was launched without ``max_file_size`` (tests, embedding apps), /respond checks the
    file's size before reading it, and says so."""
    from gradio_client import Client, handle_file

    from docgemma.ui.page import build_demo
    from docgemma.workspace import Workspace

    assistant = Assistant(demo_llm(), default_registry(), settings=Settings(max_image_bytes=50_000))
    demo = build_demo(Workspace(assistant, None), "Demo rules · CPU")
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    try:
        big = tmp_path / "big.png"
        big.write_bytes(noise_png(200, 200))  # ~120 kB
        out = Client(url, verbose=False).predict({"text": "Look", "files": [handle_file(str(big))]}, [], None,
                                                  api_name="/respond")
        text = "\n".join(str(m.get("content")) for m in out[0])
        assert "the limit is" in text and "Nothing was sent" in text
        assert assistant.images.usage() == (0, 0)
    finally:
        demo.close()


def _served_app(tmp_path: Path, *, gradio_check: bool = True, gate: bool = True) -> Any:
    """The page as ``serve`` serves it (mounted on FastAPI), on a free loopback port: (url, stop)."""


    from docgemma.ops.metrics import Metrics
    from docgemma.ui.page import build_demo
    from docgemma.ui.server import build_app
    from docgemma.workspace import Workspace
    from tests.conftest import serve_in_thread

    assistant = Assistant(demo_llm(), default_registry(), settings=Settings(data_dir=tmp_path / "data"))
    demo = build_demo(Workspace(assistant, None), "Demo rules · CPU")
    app = build_app(demo, None, Metrics())  # type: ignore[arg-type]
    if not gradio_check:  # as before: mounted, Gradio's own check skipped; the gate must hold alone
        demo.has_launched = False
    if not gate:  # the gate taken off: Gradio's own check must hold alone
        app.user_middleware = [m for m in app.user_middleware if m.cls.__name__ != "UploadGate"]
        app.middleware_stack = None
    return serve_in_thread(app)


def _respond_raw(url: str, path: str, name: str, meta: bool = True) -> str:
    """/respond called the way any client can: a FileData naming ``path`` in /gradio_api/queue/join, no upload.
    Returns every event of the stream as text."""
    import json
    import uuid

    import httpx

    config = httpx.get(f"{url}/config").json()
    fn = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "respond")
    session = uuid.uuid4().hex
    box = {"text": "What does this image show?",
           "files": [{"path": path, "orig_name": name, **({"meta": {"_type": "gradio.FileData"}} if meta else {})}]}
    joined = httpx.post(f"{url}/gradio_api/queue/join", json={
        "data": [box, [], None, None], "fn_index": fn, "session_hash": session, "event_data": None,
        "trigger_id": None})
    if joined.status_code != 200:
        return f"{joined.status_code} {joined.text}"
    seen: list[str] = []
    with httpx.stream("GET", f"{url}/gradio_api/queue/data", params={"session_hash": session}, timeout=60) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                seen.append(line)
                if json.loads(line[5:]).get("msg") == "process_completed":
                    break
    return "\n".join(seen)


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    """An image only the server's user can read, outside every upload folder."""
    secret = tmp_path / "private" / "secret-scan.png"
    secret.parent.mkdir()
    secret.write_bytes(noise_png(32, 32))
    secret.chmod(0o600)
    return secret


@pytest.mark.slow
@pytest.mark.parametrize(("gradio_check", "gate"), [(True, True), (False, True), (True, False)],
                         ids=["served", "gate-alone", "gradio-check-alone"])
def test_a_client_cannot_make_the_app_open_a_server_file(tmp_path: Path, server_file: Path,
                                                         gradio_check: bool, gate: bool) -> None:
    """A FileData naming any .png on the server came back as a chat image (mounted app: Gradio skipped its
    check and copied the file into its cache). Refused now by the gate, and by Gradio's own check alone."""
    url, stop = _served_app(tmp_path, gradio_check=gradio_check, gate=gate)
    try:
        for meta in (True, False):  # without its meta a FileData would skip Gradio's check: the gate refuses it
            stream = _respond_raw(url, str(server_file), "secret-scan.png", meta=meta)
            assert '"alt_text":"secret-scan' not in stream.replace(" ", "")  # no chat image of it
            refused = ("not uploaded" in stream or "not opened" in stream
                       or (not meta and '"success":false' in stream.replace(" ", "")))  # Gradio 6 wants meta
            assert refused, stream[-500:]
        from gradio.utils import get_upload_folder

        leaked = [p for p in Path(get_upload_folder()).rglob("*.png") if p.read_bytes() == server_file.read_bytes()]
        assert leaked == []
    finally:
        stop()


@pytest.mark.slow
def test_a_real_upload_still_reaches_the_chat(tmp_path: Path) -> None:
    import httpx

    url, stop = _served_app(tmp_path)
    try:
        local = tmp_path / "mine.png"
        local.write_bytes(noise_png(32, 32, seed=3))
        with local.open("rb") as f:
            uploaded = httpx.post(f"{url}/gradio_api/upload", files={"files": ("mine.png", f, "image/png")}).json()
        stream = _respond_raw(url, uploaded[0], "mine.png")
        assert '"success": true' in stream.replace("True", "true") or '"success":true' in stream
        assert "mine.png" in stream and "not uploaded" not in stream and "not opened" not in stream
    finally:
        stop()


def test_paths_outside_the_roots_are_refused(tmp_path: Path) -> None:
    from docgemma.ui.uploads import FOREIGN, UploadRefused, checked_path, safe_history

    root = tmp_path / "uploads"
    (root / "a").mkdir(parents=True)
    (root / "a" / "ok.png").write_bytes(b"x")
    (tmp_path / "secret.png").write_bytes(b"x")
    (root / "link.png").symlink_to(tmp_path / "secret.png")
    assert checked_path(root / "a" / "ok.png", [root]) == root / "a" / "ok.png"
    for bad in (tmp_path / "secret.png", root / "a" / ".." / ".." / "secret.png", root / "link.png", "",
                "/etc/passwd", "bad\x00.png"):
        with pytest.raises(UploadRefused):
            checked_path(bad, [root])
    history = [{"role": "user", "content": [{"file": {"path": str(tmp_path / "secret.png")}}]},
               {"role": "user", "content": {"path": str(root / "a" / "ok.png")}},
               {"role": "assistant", "content": "text"}]
    cleaned = safe_history(history, [root])
    assert cleaned[0]["content"] == FOREIGN and cleaned[1:] == history[1:]


def test_the_image_tool_opens_the_image_with_the_configured_pixel_limit(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The image tool decoded the upload a second time without the pixel limit (only the default): a deployment
    that lowered DOCGEMMA_MAX_IMAGE_PIXELS was protected at the front door but not there. Now the upload is
    decoded once, with the configured limit, and the tool is handed that image."""
    import docgemma.image_store as node
    from docgemma.images import decode_image

    limits: list[int] = []

    def watched(filename: str, data: bytes, max_bytes: int, max_pixels: int = 0) -> Any:
        limits.append(max_pixels)
        return decode_image(filename, data, max_bytes, max_pixels)

    monkeypatch.setattr(node, "decode_image", watched)
    settings = Settings(data_dir=tmp_path, max_image_pixels=1_000_000)
    store = ImageStore(settings.image_store_path, max_file_bytes=settings.max_image_bytes, max_files=3)
    assistant = Assistant(demo_llm(), default_registry(), None, settings, image_store=store)
    assistant.run_turn("t", "Analyze this chest x-ray image", {"filename": "cxr.png", "data": noise_png(300, 300)})
    assert limits == [1_000_000]


@pytest.mark.parametrize("body", [
    '{"data": [{"files": [{"path": "SECRET"}]}]}',
    '{"data": [{"files": [{"\\u0070ath": "SECRET"}]}]}',  # JSON-escaped key: "path" once decoded
    '{"data": [[{"p\\u0061th": "SECRET", "meta": {"_type": "gradio.FileData"}}]]}',
    '{"data": [{"value": {"file": {"\\u0070\\u0061\\u0074\\u0068": "SECRET"}}}]}',
])
def test_the_gate_reads_the_decoded_json(tmp_path: Path, server_file: Path, body: str) -> None:
    """A "\\u0070ath" key passed the gate (it searched the raw bytes for '"path"'); Gradio then refused the file
    but echoed the server path back to the client."""
    import asyncio

    from docgemma.ui.uploads import REFUSED, UploadGate

    reached: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def call(raw: str) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []
        messages = [{"type": "http.request", "body": raw.encode(), "more_body": False}]

        async def receive() -> dict[str, Any]:
            return messages.pop(0)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        gate = UploadGate(app, roots=[tmp_path / "uploads"])
        asyncio.run(gate({"type": "http", "method": "POST", "path": "/gradio_api/queue/join"}, receive, send))
        return int(sent[0]["status"]), b"".join(m.get("body", b"") for m in sent[1:])

    status, answer = call(body.replace("SECRET", str(server_file)))
    assert status == 400 and json.loads(answer)["detail"] == REFUSED and reached == []
    assert str(server_file).encode() not in answer  # the refusal never names the server's path
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "mine.png").write_bytes(b"x")
    status, _ = call(body.replace("SECRET", str(tmp_path / "uploads" / "mine.png")))
    assert status == 200 and len(reached) == 1  # a file of the upload folder passes, whatever the escaping
