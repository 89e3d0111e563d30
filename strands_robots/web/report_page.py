"""The report page: the PNG plots of ``strands-labels report``, drawn on request.

- ``GET /report[?episode=N]``: the summary plots and one episode's plot (``N``, default the
  first episode; a value that is no integer is a 400, an episode the dataset lacks a 404).
- ``GET /plots/{name}.png``: a summary plot (``name`` from
  :data:`strands_robots.report.SUMMARY_PLOTS`; anything else is 404).
- ``GET /plots/episodes/{episode}.png``: the per-episode plot.

The figures come from the same functions as the files ``write_report`` writes.
"""

from __future__ import annotations

import copy

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from strands_robots.report.figures import png_bytes
from strands_robots.report.write import SUMMARY_PLOTS, episode_plot, summary_figure
from strands_robots.web.context import RequestError, ServerContext
from strands_robots.web.query import Count, QueryModel, parse_query

NAV = ("Report", "/report")


class ReportQuery(QueryModel):
    """``GET /report``'s parameters: the ``episode`` whose plot is shown first."""

    episode: Count | None = None


def _png(data: bytes) -> Response:
    return Response(data, media_type="image/png", headers={"cache-control": "no-store"})


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The report page's routes."""

    def _summary(name: str) -> bytes:
        figure, _note = summary_figure(
            name, ctx.root, ctx.query(copy.deepcopy), labels_dir=ctx.labels_dir, episodes=list(ctx.dataset.episodes)
        )
        return png_bytes(figure)

    def _episode(episode: int) -> bytes:
        record = ctx.query(lambda document: copy.deepcopy(document["episodes"].get(str(episode))))
        return png_bytes(episode_plot(ctx.dataset, episode, record)[0])

    async def page(request: Request) -> Response:
        episodes = list(ctx.dataset.episodes)
        asked = parse_query(ReportQuery, request.query_params).episode
        chosen = ctx.episode(asked) if asked is not None else (episodes[0] if episodes else None)
        return ctx.render(
            request,
            "report.html",
            plots=[(name, name.replace("_", " ").capitalize()) for name in SUMMARY_PLOTS],  # "Judge vs human"
            episodes=episodes[:5000],
            chosen=chosen,
            has_labels=ctx.has_labels(),
            page="report",
            config={"page": "report"},
        )

    async def summary(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in SUMMARY_PLOTS:
            raise RequestError(f"no plot named {name!r}; plots: {', '.join(SUMMARY_PLOTS)}.", 404)
        return _png(await run_in_threadpool(_summary, name))

    async def episode(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        return _png(await run_in_threadpool(_episode, index))

    return [
        Route("/report", page, methods=["GET"]),
        Route("/plots/episodes/{episode:index}.png", episode, methods=["GET"]),
        Route("/plots/{name:str}.png", summary, methods=["GET"]),
    ]
