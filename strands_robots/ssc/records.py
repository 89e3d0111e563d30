"""Record types of the Structured Subtask Chain (paper ``001``, Appendix A).

Every type is a ``msgspec.Struct``: typed, JSON-serialisable with :func:`to_dict` and
loaded back with validation by :func:`from_dict`. Field names follow Appendix A; the
fields the paper calls "internal-only" (resolution flags, provenance) are kept, so every
heuristic decision stays visible.

Frame conventions: ``st_duration`` is the half-open window ``[start, end)`` in frames
of the episode (``frame_index``). The paper writes ``(s, e]`` and BEHAVIOR-1K's
consecutive windows share their end frame; see :func:`in_window`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from strands_robots.errors import LabelValidationError

Arm = Literal["left", "right", "coop", "unsure"]
Hand = Literal["left", "right"]
ActionType = Literal["idle", "grasp", "contact", "tool_use"]
Role = Literal[
    "idle",
    "acquire",
    "release",
    "transient",
    "keep",
    "hand_over",
    "take_over",
    "contact",
    "tool_persistent",
    "tool_release",
]
Same = bool | Literal["unsure"]
QueryKind = Literal["arm_assignment", "same_object", "empty_hand"]
QueryStatus = Literal["pending", "resolved"]
Level = Literal["L1", "L2", "L3", "heuristic"]
Confidence = Literal["high", "medium", "low"]
GripperKind = Literal["open", "close"]

HANDS: tuple[Hand, Hand] = ("left", "right")

#: Version of the chain's JSON layout (bumped on incompatible change).
SCHEMA_VERSION = 1


def other_hand(hand: str) -> Hand:
    """``"left"`` <-> ``"right"``."""
    return "right" if hand == "left" else "left"


def in_window(frame: int, start: int, end: int, tolerance: int = 0) -> bool:
    """Whether an event at ``frame`` lies in the subtask window ``[start, end)``.

    The end frame itself is accepted too: the paper's windows are ``(s, e]`` and
    BEHAVIOR-1K's consecutive windows share their end frame, so an event exactly on a
    shared boundary belongs to either window (docs/ssc.md, "Checker", I3).

    Args:
        frame: Event frame (episode ``frame_index``).
        start: First frame of the window.
        end: End of the window (exclusive, but the boundary frame is accepted).
        tolerance: Extra frames accepted on each side (>= 0).
    """
    return start - tolerance <= frame <= end + tolerance


class GripperEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One gripper open/close transition (paper Appendix E, "Gripper-event detector").

    Attributes:
        frame: First frame (episode ``frame_index``) in the new gripper state.
        arm: ``"left"`` or ``"right"``.
        kind: ``"open"`` or ``"close"``.
        value: The channel value at ``frame`` (command or position units), if known.
    """

    frame: int
    arm: Hand
    kind: GripperKind
    value: float | None = None


class ParsedAction(msgspec.Struct, kw_only=True):
    """One action parsed from a subtask label, before SST construction.

    Attributes:
        verb: Key of :data:`strands_robots.ssc.verbs.VERBS` (``"pick_up_from"``).
        arm: The arm the label names explicitly (``left``, ``right``, ``coop`` for "both"),
            else None (BEHAVIOR-1K rarely names it).
        obj: Primary object id as written (instance indices such as ``candle_89`` kept).
        targets: Secondary objects with their preposition, e.g. ``[["from", "table_0"]]``.
        obj_cond: Features or parts of the object (``"lever"``, ``"start button"``).
        cond: Further spatial or instrumental conditions (``"upside down"``, ``"with knife"``).
        text: The label text this action was parsed from.
    """

    verb: str
    arm: Literal["left", "right", "coop"] | None = None
    obj: str | None = None
    targets: list[tuple[str, str]] = []
    obj_cond: list[str] = []
    cond: list[str] = []
    text: str = ""


class Subtask(msgspec.Struct, kw_only=True):
    """One annotated subtask interval, the input of SST construction.

    Attributes:
        st_idx: 0-based subtask index (BEHAVIOR-1K ``skill_idx``).
        start: First frame of the window.
        end: End frame of the window (exclusive).
        actions: The parsed actions (usually one).
        label: The original label text.
        skill_type: BEHAVIOR-1K ``skill_type`` (``"navigation"``, ``"uncoordinated"``,
            ``"coordinated"``); L2 metadata, None when absent.
        memory_prefix: BEHAVIOR-1K ``memory_prefix`` (e.g. ``"the other"``, ``"back"``).
        spatial_prefix: BEHAVIOR-1K ``spatial_prefix``.
        object_ids: All object ids of the annotation entry (flattened).
        source: Where the subtask came from (``"behavior"``, ``"segment:P1"``, ...).
    """

    st_idx: int
    start: int
    end: int
    actions: list[ParsedAction] = []
    label: str = ""
    skill_type: list[str] | None = None
    memory_prefix: list[str] | None = None
    spatial_prefix: list[str] | None = None
    object_ids: list[str] = []
    source: str = ""


class ActionEntry(msgspec.Struct, kw_only=True):
    """One action of an SST entry (Appendix A ``ActionEntry``).

    Attributes:
        arm: ``left`` | ``right`` | ``coop`` | ``unsure`` (the giver for ``hand_over``).
        action_type: ``idle`` | ``grasp`` | ``contact`` | ``tool_use``.
        action_verb: Normalised verb stem (``"pick"``).
        action_obj: Primary object.
        action_obj_cond: Object features or parts.
        action_dscp: Natural-language description ("right arm picks up book from table").
        action_cond: Tools / spatial / instrumental conditions (``"from breakfast_table"``).
        verb: The vocabulary key the action came from (``"pick_up_from"``).
        role: Sub-role that drives the scene-graph transition (Appendix E mapping).
        arm_source: Who decided ``arm``: ``label``, ``L1``, ``L2``, ``L3``, ``heuristic``
            or ``unresolved``.
        arm_confidence: ``high`` | ``medium`` | ``low`` (``low`` marks heuristic choices,
            closing the paper's gap g2).
        same_object: For acquires: whether both hands end on the same physical object
            (True, False, ``"unsure"``), None when not applicable.
        receiver: The receiving arm of a ``hand_over`` / the giving arm of ``take_over``.
        inferred: True when the action was created from a gripper event rather than the
            label (Table 5 "both open" on a one-object label).
    """

    arm: Arm
    action_type: ActionType
    action_verb: str | None
    action_obj: str | None
    action_obj_cond: list[str] = []
    action_dscp: str = ""
    action_cond: list[str] = []
    verb: str = ""
    role: Role = "idle"
    arm_source: str = "label"
    arm_confidence: Confidence = "high"
    same_object: Same | None = None
    receiver: Hand | None = None
    inferred: bool = False


class SceneGraph(msgspec.Struct, frozen=True, kw_only=True):
    """Scene-graph snapshot ``g = (left, right, same)`` (Sec. 3.1, Table 1).

    Attributes:
        obj_in_left_hand: Object id held by the left hand, None when empty.
        obj_in_right_hand: Object id held by the right hand, None when empty.
        holding_same_object: True, False or ``"unsure"``.
        uncertain_objects: Objects believed held by an arm that could not be determined
            (an acquire whose arm stayed unresolved); the paper's "pending uncertain
            objects". They keep the holding state honest instead of guessing a hand.
    """

    obj_in_left_hand: str | None = None
    obj_in_right_hand: str | None = None
    holding_same_object: Same = False
    uncertain_objects: tuple[str, ...] = ()

    def hand(self, hand: str) -> str | None:
        """The object in ``hand`` (``"left"``/``"right"``)."""
        return self.obj_in_left_hand if hand == "left" else self.obj_in_right_hand

    @property
    def confirmed(self) -> bool:
        """True when nothing about the holding state is unresolved."""
        return self.holding_same_object != "unsure" and not self.uncertain_objects


class PendingQuery(msgspec.Struct, kw_only=True):
    """A typed open question of an SST entry (Appendix E, "Typed pending-query schema").

    Attributes:
        kind: ``arm_assignment`` | ``same_object`` | ``empty_hand``.
        target_action_idx: Index of the parsed action of the subtask the query is about.
        requires_vl: Whether only a vision-language answer can settle it.
        reason: Human-readable explanation.
        status: ``pending`` or ``resolved``.
        resolved_by: ``L1`` | ``L2`` | ``L3`` when resolved.
        answer: The resolved value (``{"arm": "left"}``, ``{"same_object": true}``).
        confidence: Confidence of the answer when the level reports one.
        branch: Prompt branch of a ``same_object`` query (``a``, ``b``, ``c``; App. F).
        attempts: Levels tried, with why each did not settle it.
    """

    kind: QueryKind
    target_action_idx: int | None
    requires_vl: bool
    reason: str
    status: QueryStatus = "pending"
    resolved_by: Level | None = None
    answer: dict[str, Any] | None = None
    confidence: str | None = None
    branch: str | None = None
    attempts: list[str] = []


class SubtaskEntry(msgspec.Struct, kw_only=True):
    """One Structured Subtask Template entry ``S_k`` (Eq. 1, Appendix A).

    Attributes:
        st_duration: ``[start, end)`` in frames.
        st_idx: 0-based subtask index.
        st_motion: ``idle`` | ``move`` (base motion, separate from arm actions).
        st_motion_cond: Spatial conditions of the base motion (``"to fridge"``).
        actions: 0, 1 or 2 concurrent actions.
        actions_gripper: Gripper signature of the window, e.g. ``{"left": "close"}``
            (``"close+open"`` when both happen, in order).
        scene_graph: After-state of this subtask.
        pending_queries: Every query raised for the entry, resolved or not.
        label: The subtask's label text.
    """

    st_duration: tuple[int, int]
    st_idx: int
    st_motion: Literal["idle", "move"]
    st_motion_cond: list[str]
    actions: list[ActionEntry]
    actions_gripper: dict[str, str] | None
    scene_graph: SceneGraph
    pending_queries: list[PendingQuery] = []
    label: str = ""


class StructuredSubtaskChain(msgspec.Struct, kw_only=True):
    """The SSC of one episode (Appendix A ``StructuredSubtaskChain``).

    Attributes:
        task_name: Task name or instruction.
        task_duration: ``[start, end)`` frames covered by the chain.
        object_list: Every object of the task (the L3 prompts' scene inventory).
        action_dscp_list: One natural-language sentence per entry.
        subtasks: The SST entries in order.
        episode_index: The real LeRobot ``episode_index`` when known.
        initial_state: ``g_0`` (configuration E under assumption A2).
        schema_version: :data:`SCHEMA_VERSION`.
    """

    task_name: str
    task_duration: tuple[int, int]
    object_list: list[str]
    action_dscp_list: list[str]
    subtasks: list[SubtaskEntry]
    episode_index: int | None = None
    initial_state: SceneGraph = SceneGraph()
    schema_version: int = SCHEMA_VERSION

    def pending(self) -> list[tuple[int, PendingQuery]]:
        """``(st_idx, query)`` for every query still pending."""
        return [(e.st_idx, q) for e in self.subtasks for q in e.pending_queries if q.status == "pending"]


class Anomaly(msgspec.Struct, kw_only=True):
    """One violation of an invariant I1-I4 (Sec. 4.4), a typed record.

    Attributes:
        invariant: ``I1`` | ``I2`` | ``I3`` | ``I4``.
        kind: e.g. ``release_without_hold``, ``not_released_at_end``, ``annotation_timing``.
        entry: ``st_idx`` of the entry (None for end-of-episode anomalies).
        arm: Arm concerned (``left``, ``right``, ``coop``, ``unsure``).
        frames: Frames that matter (the event realising the action, or the window).
        explanation: What does not add up, in words.
        episode_index: Episode, when the chain knows it.
        action_idx: Index of the action in the entry, when one is concerned.
        window: The entry's ``[start, end)``.
    """

    invariant: Literal["I1", "I2", "I3", "I4"]
    kind: str
    entry: int | None
    arm: str
    frames: list[int]
    explanation: str
    episode_index: int | None = None
    action_idx: int | None = None
    window: tuple[int, int] | None = None


def to_dict(record: msgspec.Struct) -> Any:
    """JSON-ready builtins (dicts, lists, str, int, float, bool, None) of a record."""
    return msgspec.to_builtins(record)


def from_dict[T](data: Any, cls: type[T]) -> T:
    """Load a record from JSON builtins (a mapping) with type validation; a ``cls`` record is
    returned as it is.

    Raises:
        LabelValidationError: the data does not match ``cls``; the message names the path.
    """
    if isinstance(data, cls):
        return data
    try:
        return msgspec.convert(dict(data) if isinstance(data, Mapping) else data, cls)
    except msgspec.ValidationError as exc:
        raise LabelValidationError(
            f"not a valid {cls.__name__}: {exc}; produce it with strands_robots.ssc (build_chain) "
            "or fix the named field."
        ) from exc
