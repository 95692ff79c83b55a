"""Shared fixtures: the registry, schema shortcuts and a scripted fake model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.schemas import ResultAssessment, RetryStrategy, intent_schema, tool_selection_schema
from docgemma.llm.fake import FakeLLM
from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.registry import ToolRegistry, default_registry
from tests.postgres import postgres, postgres_url  # noqa: F401  (fixtures: a PostgreSQL server, a fresh database)

NAMES = default_registry().names

#: Test modules that must not run beside another test process (`bash scripts/dev.sh test` runs the rest on two
#: pytest-xdist workers, then these alone), with why. A test using the ``postgres`` fixture is serial too.
SERIAL = {
    "tests/e2e/": "Chromium and app processes; heavy on a 2-core machine",
    "tests/integration/test_login.py": "Chromium",
    "tests/integration/test_kaggle_notebook.py": "fixed port 7841; runs the notebook on the embedded model",
    "tests/integration/test_notebooks.py": "executes notebooks on the embedded model",
    "tests/integration/test_launch.py": "starts app.py with the embedded model",
    "tests/integration/test_zerogpu_real_spaces.py": "forks spaces' GPU workers running the tiny Gemma 3",
    "tests/integration/test_served_model_failures.py": "times each call against timeout_s: alone, not beside a busy worker",
    "tests/integration/test_cli.py": "CLI subprocesses, PostgreSQL, the embedded model",
    "tests/integration/test_approval_crash.py": "kills and restarts app and record servers",
    "tests/integration/test_replicas.py": "replica processes on PostgreSQL",
    "tests/integration/test_server_install.py": "starts the server from a subprocess",
    "tests/integration/test_platform_resolve.py": "pip resolves (shared pip cache)",
    "tests/integration/test_cpu_torch_resolve.py": "pip resolves (shared pip cache)",
    "tests/integration/test_llamacpp_backend.py": "model backend (llama.cpp threads)",
    "tests/integration/test_transformers_backend.py": "model backend",
    "tests/integration/test_medgemma_path.py": "model backend (tiny Gemma 3)",
    "tests/integration/test_prefix_cache.py": "model backend",
    "tests/integration/test_prompt_once.py": "model backend",
    "tests/unit/test_transformers_loading.py": "model backend",
    "tests/unit/test_llamacpp_setup.py": "model backend",
}


#: Test modules that need llama-cpp-python: on a machine without its built wheel, `bash scripts/dev.sh test` builds it
#: in the background while the rest of the suite runs, then runs these (marked ``llamacpp``) once it is installed.
LLAMACPP = ("tests/integration/test_llamacpp_backend.py", "tests/unit/test_llamacpp_setup.py")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the marker must be on the item by then
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    for item in items:
        where = item.path.relative_to(root).as_posix()
        if "postgres" in getattr(item, "fixturenames", ()) or any(where.startswith(prefix) for prefix in SERIAL):
            item.add_marker(pytest.mark.serial)
        if where.startswith(LLAMACPP):
            item.add_marker(pytest.mark.llamacpp)


@pytest.fixture(autouse=True)
def _hosts_reachable_again() -> Any:
    """A host one test found unreachable is taken as offline for a minute (tools/http.py): not in the next test."""
    from docgemma.tools.http import forget_offline

    forget_offline()
    yield
    forget_offline()


def intent(kind: str = "TOOL_NEEDED", summary: str = "task", tool: str | None = None, scope: str = "clinical") -> Any:
    return intent_schema(NAMES)(intent=kind, task_summary=summary, suggested_tool=tool, scope=scope)


def select(tool: str) -> Any:
    return tool_selection_schema(NAMES)(tool_name=tool)


def assess(quality: str = "success_rich") -> ResultAssessment:
    return ResultAssessment(quality=quality)  # type: ignore[arg-type]


def retry(strategy: str = "retry_same") -> RetryStrategy:
    return RetryStrategy(strategy=strategy)  # type: ignore[arg-type]


class Tools:
    """Executors that return queued outcomes and record their calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.outcomes: dict[str, list[ToolOutcome]] = {}

    def queue(self, tool: str, *outcomes: ToolOutcome) -> None:
        self.outcomes.setdefault(tool, []).extend(outcomes)

    def registry(self) -> ToolRegistry:
        def make(name: str) -> Any:
            def run(args: Any, context: Any) -> ToolOutcome:
                self.calls.append((name, args.model_dump()))
                queue = self.outcomes.get(name) or [success({"note": f"default {name} data"})]
                return queue.pop(0) if len(queue) > 1 else queue[0]
            return run
        return default_registry({name: make(name) for name in NAMES})


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
def fake() -> FakeLLM:
    return FakeLLM()


@pytest.fixture
def assistant(fake: FakeLLM, tools: Tools) -> Assistant:
    return Assistant(fake, tools.registry())


def free_port() -> int:
    """A loopback port nobody listens on (yet)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_in_thread(app: Any, port: int | None = None, wait_s: float = 60.0) -> tuple[str, Callable[[], None]]:
    """Serve the ASGI ``app`` with uvicorn on a loopback port in a daemon thread, once it has started; returns its
    base URL and a function that stops it."""
    import threading
    import time

    import uvicorn

    port = free_port() if port is None else port
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + wait_s
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)

    def stop() -> None:
        server.should_exit = True
        thread.join(10)

    return f"http://127.0.0.1:{port}", stop


def wait_for_port(port: int, timeout_s: float = 60.0) -> None:
    """Block until something accepts connections on ``127.0.0.1:port``."""
    import socket
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s:.0f} s")
