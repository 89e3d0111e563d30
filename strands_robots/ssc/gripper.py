"""Per-arm gripper open/close events and the gripper channels of a dataset (paper ``001``,
Sec. 4.2 and Appendix E; docs/ssc.md, "Gripper events": the command and position
detectors, the relative swing, the idle-hand rule of ``value_range``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from strands_robots.dataset.keys import ACTION_KEY, STATE_KEY
from strands_robots.errors import LabelValidationError
from strands_robots.ssc.records import HANDS, GripperEvent, GripperKind, Hand

#: Position mode, relative threshold: the swing (fraction of the range) that makes an event.
DEFAULT_SWING = 0.3
#: Position mode, relative threshold: an event is dated where the value is within this
#: fraction of its swing from the closed end (arrival on / departure from the closed plateau).
SETTLE = 0.1
#: Position mode, fixed ``threshold``: half-width of the band around it (fraction of the range).
DEFAULT_HYSTERESIS = 0.1
#: A position channel whose range is below this fraction of its magnitude never moved.
DEFAULT_MIN_RANGE_FRACTION = 0.05
#: With ``value_range``: an episode whose channel range is below this fraction of the
#: channel's range across the dataset is an idle hand (no events).
DEFAULT_IDLE_FRACTION = 0.2


def detect_gripper_events(
    values: Iterable[float] | np.ndarray,
    *,
    arm: str,
    mode: Literal["command", "position"] = "command",
    threshold: float | None = None,
    hysteresis: float | None = None,
    open_is_high: bool = True,
    min_range: float | None = None,
    value_range: tuple[float, float] | None = None,
) -> list[GripperEvent]:
    """Open/close events of one arm's gripper channel.

    Args:
        values: One value per frame (shape ``(frames,)``), frame ``i`` = ``frame_index`` i.
            NaN and infinite samples are skipped (the state holds).
        arm: ``"left"`` or ``"right"``.
        mode: ``"command"`` (sign flips between non-zero commands) or ``"position"``
            (threshold with hysteresis).
        threshold: Command mode: dead band, values with ``|v| <= threshold`` count as zero
            (default 0). Position mode: a fixed open/closed boundary in channel units;
            None (default) uses the relative threshold (see ``hysteresis``).
        hysteresis: Position mode, as a fraction of the channel's range. Relative
            threshold (default): the swing away from the last turning point that makes an
            event (default 0.3). Fixed ``threshold``: half-width of the band around it
            (default 0.1); the state changes only when the value leaves the band.
        open_is_high: Whether larger values mean more open (LeRobot ``gripper.pos``:
            yes) or, in command mode, whether a positive command opens.
        min_range: Position mode: a channel whose range (max - min) in this episode is
            below this never moved and yields no events (default: 5% of its largest
            magnitude, and with ``value_range`` at least 20% of that range).
        value_range: Position mode: ``(min, max)`` of the channel across the whole dataset
            (see :func:`channel_range`); an episode moving less than
            :data:`DEFAULT_IDLE_FRACTION` of it is idle (unless ``min_range`` is given).
            Default None: only the episode's own values are known.

    Returns:
        Events in frame order; an event's ``frame`` is the first frame in the new state.
        The initial state produces no event.

    Raises:
        LabelValidationError: bad ``arm``/``mode``, values not 1-D numbers, negative
            threshold, hysteresis or min_range, a ``value_range`` that is not two finite
            numbers ``min <= max``.
    """
    if arm not in HANDS:
        raise LabelValidationError(f"arm must be 'left' or 'right', got {arm!r}.")
    if mode not in ("command", "position"):
        raise LabelValidationError(f"mode must be 'command' or 'position', got {mode!r}.")
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise LabelValidationError(f"gripper values must be numbers ({exc}); pass one value per frame.") from exc
    if x.ndim != 1:
        raise LabelValidationError(
            f"gripper values must be 1-D (one value per frame), got shape {x.shape}; select the gripper column."
        )
    x = np.where(np.isfinite(x), x, np.nan)  # an infinite sample is no reading either
    threshold, hysteresis, min_range = _check_levels(mode, threshold, hysteresis, min_range)
    value_range = _check_range(value_range)
    hand = cast(Hand, arm)
    if mode == "command":
        dead = threshold or 0.0
        finite = x[np.isfinite(x)]
        if finite.size and not (np.any(finite > dead) and np.any(finite < -dead)):
            warnings.warn(
                "the channel never changes sign, so command mode finds no events; it looks like a gripper "
                "position channel (LeRobot's gripper.pos): use mode='position' (CLI: --mode position).",
                stacklevel=2,
            )
        opens = np.sign(np.where(np.abs(np.nan_to_num(x, nan=0.0)) > dead, x, 0.0))  # NaN: no command
        return _flip_events(opens if open_is_high else -opens, x, hand)
    return _position_events(x, hand, threshold, hysteresis, open_is_high, min_range, value_range)


def _check_levels(
    mode: str, threshold: Any, hysteresis: Any, min_range: Any
) -> tuple[float | None, float | None, float | None]:
    """``threshold`` (a level in position mode, a dead band >= 0 in command mode),
    ``hysteresis`` and ``min_range`` (>= 0) as finite floats, or None when not given
    (the limits of :mod:`strands_robots.arguments`)."""
    from strands_robots.arguments import ANY_NUMBER, NON_NEGATIVE, number_argument, number_refusal

    level = NON_NEGATIVE if mode == "command" else ANY_NUMBER
    checked = []
    for name, value, limits, remedy in (
        ("threshold", threshold, level, "pass the dead band (command mode) or the open/closed level (position mode)."),
        ("hysteresis", hysteresis, NON_NEGATIVE, "pass a share of the channel's range, e.g. 0.3."),
        (
            "min_range",
            min_range,
            NON_NEGATIVE,
            "pass the smallest range, in the channel's units, that counts as moving.",
        ),
    ):
        checked.append(None if value is None else number_argument(value, number_refusal(name, limits, remedy), limits))
    return checked[0], checked[1], checked[2]


def moved(
    lo: float, hi: float, *, min_range: float | None = None, value_range: tuple[float, float] | None = None
) -> bool:
    """Whether a position channel spanning ``[lo, hi]`` in one episode moved at all (else it
    yields no events): its span reaches ``min_range``, by default
    :data:`DEFAULT_MIN_RANGE_FRACTION` of its magnitude and :data:`DEFAULT_IDLE_FRACTION` of
    ``value_range`` (docs/ssc.md, "Gripper events")."""
    floor = min_range
    if floor is None:
        floor = DEFAULT_MIN_RANGE_FRACTION * max(abs(lo), abs(hi))
        if value_range is not None:
            floor = max(floor, DEFAULT_IDLE_FRACTION * (value_range[1] - value_range[0]))
    span = hi - lo
    return span > 0 and span >= floor


def _check_range(value_range: Any) -> tuple[float, float] | None:
    if value_range is None:
        return None
    try:
        lo, hi = (float(v) for v in value_range)
    except (TypeError, ValueError) as exc:
        raise LabelValidationError(
            f"value_range must be (min, max) of the channel across the dataset, got {value_range!r}."
        ) from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise LabelValidationError(f"value_range must be two finite numbers min <= max, got {value_range!r}.")
    return lo, hi


def _flip_events(side: np.ndarray, x: np.ndarray, arm: Hand) -> list[GripperEvent]:
    """An event at each sample whose side (+1 open, -1 closed, 0 neither: a command in the dead
    band, a position inside the hysteresis band, NaN) differs from the last non-zero one."""
    live = np.flatnonzero(side)
    flips = live[1:][side[live[1:]] != side[live[:-1]]]
    return [
        GripperEvent(frame=int(i), arm=arm, kind="open" if side[i] > 0 else "close", value=float(x[i])) for i in flips
    ]


def _position_events(
    x: np.ndarray,
    arm: Hand,
    threshold: float | None,
    hysteresis: float | None,
    open_is_high: bool,
    min_range: float | None,
    value_range: tuple[float, float] | None = None,
) -> list[GripperEvent]:
    finite = x[~np.isnan(x)]
    if finite.size == 0:
        return []
    lo, hi = float(finite.min()), float(finite.max())
    if not moved(lo, hi, min_range=min_range, value_range=value_range):
        return []
    span = hi - lo
    y = x if open_is_high else -x
    if threshold is None:
        return _swing_events(x, y, arm, (DEFAULT_SWING if hysteresis is None else hysteresis) * span)
    mid = threshold if open_is_high else -threshold
    band = (DEFAULT_HYSTERESIS if hysteresis is None else hysteresis) * span
    side = np.where(y >= mid + band, 1, np.where(y <= mid - band, -1, 0))  # NaN compares as neither
    first = int(np.flatnonzero(~np.isnan(y))[0])
    side[first] = 1 if y[first] >= mid else -1  # the initial state, which is no event
    return _flip_events(side, x, arm)


def _swing_events(x: np.ndarray, y: np.ndarray, arm: Hand, band: float) -> list[GripperEvent]:
    """Relative threshold: a move of ``band`` away from the last turning point is an event.

    ``y`` grows with opening: the running maximum is tracked while opening (or before the
    first move), the running minimum while closing. Dating on the closed plateau
    (:data:`SETTLE`): docs/ssc.md, "Gripper events".
    """
    turns: list[tuple[int, float]] = []  # turning points (frame, y), alternating
    kinds: list[GripperKind] = []
    direction = 0  # +1 opening, -1 closing, 0 before the first move
    top_i = bottom_i = int(np.flatnonzero(~np.isnan(y))[0])  # _position_events: y has a finite sample
    top = bottom = float(y[top_i])
    for i, v in enumerate(y):
        if math.isnan(v):
            continue
        if direction >= 0 and v > top:
            top, top_i = v, i
        if direction <= 0 and v < bottom:
            bottom, bottom_i = v, i
        if direction >= 0 and v <= top - band:
            turns.append((top_i, top))
            kinds.append("close")
            direction, bottom, bottom_i = -1, v, i
        elif direction <= 0 and v >= bottom + band:
            turns.append((bottom_i, bottom))
            kinds.append("open")
            direction, top, top_i = 1, v, i
    if direction > 0:
        turns.append((top_i, top))
    elif direction < 0:
        turns.append((bottom_i, bottom))
    events: list[GripperEvent] = []
    for k, kind in enumerate(kinds):
        (f0, y0), (f1, y1) = turns[k], turns[k + 1]
        low = min(y0, y1)
        near = low + SETTLE * abs(y1 - y0)
        seg = range(f0, f1 + 1)
        if kind == "close":
            frame = next(f for f in seg if not math.isnan(y[f]) and y[f] <= near)
        else:  # the first sample after the last closed one (the rise's top is never closed)
            last_closed = max(f for f in seg if not math.isnan(y[f]) and y[f] <= near)
            frame = next(f for f in seg if f > last_closed and not math.isnan(y[f]))
        events.append(GripperEvent(frame=frame, arm=arm, kind=kind, value=float(x[frame])))
    return events


@dataclass(frozen=True)
class GripperChannel:
    """Where one arm's gripper lives: a feature and the index of its component."""

    arm: str
    feature: str
    index: int
    name: str


def find_gripper_channels(
    features: Mapping[str, Any],
    *,
    prefer: Sequence[str] = (STATE_KEY, ACTION_KEY),
    single_arm: str = "right",
) -> dict[str, GripperChannel]:
    """Find each arm's gripper component by name in a dataset's ``features``.

    A component whose name contains ``gripper`` is a gripper; ``left``/``right`` in the
    name picks the arm; a single gripper without a side is assigned to ``single_arm``.
    Features are searched in ``prefer`` order (positions in ``observation.state`` first).

    Args:
        features: ``info.json`` ``features`` (feature key -> dict with ``names``).
        prefer: Feature keys to search, in order.
        single_arm: Arm of a sideless gripper.

    Returns:
        ``{"left": GripperChannel, "right": GripperChannel}`` with the arms found (empty
        when the dataset has no gripper channel).
    """
    from strands_robots.dataset.info import feature_names  # the dataset's one reading of a feature's names

    for key in prefer:
        spec = features.get(key)
        if not isinstance(spec, Mapping):
            continue
        names = feature_names(dict(spec))
        found: dict[str, GripperChannel] = {}
        sideless: list[tuple[int, str]] = []
        for i, name in enumerate(names):
            low = name.lower()
            if "gripper" not in low:
                continue
            side = next((hand for hand in HANDS if hand in low), None)
            if side is not None:
                found.setdefault(side, GripperChannel(side, key, i, name))
            else:
                sideless.append((i, name))
        if not found and len(sideless) == 1:
            i, name = sideless[0]
            found[single_arm] = GripperChannel(single_arm, key, i, name)
        if found:
            return found
    return {}


def events_for_channels(
    columns: Mapping[str, np.ndarray],
    channels: Mapping[str, GripperChannel],
    *,
    mode: Literal["command", "position"] = "position",
    threshold: float | None = None,
    hysteresis: float | None = None,
    open_is_high: bool = True,
    min_range: float | None = None,
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> list[GripperEvent]:
    """Events of every arm, merged in frame order.

    Args:
        columns: Feature key -> array of shape ``(frames, dims)`` (``read_frames`` output).
        channels: Output of :func:`find_gripper_channels`.
        mode, threshold, hysteresis, open_is_high, min_range: As for
            :func:`detect_gripper_events`, for every arm.
        ranges: Arm -> the channel's ``(min, max)`` across the dataset
            (:func:`channel_range`), the ``value_range`` of that arm.

    Raises:
        LabelValidationError: a channel's feature is missing from ``columns``.
    """
    events: list[GripperEvent] = []
    for arm, ch in channels.items():
        if ch.feature not in columns:
            raise LabelValidationError(f"feature {ch.feature!r} was not read; include it in the columns.")
        events += detect_gripper_events(
            _component(columns[ch.feature], ch.index),
            arm=arm,
            mode=mode,
            threshold=threshold,
            hysteresis=hysteresis,
            open_is_high=open_is_high,
            min_range=min_range,
            value_range=(ranges or {}).get(arm),
        )
    return sorted(events, key=lambda e: (e.frame, e.arm))


def channel_range(dataset: Any, channel: GripperChannel) -> tuple[float, float] | None:
    """``(min, max)`` of one gripper channel across every episode of ``dataset``.

    Taken from the dataset's stored statistics
    (:func:`strands_robots.dataset.stats.feature_range`) when it has them, else from the
    frames of every episode. NaN samples are ignored.

    Returns:
        The range, or None when the channel has no finite sample.
    """
    from strands_robots.dataset.stats import feature_range

    stored = feature_range(dataset.root, channel.feature)
    if stored is not None and channel.index < stored[0].size:
        lo, hi = float(stored[0][channel.index]), float(stored[1][channel.index])
        if math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
            return lo, hi
    values = np.concatenate(
        [np.empty(0)]
        + [
            _component(dataset.read_frames(episode, columns=[channel.feature])[channel.feature], channel.index)
            for episode in dataset.episodes
        ]
    )
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else None


def _component(data: Any, index: int) -> np.ndarray:
    """Column ``index`` of a ``(frames, dims)`` feature (a ``(frames,)`` feature is its own column)."""
    data = np.asarray(data, dtype=np.float64)
    return data[:, index] if data.ndim == 2 else data
