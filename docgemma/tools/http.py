"""The one HTTP client every knowledge tool uses.

* Deadlines: a 1 s connect timeout (an unreachable network fails fast, without retries) and an overall
  deadline per call (10 s by default) that retries cannot exceed.
* Bounded retries with exponential backoff for read timeouts, 429 and 5xx; ``Retry-After`` is honoured
  (capped by the remaining deadline).
* A small in-memory response cache with a TTL (successful JSON only), bounded: at most
  ``cache_max_entries`` responses, the least recently used evicted first (it used to grow for as long as the
  app ran).
* An allow-list of hosts: only the tools' own API hosts can be called.
* One error taxonomy (:class:`HttpError.error_type`) matching the agent's error types (timeout, not found, ...). Raw error text
  stays in the exception for logs; tools turn it into a templated message.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from docgemma.http_client import http_client
from docgemma.tools.outcome import ErrorType

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class HttpError(Exception):
    """A failed request, classified. ``status`` is the HTTP status when there was one."""

    def __init__(self, error_type: ErrorType, detail: str, status: int | None = None) -> None:
        super().__init__(f"{error_type}: {detail}")
        self.error_type = error_type
        self.detail = detail
        self.status = status


#: How long a host that refused or could not be resolved is taken as offline (no new attempt meanwhile).
OFFLINE_MEMORY_S = 60.0
_UNREACHABLE: dict[str, float] = {}
#: The hosts whose latest attempt could not connect. Kept until one of them answers, not only for the minute of
#: :data:`OFFLINE_MEMORY_S`: a clinic without internet stays without it, and the buttons and greeting offered FDA and
#: trial look-ups again a minute after the start-up probe had found them unreachable (issue 46).
_OFFLINE: set[str] = set()


def known_offline() -> bool:
    """True when a tool's API host could not be reached at its latest attempt (the start-up probe or a look-up) and
    has not answered since: the page, the greeting and the buttons then offer no look-up."""
    return bool(_OFFLINE)


def note_unreachable(host: str) -> None:
    """``host`` could not be reached: offline until it answers, and not tried again for a while."""
    _UNREACHABLE[host] = time.monotonic() + OFFLINE_MEMORY_S
    _OFFLINE.add(host)


def forget_offline() -> None:
    """Forget which hosts were unreachable (tests; a clinic whose connection came back need not wait)."""
    _UNREACHABLE.clear()
    _OFFLINE.clear()


@dataclass
class HttpClient:
    """JSON/text GETs with deadlines, retries, a cache and a host allow-list."""

    allowed_hosts: frozenset[str]
    deadline_s: float = 10.0
    connect_timeout_s: float = 1.0
    max_retries: int = 2
    backoff_s: float = 0.5
    cache_ttl_s: float = 600.0
    cache_max_entries: int = 256
    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep
    stats: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._cache: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._client = http_client(self.deadline_s, self.connect_timeout_s, transport=self.transport)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    @staticmethod
    def _key(url: str, params: Mapping[str, Any]) -> str:
        return url + "?" + "&".join(f"{k}={params[k]}" for k in sorted(params))

    def get_json(self, url: str, params: Mapping[str, Any], *, cache: bool = True) -> Any:
        """GET ``url`` and parse JSON. Raises :class:`HttpError`."""
        key = self._key(url, params)
        if cache:
            with self._lock:
                hit = self._cache.get(key)
                if hit and hit[0] > time.monotonic():
                    self._cache.move_to_end(key)
                else:
                    self._cache.pop(key, None)  # expired entries go at once
                    hit = None
            if hit:
                self.stats["cache_hits"] += 1
                return hit[1]
        response = self._get(url, params)
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HttpError("invalid_response", "body is not JSON", response.status_code) from exc
        if cache:
            with self._lock:
                self._cache[key] = (time.monotonic() + self.cache_ttl_s, body)
                self._cache.move_to_end(key)
                while len(self._cache) > max(self.cache_max_entries, 0):
                    self._cache.popitem(last=False)  # least recently used
        return body

    @property
    def cache_size(self) -> int:
        """Responses currently cached."""
        return len(self._cache)

    def _get(self, url: str, params: Mapping[str, Any]) -> httpx.Response:
        host = urlsplit(url).hostname or ""
        if host not in self.allowed_hosts:
            raise HttpError("invalid_args", f"host {host!r} is not one of the tools' API hosts")
        if _UNREACHABLE.get(host, 0.0) > time.monotonic():
            raise HttpError("offline", f"{host} could not be reached a moment ago: not tried again yet")
        start = time.monotonic()
        attempt = 0
        while True:
            remaining = self.deadline_s - (time.monotonic() - start)
            self.stats["requests"] += 1
            try:
                response = self._client.get(url, params=dict(params), timeout=httpx.Timeout(
                    max(remaining, 0.1), connect=min(self.connect_timeout_s, max(remaining, 0.1))))
            except httpx.ConnectTimeout as exc:
                raise HttpError("service_unavailable", f"cannot connect to {host} (timeout)") from exc
            except httpx.ConnectError as exc:
                # No route, no name resolution, connection refused: this machine cannot reach the service. Said
                # as such (not "try again shortly"), and not tried again for a while (see ``known_offline``).
                note_unreachable(host)
                raise HttpError("offline", f"cannot connect to {host}") from exc
            except httpx.TimeoutException as exc:
                error: HttpError = HttpError("timeout", f"{host} did not answer in time")
                error.__cause__ = exc
                wait = self._backoff(attempt, None)
            except httpx.HTTPError as exc:
                raise HttpError("service_unavailable", f"{host}: {type(exc).__name__}") from exc
            else:
                # Any answer shows the host is reachable again (a 4xx too: the network works).
                _OFFLINE.discard(host)
                if response.status_code == 200:
                    return response
                error = _classify(response)
                if response.status_code not in RETRY_STATUSES:
                    raise error
                wait = self._backoff(attempt, response.headers.get("Retry-After"))
            elapsed = time.monotonic() - start
            if attempt >= self.max_retries or elapsed + wait >= self.deadline_s:
                raise error
            attempt += 1
            self.stats["retries"] += 1
            log.info("retrying %s in %.1fs after %s", host, wait, error.error_type)
            self.sleep(wait)

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            seconds = _retry_after_seconds(retry_after)
            if seconds is not None:
                return seconds
        return float(self.backoff_s * (2**attempt))


def _retry_after_seconds(value: str) -> float | None:
    """``Retry-After`` as seconds or an HTTP date."""
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _classify(response: httpx.Response) -> HttpError:
    status = response.status_code
    if status == 429:
        return HttpError("rate_limit", "rate limited", status)
    if status >= 500:
        return HttpError("server_error", f"HTTP {status}", status)
    if status == 404:
        return HttpError("not_found", "HTTP 404", status)
    if status in (400, 422):
        return HttpError("invalid_args", f"HTTP {status}", status)
    if status in (401, 403):
        return HttpError("service_unavailable", f"HTTP {status} (API key rejected?)", status)
    return HttpError("invalid_response", f"HTTP {status}", status)


def hosts_of(urls: Iterable[str]) -> frozenset[str]:
    """The host names of some base URLs (the allow-list)."""
    return frozenset(urlsplit(u).hostname or "" for u in urls)
