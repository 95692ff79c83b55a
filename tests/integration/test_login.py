"""With ``DOCGEMMA_AUTH`` every route but the health probes (and what the login page itself needs) requires
the login, whichever way the app is served: Gradio's own login left ``/openapi.json``, ``/gradio_api/cancel``,
``/reset`` and others open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ops.conversation_store import open_store
from docgemma.ops.metrics import Metrics
from docgemma.tools.registry import default_registry
from docgemma.ui.login import is_public
from docgemma.ui.server import HEALTH_PATHS
from tests.conftest import free_port, serve_in_thread

LOGIN = ("dr.ada", "s3cret-pass")
#: Routes that answered without a login (and a few that never should).
CLOSED = [("GET", "/openapi.json"), ("GET", "/gradio_api/openapi.json"), ("POST", "/gradio_api/cancel"),
          ("POST", "/reset"), ("POST", "/gradio_api/reset"), ("GET", "/gradio_api/heartbeat/abc"),
          ("GET", "/gradio_api/info"), ("GET", "/config"), ("POST", "/gradio_api/queue/join"),
          ("GET", "/gradio_api/queue/data?session_hash=abc"), ("POST", "/gradio_api/upload"),
          ("GET", "/gradio_api/app_id"), ("GET", "/gradio_api/user"),
          ("GET", "/gradio_api/token"), ("GET", "/monitoring/abc"), ("GET", "/docs"), ("GET", "/gradio_api/runs"),
          ("POST", "/gradio_api/stream/abc"), ("POST", "/gradio_api/vibe-edit"), ("GET", "/gradio_api/file=/etc/hosts")]


def _served(tmp_path: Path, through_gradio: bool) -> tuple[str, object]:
    from docgemma.serve import readiness
    from docgemma.ui.page import build_demo
    from docgemma.ui.server import build_app
    from docgemma.workspace import Workspace

    settings = Settings(data_dir=tmp_path, backend="fake")
    store = open_store(settings)
    assistant = Assistant(demo_llm(), default_registry(), store.checkpointer, settings)
    metrics = Metrics()
    demo = build_demo(Workspace(assistant, None, metrics), "Demo rules · CPU")
    ready = readiness(settings, store, None)
    port = free_port()
    if through_gradio:
        from starlette.middleware import Middleware

        from docgemma.ui.login import LoginGate
        from docgemma.ui.server import probe_routes
        from docgemma.ui.uploads import UploadGate

        # serve_through_gradio's launch, without its signal handling (it serves until SIGTERM)
        demo.launch(server_name="127.0.0.1", server_port=port, auth=LOGIN, prevent_thread_lock=True, quiet=True,
                    ssr_mode=False, app_kwargs={
                        "routes": probe_routes(demo, ready, metrics), "docs_url": None, "redoc_url": None,
                        "openapi_url": None,
                        "middleware": [Middleware(LoginGate, gradio_app=lambda: getattr(demo, "server_app", None)),
                                       Middleware(UploadGate)]})
        return f"http://127.0.0.1:{port}", lambda: (demo.close(), store.close())
    url, stop_server = serve_in_thread(build_app(demo, ready, metrics, auth=LOGIN), port)
    return url, lambda: (stop_server(), store.close())


@pytest.fixture(params=["serve", "through_gradio"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    url, stop = _served(tmp_path, request.param == "through_gradio")
    yield url
    stop()  # type: ignore[operator]


@pytest.mark.slow
def test_every_route_but_the_probes_needs_the_login(served: str) -> None:
    with httpx.Client(base_url=served, timeout=10) as anonymous:
        for method, path in CLOSED:
            answer = anonymous.request(method, path, json={} if method == "POST" else None)
            assert answer.status_code in (401, 403), (method, path, answer.status_code, answer.text[:200])
        for path in HEALTH_PATHS:
            assert anonymous.get(path).status_code in (200, 503), path
        page = anonymous.get("/")
        assert page.status_code == 200 and "auth_required" in page.text  # the login page itself
        assert anonymous.post("/login", data={"username": "dr.ada", "password": "wrong"}).status_code == 400
    with httpx.Client(base_url=served, timeout=10) as user:
        assert user.post("/login", data={"username": LOGIN[0], "password": LOGIN[1]}).status_code == 200
        assert user.get("/config").status_code == 200
        assert user.get("/gradio_api/info").status_code == 200
        assert user.post("/gradio_api/reset", json={"session_hash": "abc", "fn_index": 0}).status_code != 401


@pytest.mark.slow
def test_a_signed_in_api_client_works(served: str) -> None:
    from gradio_client import Client

    client = Client(served + "/", auth=LOGIN, verbose=False)
    out = client.predict({"text": "What is hypertension?", "files": []}, [], None, api_name="/respond")
    assert "hypertension" in str(out[0]).lower()


def test_the_probes_and_the_login_page_are_the_only_open_routes() -> None:
    assert all(is_public(p) for p in HEALTH_PATHS)
    assert not any(is_public(path.split("?")[0]) for _, path in CLOSED)


@pytest.mark.slow
def test_the_login_page_signs_in_through_the_gate(served: str) -> None:
    """The gate leaves open exactly what the login page needs: Chromium shows it, signs in, gets the chat."""
    import shutil

    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser test needs: pip install playwright")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("the browser test needs Chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(served + "/", wait_until="domcontentloaded")
            page.locator("input[type=text]").first.fill(LOGIN[0], timeout=60_000)
            page.locator("input[type=password]").fill(LOGIN[1])
            page.locator("input[type=password]").press("Enter")
            page.wait_for_selector("#input textarea", timeout=60_000)
        finally:
            browser.close()


@pytest.mark.slow
def test_wrong_passwords_are_rate_limited_per_client_and_user(served: str) -> None:
    """300 wrong passwords were tried in 18.5 s: now the sixth is refused with the wait, the right password too
    during the pause, while another user from the same address may still sign in."""
    from docgemma.ui.login_limit import PER_USER

    with httpx.Client(base_url=served, timeout=10) as guesser:
        for _ in range(PER_USER):
            assert guesser.post("/login", data={"username": LOGIN[0], "password": "wrong"}).status_code == 400
        refused = guesser.post("/login", data={"username": LOGIN[0], "password": "wrong"})
        assert refused.status_code == 429 and "Too many failed sign-ins" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) > 0
        right = guesser.post("/login", data={"username": LOGIN[0], "password": LOGIN[1]})
        assert right.status_code == 429  # a guess that happens to be right is refused too during the pause
        assert guesser.post("/login", data={"username": "someone.else", "password": "x"}).status_code == 400
