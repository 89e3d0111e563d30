"""NAVIGATE segments prefilled from the robot base motion (docs/segments.md, "Label pool, reference
examples, prefill").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from strands_robots.errors import DatasetError
from strands_robots.segments.convert import check_seconds
from strands_robots.segments.episodes import episode_facts, episode_index, open_dataset_if_present
from strands_robots.segments.motion import DEFAULT_THRESHOLD, base_speed, check_threshold, moving_intervals, smooth

_VELOCITY_WORDS = re.compile(r"vel|motion|twist|speed")


def _names_base_velocity(name: str) -> bool:
    return "base" in name.lower() and _VELOCITY_WORDS.search(name.lower()) is not None


def _numeric(spec: Any) -> bool:
    return isinstance(spec, dict) and str(spec.get("dtype", "")).startswith(("float", "int"))


def _numeric_features(dataset: Any) -> list[str]:
    return sorted(k for k, v in (getattr(dataset, "features", {}) or {}).items() if _numeric(v))


def find_base_velocity_feature(features: dict[str, Any]) -> tuple[str, list[int] | None] | None:
    """The dataset's base-velocity feature as ``(column, dims)`` (``dims`` None = whole column), or None.

    A feature key naming the base and a velocity (``observation.base_velocity``,
    ``action.base_motion``) wins, observations before actions; otherwise the components
    of a vector feature whose names do (``base_vel_x``, ``base_vel_y``).
    """
    from strands_robots.dataset.info import feature_names  # the dataset reader's names rule, on use

    keys = sorted((k for k in features if _numeric(features[k])), key=lambda k: (not k.startswith("observation"), k))
    if whole := next((key for key in keys if _names_base_velocity(key)), None):
        return whole, None
    for key in keys:
        if dims := [i for i, n in enumerate(feature_names(features[key])) if _names_base_velocity(n)]:
            return key, dims
    return None


def _resolve_dims(features: dict[str, Any], column: str, dims: Sequence[int | str] | None) -> list[int] | None:
    from strands_robots.dataset.info import feature_names

    if dims is None:
        return None
    names = list(feature_names(features.get(column)))
    if unknown := [d for d in dims if isinstance(d, str) and d not in names]:
        raise DatasetError(f"{column} has no component named {unknown[0]!r}; its names are {names}.")
    return [names.index(d) if isinstance(d, str) else int(d) for d in dims]


def episode_base_velocity(
    root: str | Path,
    episode: int,
    feature: str | None = None,
    *,
    dims: Sequence[int | str] | None = None,
    dataset: Any | None = None,
) -> np.ndarray | None:
    """One episode's base velocity, shape ``(length,)`` or ``(length, dims)``; None without such a feature.

    Args:
        feature: Column to read; default the one :func:`find_base_velocity_feature` finds.
        dims: Components of a vector column (indices or names); default all.

    Raises:
        DatasetError: ``feature`` is not a column of the dataset, or a bad component name.
    """
    episode = episode_index(episode)
    if dataset is None and (dataset := open_dataset_if_present(root)) is None:
        return None
    features = dict(getattr(dataset, "features", {}) or {})
    if feature is None:
        found = find_base_velocity_feature(features)
        if found is None:
            return None
        feature, auto_dims = found
        dims = auto_dims if dims is None else dims
    elif feature not in features:
        raise DatasetError(f"the dataset has no feature {feature!r}; numeric features: {_numeric_features(dataset)}.")
    values = np.asarray(dataset.read_frames(episode, columns=[feature])[feature], dtype=float)
    index = _resolve_dims(features, feature, dims)
    if index is not None:
        values = values.reshape(values.shape[0], -1)[:, index]
    return values


def prefill_navigate(
    root: str | Path,
    episode: int,
    feature: str | None = None,
    *,
    dims: Sequence[int | str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    smooth_s: float = 0.5,
    min_duration_s: float = 0.5,
    dataset: Any | None = None,
) -> list[dict[str, Any]]:
    """Prefilled segments covering the episode: NAVIGATE where the base moves, empty elsewhere.

    Args:
        root: Dataset root.
        episode: Real ``episode_index``.
        feature: Base-velocity column (e.g. ``observation.base_velocity``); default the
            one :func:`find_base_velocity_feature` finds.
        dims: Components of a vector column (indices or names).
        threshold: Speed in the feature's units above which the base moves (positive).
        smooth_s: Moving-median window in seconds (0 or more).
        min_duration_s: Drives and stops shorter than this are merged away (seconds, 0 or more).

    Returns:
        ``[{"start", "end", "template_id": "N1" | None, "label": None, "slots": {},
        "prefill": "base_motion" | None}]`` in frames, half-open, covering
        ``0..length``. N1 segments still need their destination; the others their template.

    Raises:
        DatasetError: no metadata, or no base-velocity feature (names the numeric features).
        EpisodeNotFoundError: no such episode.
        LabelValidationError: a threshold that is not a positive number, or a negative,
            NaN or non-numeric ``smooth_s``/``min_duration_s``.
    """
    threshold = check_threshold(threshold, "threshold")
    smooth_s = check_seconds(smooth_s, "smooth_s")
    min_duration_s = check_seconds(min_duration_s, "min_duration_s")

    if dataset is None and (dataset := open_dataset_if_present(root)) is None:
        raise DatasetError(f"{root} has no meta/info.json; the base motion is read from a LeRobot dataset.")
    facts = episode_facts(root, episode, dataset=dataset)
    values = episode_base_velocity(root, facts.episode_index, feature, dims=dims, dataset=dataset)
    if values is None:
        raise DatasetError(
            "no base-velocity feature found (a key or component name with 'base' and 'vel'/'motion'); pass "
            f"feature=... (CLI: --feature NAME; numeric features: {_numeric_features(dataset)})."
        )
    fps = facts.fps or 30.0
    speed = smooth(base_speed(values, facts.length), max(1, round(smooth_s * fps)))
    moving = np.nan_to_num(speed, nan=0.0) > threshold
    runs = moving_intervals(moving, max(1, round(min_duration_s * fps)))
    return covering(facts.length, runs)


def covering(length: int, runs: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """Segments covering ``0..length``: ``runs`` as N1 prefills, the frames between as empty segments."""
    drives = set(runs)
    cuts = sorted({0, length, *itertools.chain.from_iterable(runs)})
    return [
        {"start": start, "end": end, "template_id": None, "label": None, "slots": {}, "prefill": None}
        | ({"template_id": "N1", "prefill": "base_motion"} if (start, end) in drives else {})
        for start, end in itertools.pairwise(cuts)
    ]
