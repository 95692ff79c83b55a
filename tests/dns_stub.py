"""A tiny DNS server for tests: answers A queries for the names it is given (several addresses per name, as
Docker's DNS answers for the replicas of a service), NXDOMAIN for any other name, over UDP on loopback. The
answers can change while it runs, as they do when a replica restarts at a new address."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

TTL_S = 1


class DnsStub:
    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = {name.lower().rstrip("."): list(ips) for name, ips in names.items()}
        self.queries: list[str] = []
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port = int(self._socket.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def answer(self, name: str, ips: list[str]) -> None:
        self.names[name.lower().rstrip(".")] = list(ips)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                query, client = self._socket.recvfrom(512)
            except (TimeoutError, OSError):
                continue
            reply = self._reply(query)
            if reply:
                self._socket.sendto(reply, client)

    def _reply(self, query: bytes) -> bytes | None:
        if len(query) < 12:
            return None
        ident, flags = struct.unpack("!HH", query[:4])
        labels, i = [], 12
        while i < len(query) and query[i]:
            length = query[i]
            labels.append(query[i + 1:i + 1 + length].decode("ascii", "replace"))
            i += 1 + length
        qtype, _qclass = struct.unpack("!HH", query[i + 1:i + 5])
        question = query[12:i + 5]
        name = ".".join(labels).lower()
        self.queries.append(name)
        ips = self.names.get(name)
        rd = flags & 0x0100
        if ips is None:
            return struct.pack("!HHHHHH", ident, 0x8083 | rd, 1, 0, 0, 0) + question  # NXDOMAIN
        answers = [ip for ip in ips] if qtype == 1 else []  # A records only (nginx asks nothing else: ipv6=off)
        header = struct.pack("!HHHHHH", ident, 0x8080 | rd, 1, len(answers), 0, 0)
        records = b"".join(struct.pack("!HHHIH", 0xC00C, 1, 1, TTL_S, 4) + socket.inet_aton(ip) for ip in answers)
        return header + question + records

    def start(self) -> DnsStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()


@contextmanager
def dns_stub(names: dict[str, list[str]]) -> Iterator[DnsStub]:
    server = DnsStub(names).start()
    try:
        yield server
    finally:
        server.stop()
