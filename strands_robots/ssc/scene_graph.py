"""Scene-graph configurations (paper ``001``, Table 1) and the transition tables (Appendix C).

:func:`configuration` names a snapshot's configuration (E, L, R, D, Dd, S, D?).
:func:`advance` applies one entry's actions to a before-state and returns the after-state
with the violations met on the way. It is the single implementation of Tables 4-6: the
builder uses it to advance the running state, the checker to re-derive every entry's
after-state, so the two can never disagree on what a transition means.

Nothing is overwritten silently: an acquire on a hand that already holds a different
object leaves the hand as it was and reports ``acquire_while_holding`` (the paper's
known gap g1); a release of an object nobody holds reports ``release_without_hold``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

import msgspec

from strands_robots.ssc.records import HANDS, ActionEntry, SceneGraph, other_hand

#: The seven configurations of Table 1, with their description.
CONFIGURATIONS: dict[str, str] = {
    "E": "both hands empty",
    "L": "only left holds",
    "R": "only right holds",
    "D": "different objects",
    "Dd": "same-named, confirmed different instances",
    "S": "same physical object (co-grasp)",
    "D?": "same-named, identity unresolved",
}

_INSTANCE = re.compile(r"_\d+$")


def base_name(obj: str | None) -> str | None:
    """Object name without its instance index: ``pillar_candle_89`` -> ``pillar_candle``.

    BEHAVIOR-1K ids end in ``_<n>``; the parser keeps the index (Appendix E) and
    identity decisions use both the full id and this base name.
    """
    if obj is None:
        return None
    return _INSTANCE.sub("", obj.strip().lower())


def has_instance_index(obj: str | None) -> bool:
    """Whether ``obj`` carries an instance index (``radio_89``)."""
    return obj is not None and bool(_INSTANCE.search(obj.strip()))


def same_name(a: str | None, b: str | None) -> bool:
    """Whether two object ids name the same kind of object (equal base names)."""
    return a is not None and b is not None and base_name(a) == base_name(b)


def matches(held: str | None, obj: str | None) -> bool:
    """Whether a held object answers to the name ``obj`` (None matches anything held).

    Two instance ids (``candle_89`` / ``candle_90``) must be equal; a name without an
    index (``candle``) matches any instance of that name.
    """
    if held is None:
        return False
    if obj is None or held == obj:
        return True
    if has_instance_index(held) and has_instance_index(obj):
        return False
    return base_name(held) == base_name(obj)


def configuration(g: SceneGraph) -> str:
    """Table 1 configuration of a snapshot.

    Returns:
        ``E``, ``L``, ``R``, ``D``, ``Dd``, ``S`` or ``D?``. Objects of unresolved arm
        (``uncertain_objects``) do not change the configuration; see ``SceneGraph.confirmed``.
    """
    left, right = g.obj_in_left_hand, g.obj_in_right_hand
    if left is None and right is None:
        return "E"
    if right is None:
        return "L"
    if left is None:
        return "R"
    if g.holding_same_object is True:
        return "S"
    if g.holding_same_object == "unsure":
        return "D?"
    return "Dd" if same_name(left, right) else "D"


@dataclass(frozen=True)
class Violation:
    """A rule broken while applying an action (becomes an :class:`Anomaly` in the checker)."""

    invariant: str
    kind: str
    arm: str
    action_idx: int | None
    explanation: str


def _violation(out: list[Violation], action_idx: int, invariant: str, kind: str, arm: str, text: str) -> None:
    out.append(Violation(invariant, kind, arm, action_idx, text))


def _set(g: SceneGraph, hand: str, obj: str | None, **kw) -> SceneGraph:
    field = "obj_in_left_hand" if hand == "left" else "obj_in_right_hand"
    out = msgspec.structs.replace(g, **{field: obj}, **kw)
    if out.obj_in_left_hand is None or out.obj_in_right_hand is None:
        out = msgspec.structs.replace(out, holding_same_object=False)
    return out


def advance(before: SceneGraph, actions: list[ActionEntry]) -> tuple[SceneGraph, list[Violation]]:
    """Apply one entry's actions in order (Tables 4, 5, 6; Appendix E mapping).

    Args:
        before: ``g_{k-1}``.
        actions: ``A_k``.

    Returns:
        ``(g_k, violations)``. Transient, contact, persistent tool-use, keep and idle
        actions leave the state unchanged (transient holds are cleared at the subtask
        boundary).
    """
    g = before
    out: list[Violation] = []
    for i, a in enumerate(actions):
        bad = partial(_violation, out, i)
        o = a.action_obj
        if a.role == "acquire":
            g = _acquire(g, a, bad)
        elif a.role in ("release", "tool_release"):
            g = _release(g, a, bad)
        elif a.role in ("hand_over", "take_over"):
            giver = a.arm if a.role == "hand_over" else (a.receiver or other_hand(a.arm))
            receiver = a.receiver if a.role == "hand_over" else a.arm
            if giver not in HANDS or receiver not in HANDS or giver == receiver:
                bad(
                    "I4",
                    "handover_arms",
                    a.arm,
                    f"hand-over needs a giver and a different receiver, got {giver}->{receiver}",
                )
                continue
            held = g.hand(giver)
            if not matches(held, o):
                bad("I4", "handover_giver_not_holding", giver, f"{giver} arm gives {o} but holds {held or 'nothing'}")
                continue
            if g.hand(receiver) is not None:
                bad(
                    "I4",
                    "handover_receiver_occupied",
                    receiver,
                    f"{receiver} arm receives {o} but already holds {g.hand(receiver)}",
                )
                continue
            g = _set(_set(g, giver, None), receiver, held)
        elif a.role == "keep" and a.arm in HANDS and not matches(g.hand(a.arm), o) and o not in g.uncertain_objects:
            held = g.hand(a.arm) or "nothing"
            bad("I2", "object_not_held", a.arm, f"{a.arm} arm keeps {o} but holds {held}")
        # transient, contact, tool_persistent, idle: stateless
    return g, out


def _acquire(g: SceneGraph, a: ActionEntry, bad) -> SceneGraph:
    o = a.action_obj or "object"
    if a.arm in HANDS:
        hand, other = a.arm, other_hand(a.arm)
        held = g.hand(hand)
        if held is not None:
            if held != o:
                bad(
                    "I2",
                    "acquire_while_holding",
                    hand,
                    f"{hand} arm acquires {o} while still holding {held} (not overwritten)",
                )
            return g
        g = msgspec.structs.replace(g, uncertain_objects=tuple(x for x in g.uncertain_objects if x != o))
        other_obj = g.hand(other)
        g = _set(g, hand, o)
        if other_obj is not None:  # undeclared: identical names are D? (identity not established), else D or Dd
            same = a.same_object if a.same_object is not None else ("unsure" if other_obj == o else False)
            g = msgspec.structs.replace(g, holding_same_object=same)
        return g
    if a.arm == "coop" or (a.arm == "unsure" and a.same_object == "unsure"):
        same = True if a.arm == "coop" else "unsure"
        for hand in HANDS:
            held = g.hand(hand)
            if held is not None and not matches(held, o):
                bad(
                    "I2",
                    "acquire_while_holding",
                    hand,
                    f"{a.arm} acquire of {o} while {hand} arm holds {held} (not overwritten)",
                )
                return g
        return msgspec.structs.replace(
            g,
            obj_in_left_hand=g.obj_in_left_hand or o,
            obj_in_right_hand=g.obj_in_right_hand or o,
            holding_same_object=same,
        )
    # arm unresolved, single hand: keep the object without guessing the hand
    if o not in g.uncertain_objects:
        g = msgspec.structs.replace(g, uncertain_objects=(*g.uncertain_objects, o))
    return g


def _release(g: SceneGraph, a: ActionEntry, bad) -> SceneGraph:
    o = a.action_obj
    what = o or "its object"
    if a.arm in HANDS:
        hand, other = a.arm, other_hand(a.arm)
        held = g.hand(hand)
        if held is None:
            if o is not None and o in g.uncertain_objects:
                return msgspec.structs.replace(g, uncertain_objects=tuple(x for x in g.uncertain_objects if x != o))
            bad("I1", "release_without_hold", hand, f"{hand} arm releases {what} but holds nothing")
            return g
        if not matches(held, o) and a.role == "release":
            bad("I2", "object_mismatch", hand, f"{hand} arm releases {o} but holds {held}")
            return g
        if g.holding_same_object is True and g.hand(other) == held:
            return _set(_set(g, hand, None), other, None)  # cooperative release (Table 5, S -> L/R)
        return _set(g, hand, None)
    holders = [h for h in HANDS if matches(g.hand(h), o)]
    if a.arm == "coop":
        if not holders:
            return _release_uncertain(g, a, bad)
        if len(holders) == 1 and g.holding_same_object is not True:
            bad(
                "I1", "release_arm_mismatch", "coop", f"cooperative release of {what} held by the {holders[0]} arm only"
            )
        for h in holders:
            g = _set(g, h, None)
        return g
    # arm == "unsure"
    if g.holding_same_object == "unsure" and len(holders) == 2:
        bad(
            "I2",
            "identity_unresolved",
            "unsure",
            f"release of {what} from D? (same object or two instances unresolved)",
        )
        return _set(_set(g, "left", None), "right", None)
    if len(holders) == 1:
        return _set(g, holders[0], None)
    if len(holders) == 2:
        bad("I2", "identity_unresolved", "unsure", f"release of {what} by an unresolved arm while both hands hold one")
        return g
    return _release_uncertain(g, a, bad)


def _release_uncertain(g: SceneGraph, a: ActionEntry, bad) -> SceneGraph:
    o = a.action_obj
    if o is not None and o in g.uncertain_objects:
        return msgspec.structs.replace(g, uncertain_objects=tuple(x for x in g.uncertain_objects if x != o))
    if o is None and g.uncertain_objects:
        return msgspec.structs.replace(g, uncertain_objects=g.uncertain_objects[1:])
    bad("I1", "release_without_hold", a.arm, f"{a.arm} release of {o or 'an object'} but no hand holds it")
    return g
