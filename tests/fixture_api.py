"""Recorded API answers, served to the tools: as an ``httpx.MockTransport`` handler, or over HTTP on loopback
(for the MCP server subprocess). Routes by path suffix, so any base URL works."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

FIXTURES = Path(__file__).parent / "fixtures" / "apis"
LABELS = {"warfarin": "label_warfarin__built.json", "coumadin": "label_warfarin__built.json",
          "aspirin": "label_aspirin__built.json", "dofetilide": "label_dofetilide__built.json",
          "keytruda": "label_keytruda_reduced__biomcp.json", "pembrolizumab": "label_keytruda_reduced__biomcp.json"}
#: BUILT (not recorded): a positive PubMed esearch in the documented E-utilities JSON shape, pointing at
#: the recorded esummary record 30939045.
ESEARCH_HIT = {"header": {"type": "esearch", "version": "0.3"},
               "esearchresult": {"count": "1", "retmax": "1", "retstart": "0", "idlist": ["30939045"]}}


def _file(relative: str) -> bytes:
    return (FIXTURES / relative).read_bytes()


def respond(path: str, params: dict[str, str]) -> tuple[int, str, bytes]:
    """(status, content type, body) for a request."""
    if path.endswith("/drug/label.json"):
        search = params.get("search", "").lower()
        for name, file in LABELS.items():
            if f'"{name}"' in search:
                return 200, "application/json", _file(f"openfda/{file}")
        return 404, "application/json", _file("openfda/error_404_not_found__biomcp.json")
    if path.endswith("/esearch.fcgi"):
        if "nothing" in params.get("term", ""):
            return 200, "application/json", _file("pubmed/esearch_zero_hits_with_errorlist__Yeliztli.json")
        return 200, "application/json", json.dumps(ESEARCH_HIT).encode()
    if path.endswith("/esummary.fcgi"):
        return 200, "application/json", _file("pubmed/esummary_pmid30939045__Yeliztli.json")
    if path.endswith("/search"):
        return 200, "application/json", _file("europepmc/search_ext_id_20516115__biomcp.json")
    if path.endswith("/studies"):
        return 200, "application/json", _file("ctgov/search_melanoma_recruiting_pageSize3__biomcp.json")
    return 404, "text/plain", b"not found"


def handler(request: httpx.Request) -> httpx.Response:
    """``httpx.MockTransport`` handler."""
    params = {k: v for k, v in request.url.params.items()}
    status, kind, body = respond(request.url.path, params)
    return httpx.Response(status, content=body, headers={"Content-Type": kind})


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        status, kind, body = respond(url.path, params)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve() -> Iterator[str]:
    """Serve the fixtures on loopback; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
