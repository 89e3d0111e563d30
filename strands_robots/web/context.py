"""What every page of the label server shares: the dataset, the guard, templates, responses.

One :class:`ServerContext` per server run. The dataset root and the labels directory
are fixed when the server starts; requests only name an ``episode_index``, which
:meth:`ServerContext.episode` checks against the server's own dataset.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from strands_robots.dataset import Dataset
from strands_robots.dataset.keys import STATE_KEY
from strands_robots.episode_labels.document import labels_path, query_document
from strands_robots.errors import LabelsError, LabelsNotFoundError, bounded_message
from strands_robots.storage.codec import surrogate_at
from strands_robots.web.frames import FrameCache
from strands_robots.web.security import Guard

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"
#: Largest request body accepted, bytes (a review note is at most 10,000 characters).
MAX_BODY_BYTES = 64 << 10
#: Deepest nesting of arrays and objects a request body may have (a segment save needs 4).
MAX_BODY_DEPTH = 32
_TOO_DEEP = (
    f"the body nests arrays or objects more than {MAX_BODY_DEPTH} levels deep; send the flat JSON the page sends."
)


class IndexConvertor(Convertor[int]):
    """``{name:index}`` in a route: a whole number of at most 100 digits.

    Starlette's ``int`` converts any run of digits and ``int()`` raises past 4,300 digits (a
    500). Up to 100 digits the number reaches the route, whose index check names it (past
    int64: not in this dataset); a longer run matches no route and gets the JSON 404 of an
    unknown resource.
    """

    regex = "[0-9]{1,100}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(int(value))


register_url_convertor("index", IndexConvertor())


class RequestError(LabelsError):
    """A request the server refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.http_status = status


@dataclass(frozen=True)
class NavItem:
    """A page in the header navigation."""

    title: str
    path: str


@dataclass
class ServerContext:
    """State of one server run (shared by every route module).

    Attributes:
        root: Dataset root (absolute).
        labels_dir: Directory of the sidecars (None: the root).
        dataset: The open dataset.
        guard: Host/origin/token checks of this run.
        reviewer: Default reviewer name for reviews.
        frames: JPEG frame cache.
        templates: Jinja2 templates of ``web/templates``.
        nav: Header navigation entries (one per page module).
        cohort: Template set the segment page opens with (a label set passed to
            :func:`~strands_robots.web.app.create_app`; None: the built-in default).
    """

    root: Path
    labels_dir: Path | None
    dataset: Dataset
    guard: Guard
    reviewer: str
    frames: FrameCache
    templates: Jinja2Templates = field(default_factory=lambda: Jinja2Templates(directory=str(TEMPLATES_DIR)))
    nav: list[NavItem] = field(default_factory=list)
    cohort: str | None = None

    @property
    def labels_file(self) -> Path:
        """``episode_labels.json`` of this dataset."""
        return labels_path(self.root, labels_dir=self.labels_dir)

    def query(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        """``fn(document)`` under the sidecar lock; an empty document when there is no sidecar yet.

        ``fn`` must not mutate the document (it is the store's cached copy).
        """
        try:
            return query_document(self.root, fn, self.labels_dir)
        except LabelsNotFoundError:  # a missing labels_dir (RootNotFoundError) is reported, not shown as empty
            return fn({"schema_version": 1, "benchmark": "", "episodes": {}})

    def has_labels(self) -> bool:
        """True when the sidecar (or its journal) exists."""
        path = self.labels_file
        from strands_robots.storage.side_files import journal_path

        return path.exists() or journal_path(path).exists()

    def episode(self, episode: int) -> int:
        """``episode`` when it is one of the dataset's ``episode_index`` values.

        Raises:
            RequestError: 404 otherwise.
        """
        if episode not in self.dataset.episodes:
            raise RequestError(f"episode {episode} is not in this dataset.", 404)
        return episode

    def camera(self, index: int) -> str:
        """The camera key at position ``index`` of ``dataset.camera_keys`` (404 otherwise)."""
        keys = self.dataset.camera_keys
        if not 0 <= index < len(keys):
            raise RequestError(f"camera {index} does not exist; this dataset has {len(keys)} camera(s).", 404)
        return keys[index]

    def render(self, request: Request, template: str, **context: Any) -> Response:
        """A page of ``templates/`` with the token, navigation, dataset name and state key filled in."""
        response = self.templates.TemplateResponse(
            request,
            template,
            {
                "token": self.guard.token,
                "nav": self.nav,
                "dataset_name": self.root.name,
                "dataset": self.dataset,
                "state_key": STATE_KEY,
                **context,
            },
        )
        response.headers["cache-control"] = "no-store"
        return response


def next_after(episodes: list[int], after: int) -> int | None:
    """The first of ``episodes`` (in their order) after ``after``, wrapping around to the first;
    None when there is no other (the page's "next" of a list)."""
    others = [e for e in episodes if e != after]
    return next((e for e in others if e > after), others[0] if others else None)


def json_response(data: Any, status: int = 200) -> Response:
    """JSON (NaN refused) that is never cached."""
    body = json.dumps(data, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, media_type="application/json", headers={"cache-control": "no-store"})


def error_status(exc: BaseException) -> int:
    """HTTP status for an error raised while answering a request."""
    if isinstance(exc, LabelsError):
        return exc.http_status  # each error class carries its status (strands_robots.errors)
    if isinstance(exc, FileNotFoundError):
        return LabelsNotFoundError.http_status
    return 500


def error_response(exc: BaseException) -> Response:
    """``{"error": message}`` with the status of :func:`error_status`."""
    return json_response({"error": bounded_message(exc)}, error_status(exc))


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether JSON data nests arrays/objects more than ``limit`` levels deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


async def read_json_body(request: Request) -> Any:
    """The request's JSON body (at most :data:`MAX_BODY_BYTES`).

    Raises:
        RequestError: 413 for a larger body, 400 for invalid JSON, nesting deeper than
            :data:`MAX_BODY_DEPTH`, or text that is not valid Unicode (a lone surrogate escape).
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise RequestError(f"request body larger than {MAX_BODY_BYTES} bytes.", 413)
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(f"the body is not UTF-8 JSON ({bounded_message(exc, 300)}).", 400) from exc
    except RecursionError:  # deeper than the parser recurses: far past MAX_BODY_DEPTH
        raise RequestError(_TOO_DEEP, 400) from None
    if _depth_exceeds(body, MAX_BODY_DEPTH):
        raise RequestError(_TOO_DEEP, 400)
    where = surrogate_at(body)
    if where is not None:  # "\ud800" is valid JSON but no text: it could be neither stored nor answered
        raise RequestError(
            f"the text at {where} of the body is not valid Unicode (a lone surrogate escape such as \\ud800); "
            "send text only.",
            400,
        )
    return body
