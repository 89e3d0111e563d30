"""Consistency checking of an SSC against invariants I1-I4 and the per-action accuracy (paper
``001``, Sec. 4.4, Appendix C; docs/ssc.md, "Checker": every anomaly kind, the window rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, cast

from strands_robots.ssc.records import (
    HANDS,
    ActionEntry,
    Anomaly,
    GripperEvent,
    SceneGraph,
    StructuredSubtaskChain,
    SubtaskEntry,
    from_dict,
    in_window,
)
from strands_robots.ssc.scene_graph import advance, configuration

INVARIANTS = ("I1", "I2", "I3", "I4")
ACCURACY_FIELDS = ("arm", "action_type", "action_verb", "action_obj")


def check_chain(
    chain: StructuredSubtaskChain | Mapping[str, Any],
    events: Iterable[GripperEvent | Mapping[str, Any]],
    *,
    tolerance: int = 0,
) -> list[Anomaly]:
    """Check a chain against invariants I1-I4.

    Args:
        chain: The chain (or its JSON dict).
        events: The episode's gripper events (both arms).
        tolerance: Frames accepted outside a window for I3/I4 (>= 0).

    Returns:
        Anomalies in entry order (end-of-episode anomalies last).
    """
    chain = from_dict(chain, StructuredSubtaskChain)
    evs = sorted((from_dict(e, GripperEvent) for e in events), key=lambda e: e.frame)
    ep = chain.episode_index
    out: list[Anomaly] = []
    before = chain.initial_state
    for entry in chain.subtasks:
        start, end = entry.st_duration
        window = (start, end)

        def add(invariant: str, kind: str, arm: str, frames: list[int], text: str, i: int | None) -> None:
            out.append(
                Anomaly(
                    invariant=cast(Any, invariant),
                    kind=kind,
                    entry=entry.st_idx,  # noqa: B023 - used immediately
                    arm=arm,
                    frames=frames,
                    explanation=text,
                    episode_index=ep,
                    action_idx=i,
                    window=window,  # noqa: B023
                )
            )

        derived, violations = advance(before, entry.actions)
        for v in violations:
            add(v.invariant, v.kind, v.arm, [start, end], f"st{entry.st_idx}: {v.explanation}", v.action_idx)
        if _core(derived) != _core(entry.scene_graph):
            add(
                "I2",
                "state_mismatch",
                "unsure",
                [start, end],
                f"st{entry.st_idx}: recorded after-state {configuration(entry.scene_graph)} "
                f"{_held(entry.scene_graph)} is not what its actions give from "
                f"{configuration(before)} ({configuration(derived)} {_held(derived)})",
                None,
            )
        for i, a in enumerate(entry.actions):
            flagged = len(out)
            if a.role in ("acquire", "release") and a.action_type == "grasp" and not a.inferred:
                _check_timing(entry, i, a, before, evs, tolerance, add)
            elif a.role in ("hand_over", "take_over"):
                _check_handover_events(entry, i, a, evs, tolerance, add)
            if len(out) == flagged:  # an event missing from the window is reported once, by I3/I4 above
                _check_signature(entry, i, a, before, add)
        before = entry.scene_graph
    held = before.obj_in_left_hand
    if before.holding_same_object is True and held is not None:
        left = [("coop", f"{held} is still co-held at the end")]
    elif before.holding_same_object == "unsure" and held is not None:
        left = [("unsure", f"both hands still hold {held} at the end")]
    else:
        left = [
            (h, f"the {h} hand still holds {before.hand(h)} at the end") for h in HANDS if before.hand(h) is not None
        ]
    left += [("unsure", f"{o} (acquired by an unresolved arm) is never released") for o in before.uncertain_objects]
    return out + [
        Anomaly(
            invariant="I1",
            kind="not_released_at_end",
            entry=chain.subtasks[-1].st_idx if chain.subtasks else None,
            arm=arm,
            frames=[chain.task_duration[1]],
            explanation=f"{text} (assumption A2: empty end state)",
            episode_index=ep,
            window=chain.task_duration,
        )
        for arm, text in left
    ]


def _core(g: SceneGraph) -> tuple:
    return (g.obj_in_left_hand, g.obj_in_right_hand, g.holding_same_object, tuple(sorted(g.uncertain_objects)))


def _held(g: SceneGraph) -> str:
    return f"(left={g.obj_in_left_hand}, right={g.obj_in_right_hand}, same={g.holding_same_object})"


def _nearest(evs: list[GripperEvent], arms: Iterable[str], kind: str, start: int, end: int) -> GripperEvent | None:
    """The first of the events of ``kind`` by ``arms`` closest to the window ``[start, end]``."""
    found = [e for e in evs if e.kind == kind and e.arm in set(arms)]
    return min(found, key=lambda e: start - e.frame if e.frame < start else max(0, e.frame - end), default=None)


def _check_timing(entry: SubtaskEntry, i: int, a: ActionEntry, before: SceneGraph, evs, tolerance, add) -> None:
    start, end = entry.st_duration
    kind = "close" if a.role == "acquire" else "open"
    if a.arm in HANDS and a.role == "release" and before.holding_same_object is True:
        need = list(HANDS)  # co-held: either gripper opening realises the cooperative release
    elif a.arm in HANDS:
        need = [a.arm]
    elif a.arm == "coop" and a.role == "acquire":
        need = [h for h in HANDS if before.hand(h) is None] or list(HANDS)
    else:
        need = list(HANDS)
    in_win = {e.arm for e in evs if e.kind == kind and e.arm in need and in_window(e.frame, start, end, tolerance)}
    all_needed = a.arm == "coop" and a.role == "acquire"
    missing = [h for h in need if h not in in_win] if all_needed else ([] if in_win else need)
    if not missing:
        return
    near = _nearest(evs, missing, kind, start, end)
    who = " or ".join(missing) if not all_needed else " and ".join(missing)
    if near is None:
        where, frames = "and none in the whole episode", []
    else:
        gap = start - near.frame if near.frame < start else near.frame - end
        side = "before" if near.frame < start else "after"
        where, frames = f"the nearest is at frame {near.frame} ({gap} frames {side} the window)", [near.frame]
    add(
        "I3",
        "annotation_timing",
        a.arm,
        frames,
        f"st{entry.st_idx}: {a.action_dscp or a.verb}: no {kind} event of the {who} gripper in "
        f"[{start}, {end}] (tolerance {tolerance}); {where}",
        i,
    )


def trigger(a: ActionEntry, before: SceneGraph) -> tuple[list[tuple[str, str]], bool] | None:
    """The trigger column of the transition row an action realises (paper ``001``, Appendix C).

    Returns:
        ``(events, any_of)``: the ``(arm, kind)`` gripper events the row names, and whether
        one of them is enough (a cooperative release: either gripper opening); None for a
        stateless action (contact, tool use, transient, keep, idle), an inferred one, or an
        unresolved arm, which no row's trigger constrains.
    """
    if a.inferred or a.arm == "unsure":
        return None
    if a.role in ("hand_over", "take_over"):
        giver = a.arm if a.role == "hand_over" else a.receiver
        receiver = a.receiver if a.role == "hand_over" else a.arm
        if giver not in HANDS or receiver not in HANDS:
            return None
        return [(str(giver), "open"), (str(receiver), "close")], False
    if a.action_type != "grasp" or a.role not in ("acquire", "release"):
        return None
    if a.role == "acquire":
        if a.arm in HANDS:
            return [(a.arm, "close")], False
        empty = [h for h in HANDS if before.hand(h) is None] or list(HANDS)
        return [(h, "close") for h in empty], False  # E -> S both close; L -> S the right one
    if a.arm == "coop" or before.holding_same_object is True:
        return [(h, "open") for h in HANDS], True  # S -> E both open, S -> L/R one arm open
    return [(str(a.arm), "open")], False


def _check_signature(entry: SubtaskEntry, i: int, a: ActionEntry, before: SceneGraph, add) -> None:
    """The recorded ``actions_gripper`` against the trigger column of the action's row."""
    row = trigger(a, before)
    if row is None:
        return
    needed, any_of = row
    recorded = {(arm, kind) for arm, kinds in (entry.actions_gripper or {}).items() for kind in kinds.split("+")}
    ok = any(n in recorded for n in needed) if any_of else all(n in recorded for n in needed)
    if ok:
        return
    start, end = entry.st_duration
    need = (" or " if any_of else " and ").join(f"{arm} {kind}" for arm, kind in needed)
    has = f"records {entry.actions_gripper}" if entry.actions_gripper else "records no gripper event"
    add(
        "I3",
        "gripper_signature_mismatch",
        a.arm,
        [start, end],
        f"st{entry.st_idx}: {a.action_dscp or a.verb}: its transition row (Appendix C) needs {need}, but the "
        f"entry {has}",
        i,
    )


def _check_handover_events(entry: SubtaskEntry, i: int, a: ActionEntry, evs, tolerance, add) -> None:
    start, end = entry.st_duration
    giver = a.arm if a.role == "hand_over" else a.receiver
    receiver = a.receiver if a.role == "hand_over" else a.arm
    if giver not in HANDS or receiver not in HANDS:
        return
    have = {(e.arm, e.kind) for e in evs if in_window(e.frame, start, end, tolerance)}
    lacking = [f"{h} {k}" for h, k in ((giver, "open"), (receiver, "close")) if (h, k) not in have]
    if lacking:
        add(
            "I4",
            "handover_missing_events",
            giver,
            [start, end],
            f"st{entry.st_idx}: hand-over {giver}->{receiver} needs a {giver} open and a {receiver} close "
            f"in [{start}, {end}]; missing: {', '.join(lacking)}",
            i,
        )


def summarize_anomalies(anomalies: Iterable[Anomaly]) -> dict[str, Any]:
    """Counts per invariant, per kind and per arm (the paper's anomaly vector)."""
    items = list(anomalies)
    by_inv = {inv: 0 for inv in INVARIANTS}
    by_inv.update(Counter(a.invariant for a in items))
    return {
        "total": len(items),
        "by_invariant": by_inv,
        "by_kind": dict(sorted(Counter(a.kind for a in items).items())),
        "by_arm": dict(sorted(Counter(a.arm for a in items).items())),
    }


def action_accuracy(
    chain: StructuredSubtaskChain | Mapping[str, Any],
    reference: StructuredSubtaskChain | Mapping[str, Any],
) -> dict[str, Any]:
    """Per-action accuracy against a reference chain (Sec. 4.4, local measure).

    Entries are aligned by ``st_idx`` and actions by position; a reference action cell is
    correct when (arm, action_type, action_verb, action_obj) all match.

    Returns:
        ``{"cells", "correct", "accuracy", "per_field": {field: correct count},
        "extra_actions", "mismatches": [{"st_idx", "action_idx", "field", "got", "want"}]}``.
    """
    chain = from_dict(chain, StructuredSubtaskChain)
    reference = from_dict(reference, StructuredSubtaskChain)
    got = {e.st_idx: e.actions for e in chain.subtasks}
    cells = correct = extra = 0
    per_field = {f: 0 for f in ACCURACY_FIELDS}
    mismatches: list[dict[str, Any]] = []
    for entry in reference.subtasks:
        mine = got.get(entry.st_idx, [])
        extra += max(0, len(mine) - len(entry.actions))
        for i, want in enumerate(entry.actions):
            cells += 1
            have = mine[i] if i < len(mine) else None
            ok = True
            for f in ACCURACY_FIELDS:
                w = getattr(want, f)
                h = getattr(have, f) if have is not None else None
                if h == w and have is not None:
                    per_field[f] += 1
                else:
                    ok = False
                    mismatches.append({"st_idx": entry.st_idx, "action_idx": i, "field": f, "got": h, "want": w})
            correct += ok
    return {
        "cells": cells,
        "correct": correct,
        "accuracy": correct / cells if cells else None,
        "per_field": per_field,
        "extra_actions": extra,
        "mismatches": mismatches,
    }
