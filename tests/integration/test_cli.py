"""The command line as a user meets it, each case in a subprocess: ``--version``, the program's own name in usage
and errors (``docgemma`` as the installed command, ``python -m docgemma`` otherwise), and for bad input, an
unusable setting or an unreachable service on every subcommand: one line ``PROG: error: …``, exit status 2, no
traceback. ``docgemma serve`` and ``python app.py`` fail the same way."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docgemma import __version__
from docgemma.__main__ import build_parser, program_name
from tests.conftest import free_port

ROOT = Path(__file__).parents[2]
MODULE = "python -m docgemma"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DOCGEMMA_", "GRADIO_", "SPACES_"))}
    # Knowledge tools point at a closed local port: nothing can reach the network.
    return {**clean, "DOCGEMMA_DATA_DIR": str(tmp_path / "data"), "DOCGEMMA_BACKEND": "fake",
            "DOCGEMMA_OPENFDA_URL": "http://127.0.0.1:9", "PYTHONPATH": str(ROOT)}


@pytest.fixture
def console_script(tmp_path: Path) -> Path:
    """What ``pip install`` writes for ``[project.scripts] docgemma = "docgemma.__main__:main"``."""
    script = tmp_path / "bin" / "docgemma"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom docgemma.__main__ import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return script


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield int(held.getsockname()[1])


def run(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def module(*args: str) -> list[str]:
    return [sys.executable, "-m", "docgemma", *args]


def one_error(proc: subprocess.CompletedProcess[str], prog: str = MODULE) -> str:
    """The single error line of a failed command (log lines aside), after checking the exit status."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if re.match(r"\S.*: error: ", line)]
    assert len(errors) == 1 and proc.stderr.rstrip().endswith(errors[0]), proc.stderr
    assert errors[0].startswith(f"{prog}: error: ")
    return errors[0].removeprefix(f"{prog}: error: ")


def test_program_name_is_what_the_user_typed() -> None:
    assert program_name("/home/x/.venv/bin/docgemma") == "docgemma"
    assert program_name("/work/docgemma/__main__.py") == MODULE
    assert build_parser("docgemma").format_usage().startswith("usage: docgemma ")


@pytest.mark.slow
def test_version_and_usage_name_the_program(env: dict[str, str], console_script: Path) -> None:
    for command, prog in ((module(), MODULE), ([str(console_script)], "docgemma")):
        version = run([*command, "--version"], env)
        assert version.returncode == 0 and version.stdout == f"{prog} {__version__}\n", version
        usage = run(command, env)
        assert usage.returncode == 2 and usage.stderr.startswith(f"usage: {prog} "), usage.stderr
        assert f"{prog}: error: the following arguments are required: command" in usage.stderr
        missing = run([*command, "golden", "missing.json"], env)
        assert one_error(missing, prog) == "cannot read the golden file 'missing.json': No such file or directory"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["chat-image", "golden-missing", "golden-not-cases", "ehr-load-missing",
                                  "bench-repeats", "experiment-suite", "chat-model-server", "golden-model-server"])
def test_bad_input_or_unreachable_service_is_one_line_and_exit_2(case: str, env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    not_cases = tmp_path / "notes.json"
    not_cases.write_text('{"notes": []}')
    down = {**env, "DOCGEMMA_BACKEND": "openai", "DOCGEMMA_MODEL": "google/medgemma-1.5-4b-it",
            "DOCGEMMA_OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    commands = {
        "chat-image": (module("chat", "What does this show?", "--image", "scan.png"), env,
                       "cannot read the image 'scan.png': No such file or directory"),
        "golden-missing": (module("golden", "golden_tests/seed002_unit.json", "nope.json"), env,
                           "cannot read the golden file 'nope.json': No such file or directory"),
        "golden-not-cases": (module("golden", str(not_cases)), env, f"'{not_cases}' is not a golden case file"),
        "ehr-load-missing": (module("ehr", "load", "no/such/dir"), env,
                             "nothing to load at 'no/such/dir': no such file or directory"),
        "bench-repeats": (module("bench", "--repeats", "0"), env, "argument --repeats: 0 is not a positive number"),
        "experiment-suite": (module("experiment", "no_such_suite"), env, "argument suite: invalid choice"),
        "chat-model-server": (module("chat", "What is hypertension?"), down, "model server unreachable"),
        "golden-model-server": (module("golden", "golden_tests/seed002_unit.json", "--backend", "openai"), down,
                                "model server unreachable"),
    }
    command, environment, expected = commands[case]
    proc = run(command, environment)
    prog = MODULE
    if case in ("bench-repeats", "experiment-suite"):  # argparse's own: the subcommand's usage, then the line
        prog = f"{MODULE} {command[3]}"
        assert proc.stderr.startswith(f"usage: {prog} ")
    assert expected in one_error(proc, prog)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["serve", "app.py", "ehr serve", "mcp"])
def test_a_busy_port_is_one_line_and_exit_2_before_anything_loads(kind: str, env: dict[str, str],
                                                                  busy_port: int) -> None:
    commands = {"serve": (module("serve"), MODULE), "app.py": ([sys.executable, "app.py"], "app.py"),
                "ehr serve": (module("ehr", "serve", "--port", str(busy_port)), MODULE),
                "mcp": (module("mcp", "--transport", "http", "--port", str(busy_port)), MODULE)}
    command, prog = commands[kind]
    proc = run(command, {**env, "GRADIO_SERVER_PORT": str(busy_port)}, timeout=60)
    message = one_error(proc, prog)
    assert message.startswith(f"cannot serve on 127.0.0.1:{busy_port} (Address already in use)"), message


@pytest.mark.slow
def test_serve_and_app_py_fail_alike_on_an_unreachable_database(env: dict[str, str]) -> None:
    """``docgemma serve`` printed a 37-line traceback and exited 1 where ``python app.py`` printed one line and
    exited 2."""
    down = {**env, "DOCGEMMA_CHECKPOINT_URL": f"postgresql://docgemma@127.0.0.1:{free_port()}/docgemma",
            "GRADIO_SERVER_PORT": str(free_port())}
    serve = one_error(run(module("serve"), down))
    app = one_error(run([sys.executable, "app.py"], down), "app.py")
    assert serve == app and serve.startswith("DOCGEMMA_CHECKPOINT_URL: cannot connect to PostgreSQL at ")
