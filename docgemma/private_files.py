"""The app's files hold patient data: its folders are made readable by their owner only (0700) and its SQLite
databases created so (0600; SQLite gives a database's -wal and -shm files the database's own mode). Before, the
data folder was 0755 and the record and conversation databases 0644: any user of the machine could read them."""

from __future__ import annotations

import os
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> Path:
    """``path`` made with its missing parents, each one this call makes owner-only (a folder that already
    exists keeps its mode: it may be the deployer's own, shared on purpose)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=FOLDER_MODE, exist_ok=True)
        os.chmod(folder, FOLDER_MODE)  # mkdir's mode is masked by the umask: said again
    return path


def private_database(path: Path) -> Path:
    """``path``'s folder made private, and the database file created owner-only before SQLite opens it (an
    existing file is made owner-only too: it holds the record or the conversations)."""
    private_folder(path.parent)
    descriptor = os.open(path, os.O_CREAT | os.O_RDWR, FILE_MODE)
    os.close(descriptor)
    os.chmod(path, FILE_MODE)
    return path
