"""``create_app``: the local label server, one Starlette app for several pages.

Each module in :data:`ROUTE_MODULES` exposes ``routes(ctx) -> list[BaseRoute]`` and,
when it is a page, ``NAV = (title, path)`` for the header. Adding a page (the segment
annotation tool) is one module and one entry here; it gets the guard, the
dataset, the frame and state endpoints of :mod:`strands_robots.web.media` and the base
template for free.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from strands_robots.dataset import open_dataset
from strands_robots.episode_labels.review import default_reviewer
from strands_robots.errors import LabelsError, bounded_message, quoted
from strands_robots.web.context import STATIC_DIR, NavItem, ServerContext, error_response, json_response
from strands_robots.web.frames import FrameCache
from strands_robots.web.security import Guard, GuardMiddleware

log = logging.getLogger(__name__)

#: Route modules, in navigation order.
ROUTE_MODULES: tuple[str, ...] = (
    "strands_robots.web.media",
    "strands_robots.web.review",
    "strands_robots.web.segment",
    "strands_robots.web.report_page",
)


async def _labels_error(request: Request, exc: Exception) -> Response:
    return error_response(exc)


async def _not_found(request: Request, exc: Exception) -> Response:
    """404s of the JSON API are JSON like its other errors (e.g. ``/api/episodes/abc``)."""
    if request.url.path.startswith("/api/"):
        return json_response({"error": f"no such resource: {quoted(request.url.path)}"}, 404)
    return PlainTextResponse("Not Found", status_code=404)


def create_app(
    root: str | Path,
    *,
    labels_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    reviewer: str | None = None,
    modules: Sequence[str] = ROUTE_MODULES,
    label_sets: Sequence[str | Path] = (),
) -> Starlette:
    """Build the server app for one dataset.

    Args:
        root: Dataset root; opened once here (the only root the server ever uses).
        labels_dir: Directory of the sidecars (default ``root``).
        host: The address the server is bound to (for the Host/Origin checks).
        port: The bound port (the real one, not 0).
        token: Per-run token (default: a fresh random one).
        reviewer: Default reviewer name (default: the OS user).
        modules: Route modules to mount.
        label_sets: Files of label sets of your own (docs/segments.md, "Label sets of
            your own"), registered as template sets; the segment page opens with the first.

    Returns:
        The Starlette app; ``app.state.ctx`` is its :class:`ServerContext`.

    Raises:
        DatasetError: ``root`` is not a readable LeRobot dataset.
        LabelValidationError: a label set file is unreadable or malformed.
    """
    cohorts = []
    if label_sets:
        from strands_robots.segments.label_sets import load_label_set, register_label_set

        loaded = [load_label_set(path) for path in label_sets]  # every file checked before any is registered
        cohorts = [register_label_set(label_set).name for label_set in loaded]
    root = Path(root).expanduser().resolve()
    dataset = open_dataset(root)
    ctx = ServerContext(
        root=root,
        labels_dir=None if labels_dir is None else Path(labels_dir).expanduser().resolve(),
        dataset=dataset,
        guard=Guard.for_address(host, port, token),
        reviewer=reviewer or default_reviewer(),
        frames=FrameCache(dataset),
        cohort=cohorts[0] if cohorts else None,
    )
    routes: list[BaseRoute] = []
    for name in modules:
        module: Any = importlib.import_module(name)
        routes.extend(module.routes(ctx))
        if getattr(module, "NAV", None):
            ctx.nav.append(NavItem(*module.NAV))
    home = ctx.nav[0].path if ctx.nav else "/static/style.css"
    routes.insert(0, Route("/", lambda request: RedirectResponse(home, status_code=307), methods=["GET"]))
    routes.append(Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        _flush(ctx)

    app = Starlette(
        routes=routes,
        middleware=[Middleware(GuardMiddleware, guard=ctx.guard)],
        exception_handlers={LabelsError: _labels_error, FileNotFoundError: _labels_error, 404: _not_found},
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    return app


def _flush(ctx: ServerContext) -> None:
    """Fold the labels and segments journals into their canonical files on shutdown (as the CLI does)."""
    from strands_robots.episode_labels.document import open_store as open_labels_store
    from strands_robots.segments.store import open_store as open_segments

    openers = [open_segments]
    if ctx.has_labels():
        openers.append(open_labels_store)
    for open_store in openers:
        try:  # a sidecar the pages refused (a link at its name) is refused here too: reported, never fatal
            store = open_store(ctx.root, ctx.labels_dir)
            if store.exists():
                store.flush()
        except LabelsError as exc:
            log.warning("could not fold the journal on shutdown: %s", bounded_message(exc))
