"""SST construction and the L1/L2/L3 resolution cascade (paper ``001``, Sec. 4.2-4.3, App. E;
docs/ssc.md, "Construction and the cascade": the typed pending queries, the order of the
levels, what each level settles and the fallback when none does).

States are immutable values, so the before-state snapshot an entry is built from is
committed only when the entry is final; its after-state is the next entry's before-state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec
import numpy as np

from strands_robots.errors import LabelValidationError
from strands_robots.ssc.records import (
    HANDS,
    ActionEntry,
    GripperEvent,
    ParsedAction,
    PendingQuery,
    SceneGraph,
    Subtask,
    SubtaskEntry,
    from_dict,
    in_window,
    other_hand,
)
from strands_robots.ssc.render import action_phrase, display_name, display_text, render_action
from strands_robots.ssc.scene_graph import advance, base_name, has_instance_index, matches, same_name
from strands_robots.ssc.verbs import NEEDS_HELD, Verb, lookup_verb

#: L2 metadata fields consulted by default (pass a subset to skip unreliable ones, or
#: ``()`` for the paper's VL-only mode L1 -> L3). The paper's App. B: L2 reads
#: ``skill_type``, ``memory_prefix`` and ``spatial_prefix``; ``instance_ids`` are the
#: ``object_id`` instance indices (Sec. 4.3, "instance-level object identifiers").
ANNOTATION_FIELDS = ("spatial_prefix", "skill_type", "memory_prefix", "instance_ids")
#: Query kinds in resolution order (App. F).
QUERY_ORDER = {"same_object": 0, "arm_assignment": 1, "empty_hand": 2}
_DIFFERENT_WORDS = ("other", "another", "second", "different")
_ARM_ANSWERS = {"left", "right", "coop"}
_ARM_NOUNS = ("arm", "hand", "gripper")
_ARM_LEADS = ("with the ", "with ", "using the ", "using ", "by the ", "by ")


def spatial_prefix_arm(token: str) -> str | None:
    """The arm a BEHAVIOR-1K ``spatial_prefix`` token names, else None (paper ``001``, App. B;
    the words that name one: docs/ssc.md, "Construction and the cascade", L2).

    Args:
        token: One ``spatial_prefix`` string.

    Returns:
        ``"left"``, ``"right"``, ``"coop"`` or None.
    """
    text = " ".join(token.lower().replace("_", " ").replace("-", " ").split())
    for lead in _ARM_LEADS:
        if text.startswith(lead):
            text = text[len(lead) :]
            break
    if text in ("both", "bimanual") or text in {f"both {n}s" for n in _ARM_NOUNS}:
        return "coop"
    side, _, rest = text.partition(" ")
    if side not in ("left", "right"):
        return None
    if rest == "" or rest in _ARM_NOUNS or rest in {f"{n}s" for n in _ARM_NOUNS}:
        return side
    return None


@dataclass(frozen=True)
class L3Request:
    """Everything an L3 resolver needs to compose the App. F prompt for one query.

    Attributes:
        kind: ``arm_assignment`` or ``same_object``.
        branch: ``same_object`` prompt branch: ``a`` (both arms act on the same-named
            object), ``b`` (one arm acquires while the other holds one), ``c`` (arm not
            yet resolved; both hands reportedly hold one). None for ``arm_assignment``.
        task_name: The task.
        st_idx: Subtask index.
        start: First frame of the subtask window.
        end: End frame of the window (exclusive).
        action_description: Gerund phrase without conditions ("picking up radio").
        conditions: Condition text with a leading space (" from coffee table") or "".
        object_name: Readable name of the object in question.
        object_list: Readable scene inventory.
        acting_arm: Branch ``b``: the acquiring arm.
        other_arm_context: " Left arm is currently holding bowl." when the holding state
            is confirmed, else "" (never feed a guess back into the query).
    """

    kind: str
    branch: str | None
    task_name: str
    st_idx: int
    start: int
    end: int
    action_description: str
    conditions: str
    object_name: str
    object_list: tuple[str, ...]
    acting_arm: str | None = None
    other_arm_context: str = ""


#: An L3 resolver: takes a request, returns the parsed JSON answer (``{"arm": ...}`` or
#: ``{"same_object": ...}``) or None when it cannot answer.
Resolver = Callable[[L3Request], Mapping[str, Any] | None]


@dataclass
class WindowSignal:
    """Gripper events of one subtask window (``in_window``: the end frame accepted), in frame order."""

    order: list[GripperEvent]

    def arms(self, kind: str | None = None) -> set[str]:
        """The arms with an event of ``kind`` (``"open"``, ``"close"``; None: any) in the window."""
        return {e.arm for e in self.order if kind in (None, e.kind)}

    def signature(self) -> dict[str, str] | None:
        """``{"left": "close"}``, ``{"right": "open+close"}`` (kinds in order), None if quiet."""
        out: dict[str, list[str]] = {}
        for e in self.order:
            kinds = out.setdefault(e.arm, [])
            if not kinds or kinds[-1] != e.kind:
                kinds.append(e.kind)
        return {arm: "+".join(kinds) for arm, kinds in out.items()} or None


@dataclass
class _Plan:
    """The evolving resolution of one parsed action."""

    idx: int
    parsed: ParsedAction
    row: Verb
    role: str = field(init=False)  # the verb's role until the cascade finds a take-over
    arms: list[str] | None = None
    same: bool | str | None = None
    source: str = "unresolved"
    confidence: str = "high"
    giver: str | None = None  # take_over: the arm that lets go

    def __post_init__(self) -> None:
        self.role = self.row.role


class EntryBuilder:
    """Builds SST entries one after the other, carrying the running state.

    Arguments as for :func:`~strands_robots.ssc.chain.build_chain`.

    Raises:
        LabelValidationError: malformed events, ``arms`` names neither hand, a base velocity of the
            wrong shape, a bad ``base_speed_threshold``.
    """

    def __init__(
        self,
        events: Iterable[GripperEvent | Mapping[str, Any]],
        *,
        resolver: Resolver | None = None,
        task_name: str = "",
        object_list: Iterable[str] = (),
        tolerance: int = 0,
        annotation_fields: Iterable[str] = ANNOTATION_FIELDS,
        arms: Iterable[str] = HANDS,
        base_velocity: Any = None,
        base_speed_threshold: float | None = None,
    ) -> None:
        self.arms = tuple(a for a in HANDS if a in set(arms))
        if not self.arms:
            raise LabelValidationError(f"arms must name 'left' and/or 'right', got {tuple(arms)!r}.")
        self.events = sorted((from_dict(e, GripperEvent) for e in events), key=lambda e: (e.frame, e.arm))
        self.resolver = resolver
        self.task_name = task_name
        self.object_list = tuple(dict.fromkeys(display_name(o) for o in object_list if o))
        self.tolerance = tolerance
        self.fields = frozenset(annotation_fields)
        self.base_speed, self.base_speed_threshold = None, 0.0
        if base_velocity is not None:  # the segment rules' norm, moving median, default and limits
            from strands_robots.segments.motion import DEFAULT_THRESHOLD, base_speed, check_threshold, smooth
            from strands_robots.segments.validate import DEFAULT_SMOOTH_FRAMES

            self.base_speed = smooth(base_speed(base_velocity), DEFAULT_SMOOTH_FRAMES)
            given = base_speed_threshold
            self.base_speed_threshold = check_threshold(DEFAULT_THRESHOLD if given is None else given)

    def motion(self, subtask: Subtask, plans: list[_Plan]) -> str:
        """``move`` or ``idle`` for a window: the base speed when known, else the verbs."""
        if self.base_speed is not None:
            window = self.base_speed[max(0, subtask.start) : max(subtask.start + 1, subtask.end)]
            finite = window[np.isfinite(window)]
            if finite.size:
                return "move" if float(finite.max()) >= self.base_speed_threshold else "idle"
        return "move" if any(p.row.motion for p in plans) else "idle"

    def build(self, subtask: Subtask, before: SceneGraph) -> SubtaskEntry:
        """Construct ``S_k`` from ``subtask`` and ``g_{k-1}`` = ``before``, resolving its queries."""
        sig = WindowSignal([e for e in self.events if in_window(e.frame, subtask.start, subtask.end, self.tolerance)])
        ctx = _Ctx(self, subtask, before, sig)
        plans, queries = ctx.plans, ctx.queries
        ctx.construct()
        ctx.resolve()
        ctx.fallback()
        actions = ctx.materialize()
        after, _ = advance(before, actions)  # re-advance the snapshot with resolved values
        motion = self.motion(subtask, plans)
        motion_cond = [f"{prep} {obj}" for p in plans if p.role == "idle" for prep, obj in p.parsed.targets] + [
            c for p in plans if p.role == "idle" for c in p.parsed.cond
        ]
        return SubtaskEntry(
            st_duration=(subtask.start, subtask.end),
            st_idx=subtask.st_idx,
            st_motion=cast(Any, motion),
            st_motion_cond=motion_cond,
            actions=actions,
            actions_gripper=sig.signature(),
            scene_graph=after,
            pending_queries=sorted(queries, key=lambda q: QUERY_ORDER[q.kind]),
            label=subtask.label,
        )


class _Ctx:
    """Resolution state of one entry (construction, cascade, fallback, materialisation)."""

    def __init__(self, b: EntryBuilder, st: Subtask, before: SceneGraph, sig: WindowSignal):
        self.b, self.st, self.before, self.sig = b, st, before, sig
        self.plans = [_Plan(i, parsed, lookup_verb(parsed.verb)) for i, parsed in enumerate(st.actions)]
        self.queries: list[PendingQuery] = []

    def query(self, kind: str, idx: int, reason: str, *, requires_vl: bool = True, branch: str | None = None) -> None:
        if any(q.kind == kind and q.target_action_idx == idx for q in self.queries):
            return
        self.queries.append(
            PendingQuery(
                kind=cast(Any, kind), target_action_idx=idx, requires_vl=requires_vl, reason=reason, branch=branch
            )
        )

    def holders(self, obj: str | None) -> list[str]:
        return [h for h in HANDS if matches(self.before.hand(h), obj)]

    def free(self) -> list[str]:
        return [h for h in self.b.arms if self.before.hand(h) is None]

    def holds_other(self, obj: str | None) -> bool:
        return any(self.before.hand(h) is not None and not matches(self.before.hand(h), obj) for h in HANDS)

    def co_held(self, obj: str | None) -> bool:
        return self.before.holding_same_object is True and len(self.holders(obj)) == 2

    def plan_for(self, q: PendingQuery) -> _Plan:
        return self.plans[q.target_action_idx or 0]

    def co_acquires(self, p: _Plan) -> list[_Plan]:
        """The other acquires of this entry whose object is a different one (``cup_1`` and
        ``plate_2``; two instance ids ``candle_89`` and ``candle_90``): one hand each."""
        return [s for s in self.plans if s is not p and s.role == "acquire" and _different(s.parsed.obj, p.parsed.obj)]

    def construct(self) -> None:
        for p in self.plans:
            if p.role == "idle":
                p.arms, p.source = [], "label"
                continue
            arm = p.parsed.arm
            if arm is None:
                self.query("arm_assignment", p.idx, "the label names no arm")
                continue
            self._set_arms(p, [arm], "label", "high")
            if arm in HANDS and p.role in (*NEEDS_HELD, "tool_persistent") and not self._hand_ok(arm, p):
                self.query(
                    "empty_hand",
                    p.idx,
                    f"the label names the {arm} arm, which holds "
                    f"{self.before.hand(arm) or 'nothing'} before this subtask",
                    requires_vl=False,
                )

    def _hand_ok(self, arm: str, p: _Plan) -> bool:
        """False only for an empty hand (a hand holding another object is the checker's I2)."""
        if self.before.hand(arm) is not None:
            return True
        if p.role in ("tool_persistent", "tool_release"):
            return bool(self.before.uncertain_objects)
        return p.parsed.obj in self.before.uncertain_objects

    def _after_acquire_arm(self, p: _Plan, arm: str) -> None:
        """Acquire on a known hand: hand-over from the other hand, or a same-object question."""
        other = other_hand(arm)
        held = self.before.hand(other)
        o = p.parsed.obj
        if held is None or not same_name(held, o):
            return
        if other in self.sig.arms("open") and matches(held, o) and self.before.hand(arm) is None:
            p.role, p.giver = "take_over", other  # L -> R: the other hand lets go (Table 6)
            return
        if p.same is None:
            self.query(
                "same_object",
                p.idx,
                f"the {other} arm already holds {held}; is the {arm} arm taking the same physical object?",
                branch="b",
            )

    def resolve(self) -> None:
        levels = (("L1", self._l1), ("L2", self._l2), ("L3", self._l3))
        while True:  # cheaper levels first again after any resolution
            for name, level in levels:
                pending = sorted((q for q in self.queries if q.status == "pending"), key=lambda q: QUERY_ORDER[q.kind])
                found = next(((name, q, result) for q in pending if (result := level(q)) is not None), None)
                if found is not None:
                    break
            else:
                return
            name, q, (answer, confidence, note) = found
            q.status, q.resolved_by = "resolved", cast(Any, name)
            q.answer, q.confidence = answer, confidence
            q.attempts.append(f"{name}: {note}")

    def _l1(self, q: PendingQuery):
        p = self.plan_for(q)
        if q.kind == "empty_hand":
            return self._l1_empty_hand(p)
        if q.kind == "same_object":
            if p.same is not None:  # settled by an earlier answer
                return {"same_object": p.same}, None, "decided with the arm answer"
            return self._note(q, "L1", "gripper events cannot tell object identity")
        arms, confidence, note = self._l1_arm(p)
        if arms is None:
            return self._note(q, "L1", note)
        self._set_arms(p, arms, "L1", confidence)
        return {"arm": arms[0] if len(arms) == 1 else arms}, confidence, note

    def _note(self, q: PendingQuery, level: str, text: str) -> None:
        entry = f"{level}: {text}"
        if entry not in q.attempts:
            q.attempts.append(entry)
        return None

    def _l1_empty_hand(self, p: _Plan):
        named = p.arms[0] if p.arms else None
        other = other_hand(named) if named in HANDS else None
        if other is not None:
            held = self.before.hand(other)
            ok = held is not None if p.role in ("tool_persistent", "tool_release") else matches(held, p.parsed.obj)
            if ok:
                self._set_arms(p, [other], "L1", "medium")
                return (
                    {"arm": other, "reassigned_from": named},
                    "medium",
                    f"the {named} arm is empty and the {other} arm holds {held}",
                )
        return (
            {"arm": named, "annotation_artefact": True},
            "high",
            f"no hand holds {p.parsed.obj or 'an object'}; kept as labelled for the checker to flag",
        )

    def _l1_arm(self, p: _Plan) -> tuple[list[str] | None, str, str]:
        sig, o = self.sig, p.parsed.obj
        if len(self.b.arms) == 1:
            return [self.b.arms[0]], "high", f"single-arm robot: only the {self.b.arms[0]} arm exists"
        if p.role == "acquire":
            closing, free = sig.arms("close"), self.free()
            siblings = self.co_acquires(p)
            if p.same is True and len(closing) != 1:
                return ["coop"], "high", "both hands on one object (same-object answer)"
            if p.same is False and len(closing) == 2 and not siblings:
                return ["left", "right"], "high", "both grippers closed on two instances"
            if len(closing) == 1:
                (arm,) = closing
                return [arm], "high", f"only the {arm} gripper closed in the window"
            if len(closing) == 2:
                if siblings and len(free) == 2:  # E -> D: two objects, one per hand
                    taken = [s.arms[0] for s in siblings if s.arms and s.arms[0] in HANDS]
                    if taken:
                        return (
                            [other_hand(taken[0])],
                            "high",
                            f"both grippers closed; the {taken[0]} hand took the other object",
                        )
                    return None, "", "both grippers closed on two objects; which hand took which is open"
                if len(free) == 2:
                    self.query(
                        "same_object",
                        p.idx,
                        f"both grippers closed on {o}: one physical object or two instances?",
                        branch="a",
                    )
                    return None, "", "both grippers closed; waiting for the same-object answer"
                if len(free) == 1:
                    return free, "high", f"both grippers closed; only the {free[0]} hand was free"
                return None, "", "both grippers closed but both hands already hold objects"
            if len(free) == 1:
                return free, "medium", f"no gripper event; the {free[0]} hand is the only free one (A3)"
            return None, "", "no gripper close in the window and both hands free"
        if p.role in ("release", "tool_release", "keep", "hand_over"):
            holders: list[str] = (
                self.holders(o) if p.role != "tool_release" else [h for h in HANDS if self.before.hand(h)]
            )
            if len(holders) == 2 and self.before.holding_same_object is True:
                return ["coop"], "high", f"cooperative release: {o} was co-grasped"
            if len(holders) == 2 and self.before.holding_same_object == "unsure":
                if p.same is True:
                    return ["coop"], "high", "same-object answer: cooperative release"
                if p.same is None:
                    self.query("same_object", p.idx, f"both hands hold {o} (D?): one object or two?", branch="c")
                    return None, "", "both hands hold same-named objects; waiting for the same-object answer"
            if len(holders) == 1:
                return holders, "high", f"the {holders[0]} hand holds {self.before.hand(holders[0])}"
            if len(holders) == 2:
                opened = sig.arms("open") & set(holders)
                if len(opened) == 1:
                    return sorted(opened), "high", f"only the {next(iter(opened))} gripper opened"
                if len(opened) == 2 and p.role == "release":
                    return ["left", "right"], "high", "both grippers opened (Table 5, both open)"
                return None, "", "both hands hold a matching object and the gripper events do not tell"
            opened = sig.arms("open")
            if len(opened) == 1:
                (arm,) = opened
                return [arm], "medium", f"no hand holds {o}; only the {arm} gripper opened"
            return None, "", f"no hand holds {o} and no single gripper opened"
        if p.role == "tool_persistent":
            holding: list[str] = [h for h in HANDS if self.before.hand(h) is not None]
            if len(holding) == 2 and self.before.holding_same_object is True:
                return ["coop"], "high", "the tool is co-held"
            if len(holding) == 1:
                return holding, "high", f"the {holding[0]} hand holds the tool {self.before.hand(holding[0])}"
            return None, "", "the tool-holding hand is not unique"
        if p.role == "transient":
            active = sig.arms()
            if len(active) == 1:
                (arm,) = active
                return [arm], "high", f"only the {arm} gripper engaged in the window"
            return None, "", "gripper events do not single out an arm"
        return None, "", "contact actions leave no gripper signal"

    def _l2(self, q: PendingQuery):
        p, st = self.plan_for(q), self.st
        if q.kind == "same_object":
            memory = " ".join(st.memory_prefix or []).lower()
            if "memory_prefix" in self.b.fields and memory:
                if any(w in memory.split() for w in _DIFFERENT_WORDS):
                    return self._same(p, False, "L2", f"memory_prefix {st.memory_prefix!r} names another instance")
                if "same" in memory.split():
                    return self._same(p, True, "L2", f"memory_prefix {st.memory_prefix!r} names the same object")
            if "instance_ids" in self.b.fields:
                found = self._l2_instances(q, p)
                if found is not None:
                    return found
            if "skill_type" in self.b.fields and q.branch == "a" and self._coordinated():
                return self._same(p, True, "L2", "skill_type 'coordinated': both arms on one object")
            return self._note(q, "L2", "no annotation field settles object identity")
        if q.kind == "arm_assignment" and "spatial_prefix" in self.b.fields and st.spatial_prefix:
            found = self._l2_spatial(q, p)
            if found is not None:
                return found
        if q.kind == "arm_assignment" and "skill_type" in self.b.fields and self._coordinated():
            if p.role == "acquire" and self.holds_other(p.parsed.obj):
                return self._note(q, "L2", "skill_type 'coordinated' but a hand holds another object")
            self._set_arms(p, ["coop"], "L2", "medium")
            return {"arm": "coop"}, "medium", "skill_type 'coordinated'"
        return self._note(q, "L2", "no annotation field settles it" if self.b.fields else "annotation lookup disabled")

    def _l2_spatial(self, q: PendingQuery, p: _Plan):
        """``spatial_prefix`` naming the acting arm: one prefix for the only non-idle action, or
        one per action (docs/ssc.md, "Construction and the cascade", L2)."""
        tokens = list(self.st.spatial_prefix or [])
        acting = [x for x in self.plans if x.role != "idle"]
        if len(self.plans) > 1 and len(tokens) == len(self.plans):
            tokens = [tokens[p.idx]]
        elif len(acting) != 1:
            return self._note(q, "L2", f"spatial_prefix {self.st.spatial_prefix!r} does not say which action it is")
        named = {a for a in (spatial_prefix_arm(t) for t in tokens) if a is not None}
        if not named:
            return None
        if len(named) > 1:
            return self._note(q, "L2", f"spatial_prefix {self.st.spatial_prefix!r} names {sorted(named)}")
        (arm,) = named
        if arm in HANDS and arm not in self.b.arms:
            return self._note(q, "L2", f"spatial_prefix names the {arm} arm, which this robot does not have")
        if arm == "coop" and p.role == "acquire" and self.holds_other(p.parsed.obj):
            return self._note(q, "L2", "spatial_prefix names both arms but a hand holds another object")
        self._set_arms(p, [arm], "L2", "medium")
        return {"arm": arm}, "medium", f"spatial_prefix {self.st.spatial_prefix!r} names the {arm} arm"

    def _coordinated(self) -> bool:
        return any(t.strip().lower() == "coordinated" for t in self.st.skill_type or [])

    def _l2_instances(self, q: PendingQuery, p: _Plan):
        """Object identity from instance ids (``pillar_candle_89`` / ``pillar_candle_90``), per
        query branch (docs/ssc.md, "Construction and the cascade", L2)."""
        o = p.parsed.obj
        ids = {i for i in self.st.object_ids if same_name(i, o) and has_instance_index(i)}
        if q.branch == "b" and p.arms and p.arms[0] in HANDS:
            held = self.before.hand(other_hand(p.arms[0]))
            if has_instance_index(held) and not has_instance_index(o):
                others = ids - {held}
                if len(others) == 1:
                    (o,) = others
                    p.parsed.obj = o  # "pick up pillar candle" names pillar_candle_90 in this entry
                elif ids == {held}:
                    o = held
            if has_instance_index(held) and has_instance_index(o):
                same = held == o
                return self._same(p, same, "L2", f"instance ids {held} and {o} are {'equal' if same else 'different'}")
        if q.branch in ("a", "c") and len(ids) >= 2:
            return self._same(p, False, "L2", f"the annotation names {len(ids)} instances: {sorted(ids)}")
        if q.branch == "a" and len(ids) == 1 and (o in ids or not has_instance_index(o)):
            (only,) = ids
            return self._same(p, True, "L2", f"the annotation names one instance, {only}: both hands on it")
        return None

    def _same(self, p: _Plan, value: bool, level: str, note: str):
        p.same = value
        return {"same_object": value}, "medium" if level == "L2" else None, note

    def _l3(self, q: PendingQuery):
        if not q.requires_vl or any(a.startswith("L3") for a in q.attempts):
            return None  # one model call per query at most
        if self.b.resolver is None:
            return self._note(q, "L3", "no vision-language model configured; left pending")
        p = self.plan_for(q)
        request = self._request(q, p)
        answer = self.b.resolver(request)
        if not answer:
            return self._note(q, "L3", "the model gave no usable answer")
        confidence = answer.get("confidence") if isinstance(answer.get("confidence"), str) else None
        if q.kind == "same_object":
            value = _as_bool(answer.get("same_object"))
            if value is None:
                return self._note(q, "L3", f"answer without a same_object boolean: {dict(answer)!r}")
            p.same = value
            return {"same_object": value}, confidence, _reasoning(answer)
        arm = str(answer.get("arm", "")).strip().lower()
        if arm not in _ARM_ANSWERS:
            return self._note(q, "L3", f"the model answered arm={answer.get('arm')!r}")
        self._set_arms(p, [arm], "L3", confidence or "medium")
        return {"arm": arm}, confidence, _reasoning(answer)

    def _request(self, q: PendingQuery, p: _Plan) -> L3Request:
        draft = self._draft(p, p.arms[0] if p.arms else "unsure")
        desc = action_phrase(msgspec.structs.replace(draft, action_cond=[], receiver=None), form="gerund")
        conds = " ".join(display_text(c) for c in draft.action_cond)
        context = ""
        if self.before.confirmed:
            context = "".join(
                f" {h.capitalize()} arm is currently holding {display_name(self.before.hand(h))}."
                for h in HANDS
                if self.before.hand(h) is not None
            )
        acting = p.arms[0] if (q.branch == "b" and p.arms) else None
        return L3Request(
            kind=q.kind,
            branch=q.branch,
            task_name=self.b.task_name,
            st_idx=self.st.st_idx,
            start=self.st.start,
            end=self.st.end,
            action_description=desc,
            conditions=f" {conds}" if conds else "",
            object_name=display_name(p.parsed.obj) or "object",
            object_list=self.b.object_list,
            acting_arm=acting,
            other_arm_context=context,
        )

    def _set_arms(self, p: _Plan, arms: list[str], source: str, confidence: str) -> None:
        p.arms, p.source, p.confidence = arms, source, confidence
        if p.role == "acquire" and arms == ["coop"]:
            p.same = True  # both hands on one object
        if p.role == "acquire" and len(arms) == 1 and arms[0] in HANDS:
            self._after_acquire_arm(p, arms[0])

    def fallback(self) -> None:
        """Arms the cascade could not settle: ``unsure``, or a low-confidence free-arm heuristic."""
        for p in self.plans:
            if p.arms is None:
                free, closing = self.free(), self.sig.arms("close")
                if p.role in ("contact", "transient") and len(free) == 1:
                    p.arms, p.source, p.confidence = free, "heuristic", "low"
                elif p.role == "acquire" and len(closing) == 2 and len(free) == 2 and not self.co_acquires(p):
                    p.arms, p.source, p.same = ["unsure"], "unresolved", "unsure"  # E -> D?
                elif p.role == "acquire" and self.co_acquires(p):
                    # E -> D: each object went to one hand, which one is open; never a co-hold
                    p.arms, p.source, p.same = ["unsure"], "unresolved", False
                else:
                    p.arms, p.source = ["unsure"], "unresolved"
                p.confidence = "low"
            elif (
                p.role == "acquire"
                and p.same is None
                and any(q.kind == "same_object" and q.target_action_idx == p.idx for q in self.queries)
            ):
                p.same = "unsure"  # L -> D? : identity unresolved

    def _draft(self, p: _Plan, arm: str) -> ActionEntry:
        row = p.row
        obj = p.parsed.obj or row.implied_obj
        return ActionEntry(
            arm=cast(Any, arm),
            action_type=row.action_type,
            action_verb=row.stem,
            action_obj=obj,
            action_obj_cond=list(p.parsed.obj_cond),
            action_cond=[f"{prep} {t}" for prep, t in p.parsed.targets] + list(p.parsed.cond),
            verb=row.name,
            role=cast(Any, p.role),
            arm_source=p.source,
            arm_confidence=cast(Any, p.confidence),
        )

    def materialize(self) -> list[ActionEntry]:
        actions: list[ActionEntry] = []
        acted: set[str] = set()
        for p in self.plans:
            if p.role == "idle":
                continue
            arms = list(p.arms or ["unsure"])
            source, confidence = p.source, p.confidence
            if p.role == "release" and arms != ["coop"] and len(arms) == 1 and self.co_held(p.parsed.obj):
                arms, source = ["coop"], "L1"  # cooperative release (Table 5, S -> L/R)
            split = p.role == "acquire" and p.same is False and len(arms) == 2 and has_instance_index(p.parsed.obj)
            for arm in arms:
                a = self._draft(p, arm)
                if split:  # two instances, one per hand: which hand took which id is not known
                    a.action_obj = base_name(a.action_obj)
                a.arm_source, a.arm_confidence = source, cast(Any, confidence)
                if p.row.tool_when_held and p.role == "transient" and arm in HANDS and self.before.hand(arm):
                    a.role, a.action_type = "tool_persistent", "tool_use"  # generic open/close with a held tool
                if p.role == "acquire":
                    a.same_object = cast(Any, p.same)
                held = self.before.hand(arm) if arm in HANDS else None
                if (
                    p.role in ("release", "keep")
                    and held
                    and matches(held, a.action_obj)
                    and not has_instance_index(a.action_obj)
                ):
                    a.action_obj = held  # "place candle" by the hand holding candle_89
                if p.role == "hand_over" and arm in HANDS:
                    a.receiver = other_hand(arm)
                if p.role == "take_over":
                    a.receiver = cast(Any, p.giver)
                actions.append(a)
                acted.update(HANDS if arm == "coop" else [arm])
        actions += self._inferred_releases(acted)
        for a in actions:
            a.action_dscp = render_action(a)
        return actions

    def _inferred_releases(self, acted: set[str]) -> list[ActionEntry]:
        """Table 5 "both open": a release label, and the other holding hand opens too."""
        release = next((p for p in self.plans if p.role == "release" and p.arms and p.arms[0] in HANDS), None)
        if release is None or self.before.holding_same_object is True:
            return []
        out = []
        for hand in HANDS:
            held = self.before.hand(hand)
            if hand in acted or held is None or hand not in self.sig.arms("open"):
                continue
            a = self._draft(release, hand)
            a.action_obj, a.action_cond, a.action_obj_cond = held, [], []
            a.arm_source, a.arm_confidence, a.inferred = "L1", "high", True
            out.append(a)
        return out


def _different(a: str | None, b: str | None) -> bool:
    """Two objects that cannot be one: different names, or two different instance ids."""
    if a is None or b is None:
        return False
    if not same_name(a, b):
        return True
    return has_instance_index(a) and has_instance_index(b) and a != b


_BOOL_WORDS = {"true": True, "yes": True, "same": True, "false": False, "no": False, "different": False}


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return _BOOL_WORDS.get(value.strip().lower()) if isinstance(value, str) else None


def _reasoning(answer: Mapping[str, Any]) -> str:
    text = answer.get("reasoning")
    return f"model: {text}" if isinstance(text, str) and text else "model answer"
