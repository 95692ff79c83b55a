"""FHIR R4 REST semantics over the store, as one pure request handler.

The same handler serves HTTP on loopback (``python -m docgemma ehr serve``, :mod:`.server`) and, through
an ``httpx`` transport, the app's own FHIR client in-process: one code path whether the record is
embedded or a hospital's server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from docgemma.ehr.search import page, search
from docgemma.ehr.store import FhirError, FhirStore, check_id, check_type
from docgemma.ehr.validate import check_known_type, check_resource

FHIR_JSON = "application/fhir+json"


@dataclass
class Reply:
    """A response: status, body (a FHIR resource), extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str]


class FhirApi:
    """Read, search, create (conditional), update, transaction, ``$everything`` and ``metadata``."""

    def __init__(self, store: FhirStore, base_url: str = "") -> None:
        self.store = store
        self.base_url = base_url.rstrip("/")

    def handle(self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str], body: bytes) -> Reply:
        """Dispatch one request; FHIR errors become OperationOutcome replies."""
        try:
            return self._dispatch(method.upper(), [p for p in path.strip("/").split("/") if p], query, headers, body)
        except FhirError as exc:
            return Reply(exc.status, exc.outcome(), {})

    def _dispatch(self, method: str, parts: list[str], query: list[tuple[str, str]], headers: dict[str, str],
                  body: bytes) -> Reply:
        if method == "GET" and parts == ["metadata"]:
            return Reply(200, self.capabilities(), {})
        if method == "POST" and not parts:
            return self._bundle(_json(body))
        if not parts:
            raise FhirError(404, "not-found", "unknown endpoint")
        check_type(parts[0])
        check_known_type(parts[0])
        if len(parts) > 1:
            check_id(parts[1])  # before routing: "Patient/../../x" is a bad id, not an unknown route
        if method == "GET" and len(parts) == 1:
            return self._search(parts[0], query)
        if method == "GET" and len(parts) == 3 and parts[0] == "Patient" and parts[2] == "$everything":
            since = dict(query).get("_since")
            return Reply(200, self._bundle_of("searchset", self.store.compartment(parts[1], since=since)), {})
        if method == "GET" and len(parts) == 2:
            return Reply(200, self.store.read(parts[0], parts[1]), {})
        if method == "POST" and len(parts) == 1:
            resource = {k: v for k, v in _json(body).items() if k != "id"}  # the server assigns the id
            _same_type(resource, parts[0])
            check_resource(resource)
            condition = {k.lower(): v for k, v in headers.items()}.get("if-none-exist")
            entry = {"resource": resource,
                     "request": {"method": "POST", "url": parts[0], **({"ifNoneExist": condition} if condition else {})}}
            (saved, created), = self.store.transaction([entry])
            return Reply(201 if created else 200, saved, {"Location": f"{parts[0]}/{saved['id']}"})
        if method == "PUT" and len(parts) == 2:
            check_id(parts[1])
            resource = _json(body)
            _same_type(resource, parts[0])
            if resource.get("id") not in (None, parts[1]):
                raise FhirError(400, "invalid", "resource id does not match the URL")
            check_resource({**resource, "id": parts[1]})
            if_match = {k.lower(): v for k, v in headers.items()}.get("if-match")
            (saved, _), = self.store.transaction([{"resource": {**resource, "id": parts[1]},
                                                   "request": {"method": "PUT", "url": f"{parts[0]}/{parts[1]}",
                                                               **({"ifMatch": if_match} if if_match else {})}}])
            return Reply(200 if saved["meta"]["versionId"] != "1" else 201, saved, {})
        raise FhirError(405, "not-supported", f"{method} /{'/'.join(parts)} is not supported")

    def _search(self, resource_type: str, query: list[tuple[str, str]]) -> Reply:
        matches = search(self.store, resource_type, query)
        items, offset, count = page(matches, query)
        bundle = self._bundle_of("searchset", items, total=len(matches))
        others = [(k, v) for k, v in query if k not in ("_offset", "_count")]
        bundle["link"] = [{"relation": "self", "url": self._url(resource_type, query)}]
        if count and offset + count < len(matches):  # _count=0 asks for the total only: no next page
            bundle["link"].append({"relation": "next", "url": self._url(
                resource_type, [*others, ("_count", str(count)), ("_offset", str(offset + count))])})
        return Reply(200, bundle, {})

    def _bundle(self, bundle: dict[str, Any]) -> Reply:
        if bundle.get("resourceType") != "Bundle" or bundle.get("type") not in ("transaction", "batch"):
            raise FhirError(400, "invalid", "POST / takes a transaction or batch Bundle")
        results = self.store.transaction(_checked_entries(bundle))
        entries = [{"fullUrl": f"{self.base_url}/{r['resourceType']}/{r['id']}", "resource": r,
                    "response": {"status": "201 Created" if created else "200 OK",
                                 "location": f"{r['resourceType']}/{r['id']}/_history/{r['meta']['versionId']}"}}
                   for r, created in results]
        kind = "transaction-response" if bundle["type"] == "transaction" else "batch-response"
        return Reply(200, {"resourceType": "Bundle", "type": kind, "entry": entries}, {})

    def _bundle_of(self, kind: str, resources: list[dict[str, Any]], total: int | None = None) -> dict[str, Any]:
        return {"resourceType": "Bundle", "type": kind, "total": len(resources) if total is None else total,
                "entry": [{"fullUrl": f"{self.base_url}/{r['resourceType']}/{r['id']}", "resource": r,
                           "search": {"mode": "match"}} for r in resources]}

    def _url(self, resource_type: str, query: list[tuple[str, str]]) -> str:
        return f"{self.base_url}/{resource_type}" + (f"?{urlencode(query)}" if query else "")

    @staticmethod
    def capabilities() -> dict[str, Any]:
        """A minimal CapabilityStatement."""
        return {"resourceType": "CapabilityStatement", "status": "active", "kind": "instance", "fhirVersion": "4.0.1",
                "format": ["json"], "software": {"name": "DocGemma Connect embedded FHIR store"},
                "rest": [{"mode": "server", "interaction": [{"code": "transaction"}, {"code": "batch"}]}]}


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body or b"{}")
    except json.JSONDecodeError as exc:
        raise FhirError(400, "invalid", "body is not valid JSON") from exc
    if not isinstance(value, dict):
        raise FhirError(400, "invalid", "body is not a JSON object")
    return value


def _checked_entries(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of a transaction or batch, each a valid resource with a POST or PUT request matching it
    (a batch is applied atomically too: nothing is stored unless every entry is valid)."""
    entries = bundle.get("entry", [])
    if not isinstance(entries, list):
        raise FhirError(400, "invalid", "Bundle.entry must be a list")
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise FhirError(400, "invalid", f"Bundle.entry[{n}] is not an object")
        resource, request = entry.get("resource"), entry.get("request", {})
        if not isinstance(resource, dict):
            raise FhirError(400, "invalid", f"Bundle.entry[{n}] has no resource")
        if not isinstance(request, dict) or not isinstance(entry.get("fullUrl", ""), str):
            raise FhirError(400, "invalid", f"Bundle.entry[{n}].request must be an object and fullUrl a string")
        method = str(request.get("method", "PUT" if resource.get("id") else "POST")).upper()
        url = request.get("url", "")
        if method not in ("POST", "PUT") or not isinstance(url, str):
            raise FhirError(400, "not-supported", f"Bundle.entry[{n}].request: only POST and PUT are supported")
        kind = str(resource.get("resourceType", ""))
        check_type(kind)
        check_known_type(kind)
        if url and url.split("?")[0].split("/")[0] != kind:
            raise FhirError(400, "invalid", f"Bundle.entry[{n}]: request.url does not name a {kind}")
        if method == "PUT":
            target = url.split("?")[0].split("/")[1:2] if url else [str(resource.get("id", ""))]
            if len(target) != 1:
                raise FhirError(400, "invalid", f"Bundle.entry[{n}]: a PUT needs request.url Type/id")
            check_id(target[0])
            if resource.get("id") not in (None, target[0]):
                raise FhirError(400, "invalid", f"Bundle.entry[{n}]: resource id does not match request.url")
        if not isinstance(request.get("ifNoneExist", ""), str) or not isinstance(request.get("ifMatch", ""), str):
            raise FhirError(400, "invalid", f"Bundle.entry[{n}].request.ifNoneExist and ifMatch must be strings")
        try:
            check_resource(resource)
        except FhirError as exc:
            raise FhirError(400, "invalid", f"Bundle.entry[{n}]: {exc.diagnostics}") from exc
    return entries


def _same_type(resource: dict[str, Any], resource_type: str) -> None:
    if resource.get("resourceType") != resource_type:
        raise FhirError(400, "invalid", f"body is not a {resource_type}")


class ApiTransport(httpx.BaseTransport):
    """An ``httpx`` transport that answers from a :class:`FhirApi` in-process (no socket)."""

    def __init__(self, api: FhirApi) -> None:
        self.api = api

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Adapt the request; the path is taken relative to the API's base path."""
        base_path = httpx.URL(self.api.base_url).path if self.api.base_url else ""
        path = request.url.path[len(base_path):] if request.url.path.startswith(base_path) else request.url.path
        reply = self.api.handle(request.method, path, list(request.url.params.multi_items()),
                                dict(request.headers), request.read())
        return httpx.Response(reply.status, json=reply.body, headers={"Content-Type": FHIR_JSON, **reply.headers})
