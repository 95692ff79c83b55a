"""A claim's owner is known dead at once when it was a process of this machine (``agent/claims.owner_gone``): a
restarted single server showed its own dead write as "being carried out by another server" for 20-32 s."""

from __future__ import annotations

import subprocess
import sys

import pytest

from docgemma.agent.claims import _started, owner_gone, process_owner


def test_a_dead_process_of_this_machine_is_known_dead_and_a_live_one_is_not() -> None:
    host, _, token, machine, _ = process_owner().split(":")
    if not machine:
        pytest.skip("no /proc here: only the lease tells")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owner = ":".join([host, str(child.pid), token, machine, _started(child.pid)])
        assert not owner_gone(owner)  # running
    finally:
        child.kill()
        child.wait()
    assert owner_gone(owner)  # killed and reaped
    assert not owner_gone(process_owner())  # this process
    assert owner_gone(":".join([host, str(child.pid), token, machine, "1"]))  # the pid reused by another process


@pytest.mark.parametrize("owner", ["another-host:1:ab:x/1:5", "dead-process", "A", "host:notapid:x:y:z"])
def test_an_owner_elsewhere_or_unreadable_is_left_to_its_lease(owner: str) -> None:
    assert not owner_gone(owner)
