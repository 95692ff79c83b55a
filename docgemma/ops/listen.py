"""Whether this process can listen on an address, checked before a server loads anything: the web app's
model takes a minute to load on CPU, and a server that fails only then, on a busy port, wastes that minute
and ends with the server library's own exit status and log lines instead of one clear error."""

from __future__ import annotations

import socket

from docgemma.config import ConfigError


def ensure_can_listen(host: str, port: int, change: str) -> None:
    """Raise :class:`ConfigError` when ``host``:``port`` cannot be bound; ``change`` says how to pick another
    (a variable or an option)."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as exc:
        raise ConfigError(f"cannot serve on {host}:{port} ({exc.strerror or exc})") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no conflict
        try:
            probe.bind(where)
        except OSError as exc:
            raise ConfigError(f"cannot serve on {host}:{port} ({exc.strerror or exc}); {change}") from None
