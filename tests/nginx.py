"""Debian's nginx for tests (``scripts/dev.sh test`` installs the ``nginx`` package), running a rendered copy of
``deploy/nginx.conf`` in a temporary directory. Where nginx is missing, or its log directory cannot be written (it
logs to /var/log/nginx, as installed), the fixture skips and says why."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

DEPLOY = Path(__file__).parents[1] / "deploy"
TEMPLATE = DEPLOY / "nginx.conf"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def missing_reason() -> str | None:
    """Why nginx cannot run here, or None."""
    if nginx_binary() is None:
        return "the deployment proxy test needs Debian's nginx: apt-get install nginx (scripts/dev.sh test installs it)"
    if not os.access("/var/log/nginx", os.W_OK):
        return "nginx logs to /var/log/nginx, which this user cannot write (run as root, as scripts/dev.sh test does)"
    return None


def render(values: Mapping[str, str], template: Path = TEMPLATE) -> str:
    """The template with its ``${DOCGEMMA_*}`` names filled in, as the nginx image's envsubst step does; every name
    must be given (a name left in would be a syntax error, or worse, a literal)."""
    text = template.read_text()
    names = set(re.findall(r"\$\{(DOCGEMMA_\w+)\}", text))
    assert names == set(values), f"template names {sorted(names)} vs given {sorted(values)}"
    return re.sub(r"\$\{(DOCGEMMA_\w+)\}", lambda m: values[m.group(1)], text)


def check(config: Path) -> subprocess.CompletedProcess[str]:
    """``nginx -t`` on a rendered file."""
    binary = nginx_binary()
    assert binary is not None
    prefix = config.parent
    return subprocess.run([binary, "-t", "-c", str(config), "-p", str(prefix), "-e", str(prefix / "error.log"),
                           "-g", f"pid {prefix / 'nginx.pid'};"], capture_output=True, text=True, timeout=60)


class Nginx:
    """nginx in the foreground on a rendered config; :meth:`stop` ends it."""

    def __init__(self, config: Path) -> None:
        binary = nginx_binary()
        assert binary is not None
        prefix = config.parent
        self.error_log = prefix / "error.log"
        self.process = subprocess.Popen(
            [binary, "-c", str(config), "-p", str(prefix), "-e", str(self.error_log),
             "-g", f"daemon off; pid {prefix / 'nginx.pid'};"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def wait_listening(self, port: int, timeout_s: float = 30) -> None:
        from tests.conftest import wait_for_port

        try:
            wait_for_port(port, timeout_s)
        except TimeoutError:
            raise TimeoutError(self.log()) from None

    def log(self) -> str:
        return self.error_log.read_text() if self.error_log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: finish open requests
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        time.sleep(0.1)
