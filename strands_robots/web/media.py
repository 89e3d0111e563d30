"""Episode media endpoints shared by every page: one camera frame as JPEG and the state and
action channels as JSON columns (fields tabled in docs/review.md, "HTTP endpoints").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from strands_robots.dataset.keys import ACTION_KEY, STATE_KEY
from strands_robots.report.write import SAMPLED_FRAMES, video_problem
from strands_robots.signals import sample_indices
from strands_robots.web.context import ServerContext, json_response

#: Frames may be cached by the browser for this long (the dataset does not change under a run).
FRAME_MAX_AGE = 3600


def _column(values: np.ndarray) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in np.round(values.astype(np.float64), 6).tolist()]


def _is_vector(feature: Any) -> bool:
    return isinstance(feature, dict) and feature.get("dtype") in ("float32", "float64", "int32", "int64")


def camera_list(ctx: ServerContext, episode: int) -> list[dict[str, Any]]:
    """Cameras of ``episode``: ``index``, ``key``, ``label``, ``available``, ``problem``."""
    cameras = []
    for index, key in enumerate(ctx.dataset.camera_keys):
        problem = video_problem(ctx.dataset, episode, key)
        cameras.append(
            {
                "index": index,
                "key": key,
                "label": key.removeprefix("observation.images."),
                "available": not problem,
                "problem": problem,
            }
        )
    return cameras


def state_payload(ctx: ServerContext, episode: int) -> dict[str, Any]:
    """The body of the state endpoint (docs/review.md, "HTTP endpoints")."""
    from strands_robots.dataset.channels import channel_groups

    ds = ctx.dataset
    meta = ds.episodes[episode]
    vectors = [key for key in (STATE_KEY, ACTION_KEY) if _is_vector(ds.features.get(key))]
    columns = [*vectors, *(["timestamp"] if "timestamp" in ds.features else [])]
    frames = ds.read_frames(episode, columns) if columns else {}
    timestamps = frames.get("timestamp")
    if timestamps is None:
        timestamps = np.arange(meta.length, dtype=np.float64) / float(ds.fps)
    state = frames.get(STATE_KEY)
    channels: list[list[float | None]] = []
    names: list[str] = []
    sources: list[str] = []
    groups: list[dict[str, Any]] = []
    for key in vectors:
        values = np.asarray(frames[key]).reshape(meta.length, -1)
        declared = ds.feature_names(key)
        short = "state" if key == STATE_KEY else key
        first = len(channels)
        own_names: list[str] = []
        for c in range(values.shape[1]):
            channels.append(_column(values[:, c]))
            name = declared[c] if c < len(declared) and declared[c] else f"{short}[{c}]"
            own_names.append(name)
            names.append(name)
            sources.append(key)
        for group in channel_groups(own_names):
            groups.append(
                {
                    "label": f"{short} · {group.label}",
                    "source": key,
                    "channels": [first + c for c in group.channels],
                }
            )
    return {
        "episode": episode,
        "length": meta.length,
        "fps": ds.fps,
        "timestamps": _column(np.asarray(timestamps)),
        "names": names,
        "sources": sources,
        "groups": groups,
        "channels": channels,
        "sampled_frames": sample_indices(meta.length, SAMPLED_FRAMES),
        "has_state": state is not None,
        "keys": dict(state=STATE_KEY, action=ACTION_KEY),  # payload field names; the values are the keys
    }


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The media routes of ``ctx``'s dataset."""

    async def frame(request: Request) -> Response:
        episode = ctx.episode(request.path_params["episode"])
        camera = ctx.camera(request.path_params["camera"])
        data = await run_in_threadpool(ctx.frames.jpeg, episode, camera, request.path_params["frame"])
        return Response(data, media_type="image/jpeg", headers={"cache-control": f"private, max-age={FRAME_MAX_AGE}"})

    async def state(request: Request) -> Response:
        episode = ctx.episode(request.path_params["episode"])
        return json_response(await run_in_threadpool(state_payload, ctx, episode))

    return [
        Route("/api/episodes/{episode:index}/frames/{camera:index}/{frame:index}.jpg", frame, methods=["GET"]),
        Route("/api/episodes/{episode:index}/state", state, methods=["GET"]),
    ]
