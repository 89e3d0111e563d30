"""The review page: humans uphold or overrule disputed verdicts.

Its routes, bodies and answers are tabled in docs/review.md, "HTTP endpoints". A review is
written with :func:`strands_robots.episode_labels.review_episode` (the sidecar's lock and
journal, so a judge may run at the same time) and refused with 409 when the verdict or
judge label the page showed changed since; guarded by :mod:`strands_robots.web.security`.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from strands_robots.episode_labels import FAILURE_MODES, QUALITY_GRADES, REVIEW_DECISIONS, review_episode
from strands_robots.episode_labels.review import STAMP_KEYS, block_stamps, review_is_current
from strands_robots.report.summary import summarize
from strands_robots.report.write import SAMPLED_FRAMES
from strands_robots.signals import sample_indices
from strands_robots.web.context import RequestError, ServerContext, json_response, read_json_body
from strands_robots.web.media import camera_list
from strands_robots.web.query import BodyModel, parse_body
from strands_robots.web.review_queue import FILTERS, build_queue, next_dispute

NAV = ("Review", "/review")


def episode_payload(ctx: ServerContext, episode: int) -> dict[str, Any]:
    """The episode endpoint's body: labels, row, cameras, length, fps, tasks."""
    meta = ctx.dataset.episodes[episode]
    record = ctx.query(lambda document: copy.deepcopy(document["episodes"].get(str(episode)))) or {}
    current = review_is_current(record)
    return {
        "episode": episode,
        "length": meta.length,
        "fps": ctx.dataset.fps,
        "tasks": list(meta.tasks),
        "cameras": camera_list(ctx, episode),
        "sampled_frames": sample_indices(meta.length, SAMPLED_FRAMES),
        "row": summarize(episode, record),
        "deterministic": record.get("deterministic"),
        "judge": record.get("judge"),
        "review": record.get("review") if current else None,
        "outdated_review": record.get("review") if not current else None,
        "review_history": record.get("review_history", []),
        "stamps": block_stamps(record),
    }


_TEXT = Field(default="", description="a string")
_TEXT_OR_NULL = Field(default=None, description="a string or null")


class ReviewBody(BodyModel):
    """``POST /api/episodes/{episode}/review``'s body (the values are checked by the label library)."""

    decision: str = _TEXT
    note: str = _TEXT
    reviewer: str = _TEXT
    quality: str | None = _TEXT_OR_NULL
    failure_mode: str | None = _TEXT_OR_NULL
    verdict_seen: str | None = _TEXT_OR_NULL
    judge_seen: str | None = _TEXT_OR_NULL


def _review_fields(body: Any, default_reviewer: str) -> dict[str, Any]:
    review = parse_body(ReviewBody, body)
    missing = [name for name in STAMP_KEYS if name not in body]
    if missing:
        raise RequestError(
            f"the body has no {' or '.join(missing)}: send the stamps of the verdict and judge label the page showed "
            "(`stamps` of GET /api/episodes/{episode}; null for a block that was not there), so a review is never "
            "recorded against blocks that changed after the page loaded.",
            400,
        )
    return {
        "decision": review.decision,
        "note": review.note,
        "reviewer": review.reviewer.strip() or default_reviewer,
        "quality": review.quality or None,
        "failure_mode": review.failure_mode or None,
        "seen": {"verdict_seen": review.verdict_seen, "judge_seen": review.judge_seen},
    }


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The review page's routes."""

    async def page(request: Request) -> Response:
        config = {
            "dataset": ctx.root.name,
            "fps": ctx.dataset.fps,
            "reviewer": ctx.reviewer,
            "cameras": list(ctx.dataset.camera_keys),
            "quality_grades": list(QUALITY_GRADES),
            "failure_modes": list(FAILURE_MODES),
            "decisions": list(REVIEW_DECISIONS),
            "filters": {name: list(values) for name, (_f, values) in FILTERS.items()},
            "has_labels": ctx.has_labels(),
            "labels_file": ctx.labels_file.name,
        }
        return ctx.render(request, "review.html", config=config, page="review")

    def _queue(params: dict[str, str]) -> dict[str, Any]:
        episodes = list(ctx.dataset.episodes)
        payload = ctx.query(
            lambda document: build_queue(document, episodes, params, lambda e: ctx.dataset.episodes[e].length)
        )
        payload["has_labels"] = ctx.has_labels()
        return payload

    async def queue(request: Request) -> Response:
        return json_response(await run_in_threadpool(_queue, dict(request.query_params)))

    async def episode(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        return json_response(await run_in_threadpool(episode_payload, ctx, index))

    def _write(index: int, fields: dict[str, Any]) -> dict[str, Any]:
        record = review_episode(ctx.root, index, labels_dir=ctx.labels_dir, **fields)
        episodes = list(ctx.dataset.episodes)
        following = ctx.query(lambda document: next_dispute(document, episodes, index))
        return {
            "episode": index,
            "row": summarize(index, record),
            "review": record["review"],
            "next_dispute": following,
        }

    async def post_review(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        fields = _review_fields(await read_json_body(request), ctx.reviewer)
        return json_response(await run_in_threadpool(_write, index, fields))

    return [
        Route("/review", page, methods=["GET"]),
        Route("/api/queue", queue, methods=["GET"]),
        Route("/api/episodes/{episode:index}", episode, methods=["GET"]),
        Route("/api/episodes/{episode:index}/review", post_review, methods=["POST"]),
    ]
