"""A small Kubernetes API server stand-in for ``fleet status`` tests (importable as
``kube_server``): a threaded ``http.server`` on 127.0.0.1 that answers the list paths the
Kubernetes Python client calls (``GET /apis/<group>/<version>/<plural>``, with ``limit`` and
``continue`` paging), and a kubeconfig pointing at it.

Every object it serves is first validated against the pinned upstream CRD of its
apiVersion (``fleet.checks.schema.validate_manifests``: jsonschema-rs over the CRD's
openAPIV3Schema, unknown fields refused), status included: a misspelt status path fails
the test before the client ever sees it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import yaml

from fleet.checks.schema import validate_manifests
from fleet.core.manifest import Manifest

TOKEN = "test-token-not-a-secret"


def validated(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` once it is valid against its pinned CRD (else AssertionError naming why)."""
    problems = validate_manifests([Manifest("live", body, "live", "test")])
    assert problems == [], [p.line() for p in problems]
    return body


@dataclass
class World:
    """What the server holds: objects by list path, and per-path answers that are not a
    list (an HTTP status, or no answer at all)."""

    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[str, tuple[int, str]] = field(default_factory=dict)
    """path -> (HTTP status, Status message)."""
    hang: bool = False
    """Accept connections and never answer."""
    known: set[str] = field(default_factory=set)
    """List paths answered with an empty list when nothing is held there (the CRD is
    installed); any other path is a 404, as for a CRD that is not."""
    requests: list[str] = field(default_factory=list)
    on_list: Callable[[str], None] | None = None
    """Called before each list is answered (a test moves its world forward)."""

    def validate(self) -> None:
        """Check every object again (after a test changed some)."""
        for items in self.objects.values():
            for body in items:
                validated(body)

    def put(self, body: dict[str, Any], plural: str) -> None:
        """Serve ``body`` (validated first) under its kind's list path."""
        validated(body)
        self.objects.setdefault(f"/apis/{body['apiVersion']}/{plural}", []).append(body)


def _handler(world: World) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, payload: Mapping[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            world.requests.append(url.path)
            if world.hang:
                time.sleep(30)
                return
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, _status(401, "Unauthorized", "Unauthorized"))
                return
            if world.on_list is not None:
                world.on_list(url.path)
            if url.path in world.statuses:
                code, message = world.statuses[url.path]
                reason = {403: "Forbidden", 404: "NotFound"}.get(code, "InternalError")
                self._send(code, _status(code, reason, message))
                return
            if url.path not in world.objects and url.path not in world.known:
                self._send(
                    404,
                    _status(404, "NotFound", "the server could not find the requested resource"),
                )
                return
            items = world.objects.get(url.path, [])
            query = parse_qs(url.query)
            start = int(query.get("continue", ["0"])[0] or 0)
            limit = int(query.get("limit", [str(len(items) or 1)])[0])
            page = items[start : start + limit]
            rest = start + limit < len(items)
            self._send(
                200,
                {
                    "apiVersion": url.path.split("/")[2] + "/" + url.path.split("/")[3],
                    "kind": "List",
                    "metadata": {
                        "resourceVersion": "1",
                        **({"continue": str(start + limit)} if rest else {}),
                    },
                    "items": page,
                },
            )

    return Handler


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


@contextmanager
def serve(world: World) -> Iterator[str]:
    """Run the server for ``world`` on a free port of 127.0.0.1; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(world))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def kubeconfig(path: Path, contexts: Mapping[str, str]) -> Path:
    """A kubeconfig at ``path`` with one context per (name -> server URL), the first
    current, each with the test's bearer token."""
    names = list(contexts)
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": n, "cluster": {"server": url}} for n, url in contexts.items()
                ],
                "users": [{"name": "reader", "user": {"token": TOKEN}}],
                "contexts": [
                    {"name": n, "context": {"cluster": n, "user": "reader"}} for n in names
                ],
                "current-context": names[0],
            }
        )
    )
    return path
