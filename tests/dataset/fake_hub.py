"""A local stand-in for the Hugging Face Hub over loopback: the endpoints ``huggingface_hub`` calls.

``snapshot_download`` / ``hf_hub_download`` with ``HF_ENDPOINT=http://127.0.0.1:PORT`` ask for

- ``GET /api/datasets/OWNER/NAME[/revision/REV]``: the repo info (its commit ``sha``, ``siblings``);
- ``GET /api/datasets/OWNER/NAME/tree/REV[/PATH]?recursive=...``: the file listing;
- ``POST /api/datasets/OWNER/NAME/paths-info/REV``: the listing of some paths;
- ``HEAD`` / ``GET /datasets/OWNER/NAME/resolve/REV/PATH``: one file (``X-Repo-Commit``,
  ``ETag`` = the git blob id, ``Content-Length``; ``Range`` honoured).

Repos are directories (copies of the shared datasets). Every request is recorded, so a
test can count what was downloaded. Unknown repos and revisions answer 404 with the
``X-Error-Code`` the Hub sends (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (the Hub's ``oid`` and ``ETag`` of a non-LFS file)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHub:
    """A threaded HTTP server on 127.0.0.1 serving ``repos`` (``{"owner/name": directory}``).

    Attributes:
        endpoint: ``http://127.0.0.1:PORT`` (set ``HF_ENDPOINT`` to it).
        requests: ``(method, path)`` of every request, in order (path without the query).
        revisions: Revisions every repo has (``main`` and each repo's commit sha).
    """

    def __init__(self, repos: dict[str, Path], revisions: tuple[str, ...] = ("main",)) -> None:
        self.repos = {name: Path(path) for name, path in repos.items()}
        self.shas = {name: hashlib.sha1(name.encode()).hexdigest() for name in self.repos}
        self.revisions = revisions
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                hub._handle(self, "GET")

            def do_HEAD(self) -> None:
                hub._handle(self, "HEAD")

            def do_POST(self) -> None:
                hub._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # what the tests read
    def downloads(self) -> list[str]:
        """Repo paths fetched with GET .../resolve/... (``data/chunk-000/episode_000003.parquet``)."""
        out = []
        for method, path in self.requests:
            found = re.fullmatch(r"/datasets/[^/]+/[^/]+/resolve/[^/]+/(.+)", path)
            if method == "GET" and found:
                out.append(unquote(found.group(1)))
        return out

    # serving
    def _files(self, repo: str) -> list[str]:
        root = self.repos[repo]
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    def _entry(self, repo: str, path: str) -> dict[str, object]:
        target = self.repos[repo] / path
        if target.is_dir():
            return {"type": "directory", "oid": blob_id(path.encode()), "size": 0, "path": path}
        data = target.read_bytes()
        return {"type": "file", "oid": blob_id(data), "size": len(data), "path": path}

    def _handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(request.path)
        path = url.path
        with self._lock:
            self.requests.append((method, path))
        api = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/(revision|tree|paths-info)/([^/]+)(/.*)?)?", path)
        resolve = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        match = api or resolve
        if match is None:
            return self._error(request, 404, "EntryNotFound", f"no route {path}")
        repo = unquote(match.group(1))
        if repo not in self.repos:
            return self._error(request, 404, "RepoNotFound", f"Repository {repo} not found")
        revision = unquote((api.group(3) if api else resolve.group(2)) or "main")
        if revision not in (*self.revisions, self.shas[repo]):
            return self._error(request, 404, "RevisionNotFound", f"Invalid rev id: {revision}")
        if api and api.group(2) in (None, "revision"):
            info = {
                "id": repo,
                "sha": self.shas[repo],
                "private": False,
                "siblings": [{"rfilename": f} for f in self._files(repo)],
            }
            return self._json(request, info)
        if api and api.group(2) == "tree":
            under = unquote(api.group(4) or "").strip("/")
            recursive = parse_qs(url.query).get("recursive", ["false"])[0].lower() == "true"
            base = self.repos[repo] / under if under else self.repos[repo]
            children = base.rglob("*") if recursive else base.iterdir()
            entries = [self._entry(repo, p.relative_to(self.repos[repo]).as_posix()) for p in sorted(children)]
            return self._json(request, entries)
        if api and api.group(2) == "paths-info":
            length = int(request.headers.get("Content-Length") or 0)
            body = request.rfile.read(length).decode()
            form = parse_qs(body)
            paths = form.get("paths") or (json.loads(body).get("paths", []) if body.startswith("{") else [])
            entries = [self._entry(repo, p) for p in paths if (self.repos[repo] / p).exists()]
            return self._json(request, entries)
        file = unquote(resolve.group(3))
        target = self.repos[repo] / file
        if not target.is_file():
            return self._error(request, 404, "EntryNotFound", f"{file} does not exist on {revision}")
        data = target.read_bytes()
        status, body = 200, data
        ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", request.headers.get("Range") or "")
        if ranged and method == "GET":
            start = int(ranged.group(1))
            end = int(ranged.group(2)) if ranged.group(2) else len(data) - 1
            status, body = 206, data[start : end + 1]
        request.send_response(status)
        request.send_header("X-Repo-Commit", self.shas[repo])
        request.send_header("ETag", f'"{blob_id(data)}"')
        request.send_header("Content-Length", str(len(body) if method == "GET" else len(data)))
        request.send_header("Content-Type", "application/octet-stream")
        if status == 206:
            request.send_header("Content-Range", f"bytes {start}-{start + len(body) - 1}/{len(data)}")
        request.end_headers()
        if method == "GET":
            request.wfile.write(body)

    def _json(self, request: BaseHTTPRequestHandler, value: object) -> None:
        data = json.dumps(value).encode()
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(data)

    def _error(self, request: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
        data = json.dumps({"error": message}).encode()
        request.send_response(status)
        request.send_header("X-Error-Code", code)
        request.send_header("X-Error-Message", message)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(data)
