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
        seen: set[tuple[str, str]] = {(e.arm, e.kind) for e in evs if in_window(e.frame, start, end, tolerance)}
        recorded = {(arm, kind) for arm, kinds in (entry.actions_gripper or {}).items() for kind in kinds.split("+")}
        for i, a in enumerate(entry.actions):
            timed = a.role in ("acquire", "release") and a.action_type == "grasp" and not a.inferred
            row = trigger(a, before)
            if row is None and not timed:
                continue
            kind = "close" if a.role == "acquire" else "open"
            needed, any_of = row or ([(h, kind) for h in HANDS], True)  # an unresolved arm: either gripper
            what = f"st{entry.st_idx}: {a.action_dscp or a.verb}"
            missing = _missing(needed, any_of, seen) if timed or a.role in ("hand_over", "take_over") else []
            if missing and timed:
                frames, where = _nearest(evs, missing, start, end)
                who = (" or " if any_of else " and ").join(arm for arm, _ in missing)
                text = f"no {kind} event of the {who} gripper in [{start}, {end}] (tolerance {tolerance})"
                add("I3", "annotation_timing", a.arm, frames, f"{what}: {text}; {where}", i)
            elif missing:
                (giver, _), (receiver, _) = needed
                add(
                    "I4",
                    "handover_missing_events",
                    giver,
                    [start, end],
                    f"st{entry.st_idx}: hand-over {giver}->{receiver} needs a {giver} open and a {receiver} close "
                    f"in [{start}, {end}]; missing: {', '.join(f'{h} {k}' for h, k in missing)}",
                    i,
                )
            # an event missing from the window is reported once, above; an unresolved arm has no row
            elif row is not None and _missing(needed, any_of, recorded):
                need = (" or " if any_of else " and ").join(f"{h} {k}" for h, k in needed)
                has = f"records {entry.actions_gripper}" if entry.actions_gripper else "records no gripper event"
                text = f"its transition row (Appendix C) needs {need}, but the entry {has}"
                add("I3", "gripper_signature_mismatch", a.arm, [start, end], f"{what}: {text}", i)
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


def _missing(needed: list[tuple[str, str]], any_of: bool, found: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``(arm, kind)`` events of ``needed`` not in ``found`` (none when ``any_of`` and one is found)."""
    missing = [n for n in needed if n not in found]
    return [] if any_of and len(missing) < len(needed) else missing


def _nearest(evs: list[GripperEvent], missing: list[tuple[str, str]], start: int, end: int) -> tuple[list[int], str]:
    """The frame of the missing event nearest to the window ``[start, end]`` and where it is."""
    found = [e for e in evs if (e.arm, e.kind) in missing]
    near = min(found, key=lambda e: start - e.frame if e.frame < start else max(0, e.frame - end), default=None)
    if near is None:
        return [], "and none in the whole episode"
    gap, side = (start - near.frame, "before") if near.frame < start else (near.frame - end, "after")
    return [near.frame], f"the nearest is at frame {near.frame} ({gap} frames {side} the window)"


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
