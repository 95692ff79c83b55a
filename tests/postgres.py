"""A throwaway PostgreSQL server for tests: Debian's ``postgresql`` package (``scripts/dev.sh test`` installs
it), initialised in a temporary directory and started on a free loopback port.

PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user the package creates
(through ``runuser``). Where the binaries are missing the fixture skips and says why.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bin_dir() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


@dataclass
class Postgres:
    """A running server; :meth:`database` makes a fresh, empty database on it."""

    port: int
    bin_dir: Path
    as_user: list[str]

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


def start_postgres() -> Iterator[Postgres]:
    """Initialise, start, yield, stop and remove a server (a generator for fixtures and the bench)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; scripts/dev.sh test does)")
    as_user: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("runuser"):
            pytest.skip("running as root without runuser: PostgreSQL refuses to run as root")
        try:
            import pwd

            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run PostgreSQL as")
        as_user = ["runuser", "-u", "postgres", "--"]
    # Not under pytest's own tmp dir: that is private to root, and the server runs as another user.
    root = Path(tempfile.mkdtemp(prefix="docgemma-pg-"))
    if as_user:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data = root / "data"
    port = _free_port()
    subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                    "--no-sync", "-E", "UTF8"], check=True, capture_output=True, timeout=120)
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
    subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"),
                    "-w", "-t", "60", "start"], check=True, capture_output=True, timeout=90)
    try:
        yield Postgres(port, bin_dir, as_user)
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    yield from start_postgres()


@pytest.fixture
def postgres_url(postgres: Postgres) -> str:
    """A fresh database of the session's server."""
    return postgres.database()
