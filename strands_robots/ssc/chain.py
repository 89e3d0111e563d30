"""Assemble a Structured Subtask Chain from subtasks and gripper events (paper ``001``, Sec. 4).

:func:`build_chain` runs SST construction and the resolution cascade entry by entry
(online: the resolved after-state of ``S_k`` is the before-state of ``S_{k+1}``), starting
from the empty state ``g_0 = E`` (assumption A2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from strands_robots.errors import LabelValidationError
from strands_robots.ssc.cascade import ANNOTATION_FIELDS, EntryBuilder, Resolver
from strands_robots.ssc.records import GripperEvent, SceneGraph, StructuredSubtaskChain, Subtask, from_dict
from strands_robots.ssc.render import render_entry


def build_chain(
    subtasks: Iterable[Subtask | Mapping[str, Any]],
    events: Iterable[GripperEvent | Mapping[str, Any]],
    *,
    task_name: str = "",
    object_list: Iterable[str] = (),
    resolver: Resolver | None = None,
    tolerance: int = 0,
    annotation_fields: Iterable[str] = ANNOTATION_FIELDS,
    episode_index: int | None = None,
    task_duration: tuple[int, int] | None = None,
    arms: Iterable[str] = ("left", "right"),
    base_velocity: Any = None,
    base_speed_threshold: float | None = None,
) -> StructuredSubtaskChain:
    """Build the SSC of one episode.

    Args:
        subtasks: Parsed subtasks (:func:`~strands_robots.ssc.behavior.load_behavior_annotation`,
            :func:`~strands_robots.ssc.segmentation.subtasks_from_segments`), windows in frames.
        events: Gripper events of both arms (:func:`~strands_robots.ssc.gripper.detect_gripper_events`).
        task_name: Task name (used in L3 prompts).
        object_list: Scene inventory; defaults to every object the subtasks name.
        resolver: L3 resolver (e.g. :class:`~strands_robots.ssc.vlm.VLMResolver`); None
            leaves L3 queries pending.
        tolerance: Frames accepted outside a window when matching gripper events.
        annotation_fields: L2 fields to consult; ``()`` is the paper's VL-only mode.
        episode_index: Recorded in the chain.
        task_duration: ``[start, end)``; defaults to the span of the subtasks.
        arms: The hands the robot has; ``("right",)`` for a single-arm robot.
        base_velocity: The episode's base velocity, one row per frame (shape ``(frames,)``
            or ``(frames, dims)``), which decides each ``st_motion`` (docs/ssc.md, "Base
            motion"); None: the verbs decide.
        base_speed_threshold: Speed (feature units, m/s for a base velocity) at which the
            base counts as moving; default the segment rules' 0.05.

    Returns:
        The chain; every unresolved field stays visible as a pending query.

    Raises:
        LabelValidationError: malformed subtasks or events, a base velocity of the wrong shape.
        UnknownVerbError: a subtask verb not in the vocabulary.
    """
    subs = [from_dict(s, Subtask) for s in subtasks]
    for s in subs:
        if s.start < 0 or s.end < s.start:
            raise LabelValidationError(
                f"subtask {s.st_idx} has window [{s.start}, {s.end}); frames must satisfy 0 <= start <= end."
            )
    subs.sort(key=lambda s: (s.start, s.st_idx))
    named = (
        o
        for s in subs
        for o in [*s.object_ids, *(a.obj for a in s.actions), *(t for a in s.actions for _, t in a.targets)]
    )
    objects = list(dict.fromkeys(o for o in object_list if o)) or list(dict.fromkeys(o for o in named if o))
    builder = EntryBuilder(
        events,
        resolver=resolver,
        task_name=task_name,
        object_list=objects,
        tolerance=tolerance,
        annotation_fields=annotation_fields,
        arms=arms,
        base_velocity=base_velocity,
        base_speed_threshold=base_speed_threshold,
    )
    state = SceneGraph()
    entries = []
    for s in subs:
        entry = builder.build(s, state)
        entries.append(entry)
        state = entry.scene_graph
    if task_duration is None:
        task_duration = (subs[0].start, subs[-1].end) if subs else (0, 0)
    return StructuredSubtaskChain(
        task_name=task_name,
        task_duration=(int(task_duration[0]), int(task_duration[1])),
        object_list=objects,
        action_dscp_list=[render_entry(e) for e in entries],
        subtasks=entries,
        episode_index=episode_index,
    )
