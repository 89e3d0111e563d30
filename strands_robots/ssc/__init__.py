"""Structured Subtask Chain (SSC): a verifier for subtask labels (docs/ssc.md; its "Modules"
table names what each module holds).

An episode's subtask labels plus its gripper trajectory become a chain of scene-graph
transitions; the checker flags what does not add up (invariants I1-I4).
"""

from strands_robots.ssc.behavior import load_behavior_annotation, read_behavior_annotation
from strands_robots.ssc.chain import build_chain
from strands_robots.ssc.checker import action_accuracy, check_chain, summarize_anomalies
from strands_robots.ssc.gripper import detect_gripper_events, find_gripper_channels
from strands_robots.ssc.records import (
    ActionEntry,
    Anomaly,
    GripperEvent,
    PendingQuery,
    SceneGraph,
    StructuredSubtaskChain,
    Subtask,
    SubtaskEntry,
)
from strands_robots.ssc.render import render_action, render_chain, render_entry

__all__ = [
    "ActionEntry",
    "Anomaly",
    "GripperEvent",
    "PendingQuery",
    "SceneGraph",
    "StructuredSubtaskChain",
    "Subtask",
    "SubtaskEntry",
    "action_accuracy",
    "build_chain",
    "check_chain",
    "detect_gripper_events",
    "find_gripper_channels",
    "load_behavior_annotation",
    "read_behavior_annotation",
    "render_action",
    "render_chain",
    "render_entry",
    "summarize_anomalies",
]
