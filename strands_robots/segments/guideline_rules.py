"""Guideline rule checks over a parsed segmentation (docs/segments.md, "Validation and findings").

Each function takes the parsed segments (in start order) and a :class:`Context` and
returns findings of one kind. :data:`COHORT_RULES` says which run for which cohort.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_robots.segments.findings import Finding
from strands_robots.segments.lexicon import (
    bundled_action,
    control_of,
    count_requirement,
    is_group_noun,
    is_stateful_control,
)
from strands_robots.segments.motion import base_speed, smooth
from strands_robots.segments.parse import TemplateInstance


@dataclass(frozen=True)
class Seg:
    """A parsed segment: ``[start, end)`` in frames, its instance and its label text.

    ``index`` is the segment's position in the caller's list (what findings refer to).
    """

    index: int
    start: int
    end: int
    instance: TemplateInstance
    label: str

    @property
    def tid(self) -> str:
        return self.instance.template_id

    @property
    def op(self) -> str:
        return self.instance.operation

    def slot(self, name: str) -> str:
        return self.instance.slots.get(name, "")


@dataclass(frozen=True)
class Context:
    """Inputs of the rules: episode length, cohort, task text, base velocity and its threshold."""

    length: int
    cohort: str
    task: str | None
    base_velocity: Any
    base_speed_threshold: float
    smooth_frames: int


Rule = Callable[[list[Seg], Context], Iterable[Finding]]


def _f(kind: str, segs: list[Seg] | Seg, message: str, severity: str = "error") -> Finding:
    group = [segs] if isinstance(segs, Seg) else segs
    return Finding(
        kind, min(s.start for s in group), max(s.end for s in group), message, severity, tuple(s.index for s in group)
    )


def _skipped(kind: str, ctx: Context, why: str) -> Finding:
    return Finding(kind, 0, ctx.length, f"not checked: {why}", "skipped")


# -- section 4: activation controls --------------------------------------------------------------


def activation_control(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """Coffee machine only A2; toaster and electric kettle only A3; toaster oven temperature knob always J1."""
    for s in segs:
        if s.op not in ("activate", "deactivate"):
            continue
        control = control_of(s.slot("target"))
        why = None
        if s.op == "activate":
            if control == "coffee machine" and s.tid != "A2":
                why = "the coffee machine is activated only by A2: 'press the start button on the coffee machine'"
            elif control in ("toaster", "electric kettle") and s.tid != "A3":
                why = f"the {control} is activated only by A3: 'push down the lever of the {control}'"
            elif s.tid == "A2" and control != "coffee machine":
                why = (
                    f"A2 is for the coffee machine only; use A1 'turn on the {s.slot('target')}' (the microwave start "
                    "button is 'turn on the microwave')"
                )
            elif s.tid == "A3" and control not in ("toaster", "electric kettle"):
                why = "A3 is for the toaster and the electric kettle only; use A1"
        if why:
            yield _f("activation_control", s, why)
        if control == "toaster oven temperature knob":
            yield _f(
                "activation_control",
                s,
                "the toaster oven temperature knob is always adjust (J1 'set the toaster oven temperature knob to "
                "<level>'), even from off; the toaster oven is turned on by its timer (A1 'turn on the toaster oven')",
            )


def control_semantics(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """off->on = activate, on->other level = adjust, on->off = deactivate (state tracked per control)."""
    state: dict[str, str] = {}  # control -> "on" | "off"; absent = unknown (state before the episode)
    for s in segs:
        if s.op not in ("activate", "deactivate", "adjust") or s.tid == "J2":
            continue
        control, target = control_of(s.slot("target")), s.slot("target")
        to_off = s.tid == "J1" and s.instance.modifiers.get("setting", "") == "off"
        if not to_off and not is_stateful_control(control):
            continue
        before = state.get(control)
        state[control] = "off" if to_off or s.op == "deactivate" else "on"
        if to_off:
            why = f"setting the {target} to off is on->off: label it deactivate (D1 'turn off the ...')"
        elif s.op == "activate" and before == "on":
            name = control.replace("burner:", "burner ").strip()
            why = f"the {name} is already on: a level change is adjust (J1 'set the ... to <level>')"
        elif s.op == "deactivate" and before == "off":
            why = f"the {target} is already off since an earlier deactivate"
        elif s.op == "adjust" and before == "off":
            why = f"the {target} is off: off->on is activate (A1 'turn on the ... to <level>'), not adjust"
        else:
            continue
        yield _f("control_semantics", s, why)


# -- section 1 ------------------------------------------------------------------------------------

_PLURAL_DOORS = re.compile(r"\b(?:doors|drawers|lids|both)\b| and ")


def one_segment_per_door(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """One open/close segment per door or drawer (two-door cabinets -> two segments)."""
    for i, s in enumerate(segs):
        if s.tid not in ("O1", "C1"):
            continue
        if _PLURAL_DOORS.search(s.slot("target")):
            yield _f(
                "one_segment_per_door",
                s,
                f"{s.label!r} covers several doors/drawers: label one {s.op} segment per door (two-door cabinets -> "
                "two segments)",
            )
        elif i > 0 and segs[i - 1].tid == s.tid and segs[i - 1].slot("target") == s.slot("target"):
            yield _f(
                "one_segment_per_door",
                [segs[i - 1], s],
                f"two consecutive '{s.label}' segments: one {s.op} segment per door (merge them, regrasps included)",
                "warning",
            )


def _neighbour(segs: list[Seg], i: int, step: int, skip: tuple[str, ...]) -> Seg | None:
    j = i + step
    while 0 <= j < len(segs) and segs[j].op in skip:
        j += step
    return segs[j] if 0 <= j < len(segs) else None


def pour_sequence(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """Pouring: pick up the container -> dump ... -> place the container (navigate may come between)."""
    for i, s in enumerate(segs):
        if s.tid != "R1":
            continue
        before = _neighbour(segs, i, -1, ("navigate", "pour"))
        after = _neighbour(segs, i, 1, ("navigate", "pour"))
        if before is None or before.tid != "P1":
            yield _f(
                "pour_sequence", s, "a dump must follow 'pick up the <container> ...' (pour = pick -> dump -> place)"
            )
        elif after is None or after.op != "place":
            yield _f(
                "pour_sequence",
                s,
                f"after dumping, place the container ('place the {before.slot('theme')} ...'): pour = pick -> dump -> "
                "place",
            )
        elif after.slot("theme") != before.slot("theme"):
            yield _f(
                "pour_sequence",
                [before, s, after],
                f"the container picked ({before.slot('theme')!r}) is not the one placed after the dump "
                f"({after.slot('theme')!r})",
                "warning",
            )


def hold_running_water(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """hold only for an object kept grasped under running water; the faucet on/off are own segments."""
    for i, s in enumerate(segs):
        if s.tid != "H1":
            continue
        if control_of(s.slot("target")) != "sink faucet":
            yield _f("hold_running_water", s, "hold is only under running water: 'hold the ... under the sink faucet'")
            continue
        state = None
        for prev in segs[:i]:
            if prev.op in ("activate", "deactivate") and control_of(prev.slot("target")) == "sink faucet":
                state = prev.op
        if state == "deactivate":
            yield _f(
                "hold_running_water",
                s,
                "the sink faucet was turned off before this hold; an object under no running water is not 'hold' "
                "(set down in the sink: place + wait)",
            )
        elif state is None:
            yield _f(
                "hold_running_water",
                s,
                "no 'turn on the sink faucet' segment before this hold; turning the faucet on is its own activate "
                "segment (unless it was already running)",
                "warning",
            )


def count_task(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """Count-based tasks: each instance its own pick + place pair; group nouns forbidden.

    The number of instances comes from :func:`count_requirement`: a per-receptacle
    distribution multiplies (``two ice cubes in each of the three glasses`` needs 6 pairs).
    """
    if ctx.task is None:
        yield _skipped("count_task_pairs", ctx, "this rule needs the task text (task=...)")
        yield _skipped("count_task_group_noun", ctx, "this rule needs the task text (task=...)")
        return
    requirement = count_requirement(ctx.task)
    if requirement is None:
        return
    count, per_receptacle = requirement
    for s in segs:
        if s.op in ("pick", "place") and is_group_noun(s.slot("theme")):
            yield _f(
                "count_task_group_noun",
                s,
                f"the task {ctx.task!r} depends on a count or a per-receptacle distribution: label each instance as "
                f"its own pick + place pair, no group noun ({s.slot('theme')!r})",
            )
    pairs = 0
    pending: Seg | None = None
    for s in segs:
        if s.tid == "P1":
            if pending is not None:
                yield _f(
                    "count_task_pairs",
                    pending,
                    "this pick has no place before the next pick; each instance is its own pick + place pair",
                )
            pending = s
        elif s.op == "place" and pending is not None:
            pairs += 1
            pending = None
    if pending is not None:
        yield _f("count_task_pairs", pending, "this pick is never followed by a place")
    if pairs < count:
        yield Finding(
            "count_task_pairs",
            0,
            ctx.length,
            f"the task {ctx.task!r} needs at least {count} pick + place pairs (one per instance"
            f"{', every receptacle counted' if per_receptacle else ''}); found {pairs}",
            "error",
            tuple(s.index for s in segs if s.op in ("pick", "place")),
        )


def stir_utensil(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """T1: the utensil is grasped in a preceding pick segment (and not put down before the stir).

    The objects in hand are tracked through the episode: a pick (P1) takes its theme, a
    place of the same theme puts it down. A stir with nothing in hand but what it stirs
    or stirs in has no utensil.
    """
    held: list[str] = []
    for s in segs:
        if s.tid == "P1":
            held.append(s.slot("theme"))
        elif s.op == "place" and s.slot("theme") in held:
            held.remove(s.slot("theme"))
        elif s.tid == "T1" and not [h for h in held if h not in {s.slot("theme"), s.slot("target")}]:
            yield _f(
                "stir_utensil",
                s,
                f"{s.label!r} has no utensil in hand: the utensil is grasped in a preceding pick segment ('pick up "
                "the spoon from the ...') that is not placed again before the stir",
            )


def bundled_actions(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """Never bundle two actions in one label ('pick up X and place it in Y' is two segments)."""
    for s in segs:
        if second := bundled_action(s.label):
            yield _f(
                "bundled_actions", s, f"{s.label!r} bundles a second action ('{second}'): split it into two segments"
            )


def navigate_base_motion(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """navigate only where the base moves (checked against the base velocity)."""
    navigates = [s for s in segs if s.op == "navigate"]
    if not navigates:
        return
    if ctx.base_velocity is None:
        needs = "this rule needs the base velocity (base_velocity=..., or a dataset with a base-velocity feature)"
        yield _skipped("navigate_base_motion", ctx, needs)
        return
    speed = smooth(base_speed(ctx.base_velocity, ctx.length), ctx.smooth_frames)
    for s in navigates:
        window = speed[s.start : s.end]
        if window.size == 0 or np.all(np.isnan(window)):
            yield _f("navigate_base_motion", s, "no base velocity values in this segment (NaN)", "skipped")
        elif (peak := float(np.nanmax(window))) < ctx.base_speed_threshold:
            yield _f(
                "navigate_base_motion",
                s,
                f"the base does not move here (peak smoothed speed {peak:.3g} < {ctx.base_speed_threshold:g}); "
                "arm-only reaches fold into the following segment",
            )


def pick_without_source(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """The source-less pick alias exists only for compatibility with official labels."""
    for s in segs:
        if s.tid == "P1" and not s.slot("source"):
            why = f"{s.label!r} has no source; give it whenever it is identifiable ('... from the counter')"
            yield _f("pick_without_source", s, why, "warning")


def trailing_wait(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """wait is mid-episode; the idle tail after the last subtask is TASK_COMPLETE."""
    if segs and segs[-1].op == "wait" and segs[-1].end >= ctx.length:
        why = "a wait at the end of the episode is the idle tail: label it TASK_COMPLETE"
        yield _f("trailing_wait", segs[-1], why, "warning")


def repeated_navigate(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """Two navigate segments in a row to the same destination are one (shuffling folds)."""
    for a, b in zip(segs, segs[1:], strict=False):
        if a.tid == b.tid == "N1" and a.slot("destination") == b.slot("destination"):
            yield _f(
                "repeated_navigate",
                [a, b],
                f"two consecutive '{b.label}' segments; shuffling in front of the same fixture folds into the "
                "following manipulation segment",
                "warning",
            )


def group_noun_role(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """A group noun only in a role that admits ``group_noun`` (section 3 roles column)."""
    for s in segs:
        for slot in s.instance.template.slots:
            value = s.slot(slot.name)
            if value and "object" in slot.types and "group_noun" not in slot.types and is_group_noun(value):
                why = f"{slot.name} of {s.tid} takes one object, not the group {value!r}"
                yield _f("group_noun_role", s, why, "warning")


_LOOSE_LID = re.compile(r"\b(?:blender|saucepan|pot|pan|jar|container|tupperware)\b.*\blid\b|^lid$")


def open_close_target(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """open/close only hinged/sliding fixture parts; container lids are objects (pick/place)."""
    for s in segs:
        if s.tid in ("O1", "C1") and _LOOSE_LID.search(s.slot("target")):
            why = (
                f"the {s.slot('target')} is a loose object: 'pick up the lid from the ...' / 'place the lid on the ...'"
            )
            yield _f("open_close_target", s, why)


def slide_target(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """slide only racks and trays; drawers are open/close."""
    for s in segs:
        if s.op == "slide" and not re.search(r"\b(?:rack|tray)\b", s.slot("target")):
            yield _f("slide_target", s, f"slide is for racks and trays; {s.slot('target')!r} is opened/closed (O1/C1)")


# -- sections 7 and 8 -----------------------------------------------------------------------------


def agibot_alternation(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """Pick and Place alternate, starting with Pick and ending with Place; Idle only between a Place and a Pick."""
    pending: Seg | None = None
    for s in segs:
        if s.tid == "AGIBOT_PICK":
            if pending is not None:
                why = "two Picks without a Place between them: Pick and Place alternate"
                yield _f("agibot_alternation", [pending, s], why)
            pending = s
        elif s.tid == "AGIBOT_PLACE":
            if pending is None:
                yield _f("agibot_alternation", s, "a Place without a Pick before it: Pick and Place alternate")
            pending = None
        elif s.tid == "AGIBOT_IDLE" and pending is not None:
            yield _f(
                "agibot_alternation",
                [pending, s],
                "Idle between a Pick and its Place: the Place covers carrying the item; Idle is only before the first "
                "Pick, after the last Place or between a Place and the next Pick",
            )
        elif s.tid == "TASK_COMPLETE" and pending is not None:
            yield _f("agibot_alternation", pending, "the last Pick has no Place")
            pending = None
    if pending is not None:
        yield _f("agibot_alternation", pending, "the last Pick has no Place: frames after the last Place are Idle")


def allex_rules(segs: list[Seg], ctx: Context) -> Iterator[Finding]:
    """The Allex start/end rules are pending transcription (section 8): always reported as skipped."""
    why = "the start and end rules of the Allex labels are pending transcription; compare with the reference examples"
    yield _skipped("allex_rules", ctx, why)


COHORT_RULES: dict[str, tuple[Rule, ...]] = {
    "robocasa365": (
        activation_control,
        control_semantics,
        one_segment_per_door,
        pour_sequence,
        hold_running_water,
        count_task,
        stir_utensil,
        bundled_actions,
        navigate_base_motion,
        pick_without_source,
        trailing_wait,
        repeated_navigate,
        group_noun_role,
        open_close_target,
        slide_target,
    ),
    "agibot": (agibot_alternation,),
    "allex": (allex_rules,),
}
