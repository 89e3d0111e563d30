"""The universal verb vocabulary (paper ``001``, Appendix E) and the template-to-verb table.

Both are plain tables: a new verb is one new row of :data:`VERBS`, a new segmentation
template one new row of :data:`TEMPLATE_VERBS`; nothing else changes. The action types and
sub-roles, ``keep`` and ``hand_over`` among them: docs/ssc.md, "Scene graph and transitions".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strands_robots.errors import LabelValidationError
from strands_robots.ssc.records import ActionType, Role

#: Roles that need an object already in the acting hand.
NEEDS_HELD = frozenset({"release", "tool_release", "keep", "hand_over"})


class UnknownVerbError(LabelValidationError):
    """A label's verb or template is not in the vocabulary; nothing was built."""


@dataclass(frozen=True)
class Verb:
    """One row of the vocabulary.

    Attributes:
        name: Key (``"pick_up_from"``): the label's words joined by ``_``.
        action_type: ``idle`` | ``grasp`` | ``contact`` | ``tool_use``.
        role: Sub-role driving the scene-graph transition.
        stem: Normalised verb stored in ``ActionEntry.action_verb`` (``"pick"``).
        phrase: Words used when rendering (``"pick up"``); the first word is conjugated.
        preps: Prepositions of the secondary objects, in order (``("from",)``).
        motion: True for base-motion verbs (the entry's ``st_motion`` becomes ``move``).
        implied_obj: Object named by the verb itself (``open_door`` -> ``door``).
        tool_when_held: Generic ``open``/``close``: tool use when the acting hand holds
            something (Appendix E, tool_use persistent).
        source: ``appendix_e`` or ``segments`` (rows added for the template table).
    """

    name: str
    action_type: ActionType
    role: Role
    stem: str
    phrase: str
    preps: tuple[str, ...] = ()
    motion: bool = False
    implied_obj: str | None = None
    tool_when_held: bool = False
    source: str = "appendix_e"


def _v(name: str, action_type: ActionType, role: Role, stem: str, phrase: str | None = None, **kw) -> Verb:
    return Verb(name, action_type, role, stem, phrase or stem, **kw)


_ROWS: list[Verb] = [
    # idle: base motion or navigation (Appendix E)
    _v("idle", "idle", "idle", "idle"),
    _v("move", "idle", "idle", "move", preps=("to",), motion=True),
    _v("move_to", "idle", "idle", "move", preps=("to",), motion=True),
    _v("navigate", "idle", "idle", "navigate", preps=("to",), motion=True),
    _v("navigate_to", "idle", "idle", "navigate", preps=("to",), motion=True),
    # grasp / acquire
    _v("grasp", "grasp", "acquire", "grasp", preps=("from",)),
    _v("pick", "grasp", "acquire", "pick", preps=("from",)),
    _v("pick_up", "grasp", "acquire", "pick", "pick up", preps=("from",)),
    _v("pick_up_from", "grasp", "acquire", "pick", "pick up", preps=("from",)),
    _v("pinch", "grasp", "acquire", "pinch", preps=("from",)),
    _v("hold", "grasp", "acquire", "hold"),
    # grasp / release
    _v("release", "grasp", "release", "release", preps=("on",)),
    _v("place", "grasp", "release", "place", preps=("on",)),
    _v("place_on", "grasp", "release", "place", preps=("on",)),
    _v("place_in", "grasp", "release", "place", preps=("in",)),
    _v("place_on_next_to", "grasp", "release", "place", preps=("on", "next to")),
    _v("place_in_next_to", "grasp", "release", "place", preps=("in", "next to")),
    _v("place_next_to", "grasp", "release", "place", preps=("next to",)),
    _v("place_under", "grasp", "release", "place", preps=("under",)),
    _v("drop", "grasp", "release", "drop", preps=("in",)),
    _v("hand_over", "grasp", "hand_over", "hand_over", "hand over", preps=("to",)),
    _v("hand_over_to", "grasp", "hand_over", "hand_over", "hand over", preps=("to",)),
    # grasp / transient: a hold engaged and released inside the subtask
    _v("open_door", "grasp", "transient", "open", implied_obj="door"),
    _v("close_door", "grasp", "transient", "close", implied_obj="door"),
    _v("open_drawer", "grasp", "transient", "open", implied_obj="drawer"),
    _v("close_drawer", "grasp", "transient", "close", implied_obj="drawer"),
    _v("open_lid", "grasp", "transient", "open", implied_obj="lid"),
    _v("close_lid", "grasp", "transient", "close", implied_obj="lid"),
    _v("pull", "grasp", "transient", "pull"),
    _v("pull_tray", "grasp", "transient", "pull", implied_obj="tray"),
    _v("turn", "grasp", "transient", "turn"),
    _v("turn_to", "grasp", "transient", "turn", preps=("to",)),
    _v("open", "grasp", "transient", "open", tool_when_held=True),
    _v("close", "grasp", "transient", "close", tool_when_held=True),
    # contact: the fingertip touches the object; stateless
    _v("push", "contact", "contact", "push", preps=("to",)),
    _v("push_to", "contact", "contact", "push", preps=("to",)),
    _v("push_tray", "contact", "contact", "push", implied_obj="tray"),
    _v("press", "contact", "contact", "press"),
    _v("dig", "contact", "contact", "dig"),
    _v("poke", "contact", "contact", "poke"),
    _v("tap", "contact", "contact", "tap"),
    _v("turn_on", "contact", "contact", "turn_on", "turn on"),
    _v("turn_off", "contact", "contact", "turn_off", "turn off"),
    _v("turn_on_switch", "contact", "contact", "turn_on", "turn on", implied_obj="switch"),
    _v("turn_off_switch", "contact", "contact", "turn_off", "turn off", implied_obj="switch"),
    _v("tip", "contact", "contact", "tip"),
    _v("tip_over", "contact", "contact", "tip_over", "tip over"),
    # tool_use / persistent: the tool stays in the hand
    _v("smash", "tool_use", "tool_persistent", "smash"),
    _v("stir", "tool_use", "tool_persistent", "stir", preps=("in",)),
    _v("chop", "tool_use", "tool_persistent", "chop"),
    _v("slice", "tool_use", "tool_persistent", "slice"),
    _v("pour", "tool_use", "tool_persistent", "pour", preps=("into",)),
    _v("sweep", "tool_use", "tool_persistent", "sweep"),
    _v("sweep_surface", "tool_use", "tool_persistent", "sweep", implied_obj="surface"),
    _v("sweep_off", "tool_use", "tool_persistent", "sweep", "sweep off"),
    _v("spray", "tool_use", "tool_persistent", "spray"),
    _v("ignite", "tool_use", "tool_persistent", "ignite"),
    _v("wipe", "tool_use", "tool_persistent", "wipe"),
    _v("wipe_hard", "tool_use", "tool_persistent", "wipe", "wipe hard"),
    # tool_use / tool-release: the held tool is transferred to the target
    _v("insert", "tool_use", "tool_release", "insert", preps=("into",)),
    _v("hang", "tool_use", "tool_release", "hang", preps=("on",)),
    _v("attach", "tool_use", "tool_release", "attach", preps=("to",)),
    # rows the segmentation templates need (docs/ssc.md: template-to-verb table)
    _v("wait", "idle", "idle", "wait", preps=("for",), source="segments"),
    _v("slide_out", "grasp", "transient", "slide", "slide out", source="segments"),
    _v("slide_in", "grasp", "transient", "slide", "slide in", source="segments"),
    _v("stack", "grasp", "release", "stack", preps=("on top of",), source="segments"),
    _v("hold_under", "grasp", "keep", "hold", preps=("under",), source="segments"),
    _v("shake", "grasp", "transient", "shake", source="segments"),
    _v("tilt", "grasp", "transient", "tilt", source="segments"),
    _v("rotate", "grasp", "transient", "rotate", source="segments"),
    _v("agitate", "grasp", "transient", "agitate", source="segments"),
    _v("push_down", "contact", "contact", "push_down", "push down", source="segments"),
    _v("set", "contact", "contact", "set", preps=("to",), source="segments"),
    _v("adjust", "contact", "contact", "adjust", preps=("to",), source="segments"),
    _v("wash", "contact", "contact", "wash", source="segments"),
    _v("dump", "tool_use", "tool_persistent", "pour", "dump", preps=("into",), source="segments"),
    _v("scrub", "tool_use", "tool_persistent", "scrub", source="segments"),
    _v("press_against", "tool_use", "tool_persistent", "press", preps=("against",), source="segments"),
    _v("bring", "grasp", "acquire", "bring", source="segments"),
    _v("pass", "grasp", "release", "pass", preps=("to",), source="segments"),
    _v("rotate_held", "grasp", "keep", "rotate", source="segments"),
    # rows the generic template set needs (reach, grasp, lift, move, place, release, ...)
    _v("reach", "idle", "idle", "reach", preps=("for",), source="segments"),
    _v("lift", "grasp", "keep", "lift", source="segments"),
    _v("carry", "grasp", "keep", "move", preps=("to",), source="segments"),
    _v("move_arm", "idle", "idle", "move", source="segments"),
    _v("set_down", "grasp", "keep", "place", preps=("on",), source="segments"),
    _v("retract", "idle", "idle", "retract", source="segments"),
    # a label of your own whose words name no verb of the vocabulary: stateless, checked for
    # continuity only (the holding state is carried across it unchanged)
    _v("custom", "contact", "contact", "do", source="segments"),
]

#: The vocabulary: verb key -> row. Add a verb by adding one row.
VERBS: dict[str, Verb] = {row.name: row for row in _ROWS}


def lookup_verb(name: str) -> Verb:
    """Row of a verb key (``"pick up from"`` and ``"pick_up_from"`` are the same key).

    Raises:
        UnknownVerbError: not in :data:`VERBS`; the message says how to add it.
    """
    key = normalize_verb(name)
    row = VERBS.get(key)
    if row is None:
        raise UnknownVerbError(
            f"verb {name!r} is not in the SSC vocabulary (paper Appendix E); add one row to "
            "strands_robots.ssc.verbs.VERBS with its action type and role, e.g. "
            f"VERBS[{key!r}] = Verb({key!r}, 'grasp', 'acquire', {key.split('_')[0]!r}, ...)."
        )
    return row


def normalize_verb(text: str) -> str:
    """``"Pick up  from"`` -> ``"pick_up_from"``."""
    return "_".join(text.strip().lower().replace("-", " ").replace("_", " ").split())


def match_verb_prefix(words: list[str]) -> tuple[Verb, int] | None:
    """Longest vocabulary verb that starts ``words``; returns ``(row, words used)``."""
    for n in range(len(words), 0, -1):
        row = VERBS.get("_".join(words[:n]))
        if row is not None:
            return row, n
    return None


@dataclass(frozen=True)
class TemplateVerb:
    """How a segmentation template maps onto the vocabulary.

    Attributes:
        template_id: Id of ``strands_robots.segments`` (docs/segments.md, "Templates").
        verb: Key of :data:`VERBS`.
        obj_slot: Slot that holds the action's object, None for none.
        targets: ``(slot, preposition)`` of secondary objects; a preposition of
            ``"{relation}"`` takes the instance's ``relation`` modifier.
        cond_modifiers: Modifiers copied into ``action_cond`` (``orientation``...).
        obj_cond: Fixed object features (A2's ``start button``, A3's ``lever``).
        variants: ``variant`` modifier value -> verb key overriding ``verb``.
        verb_without_obj: Verb key used when the object slot is empty (the generic
            ``move``: the arm carries an object, or moves empty).
    """

    template_id: str
    verb: str
    obj_slot: str | None = None
    targets: tuple[tuple[str, str], ...] = ()
    cond_modifiers: tuple[str, ...] = ("relation", "orientation", "setting", "direction")
    obj_cond: tuple[str, ...] = ()
    variants: dict[str, str] = field(default_factory=dict)
    verb_without_obj: str | None = None


def _t(template_id: str, verb: str, obj_slot: str | None = None, *targets: tuple[str, str], **kw) -> TemplateVerb:
    return TemplateVerb(template_id, verb, obj_slot, tuple(targets), **kw)


_TEMPLATE_ROWS: list[TemplateVerb] = [
    _t("N1", "navigate_to", None, ("destination", "to")),
    _t("O1", "open", "target"),
    _t("C1", "close", "target"),
    _t("S1", "slide_out", "target"),
    _t("S2", "slide_in", "target"),
    _t("P1", "pick_up", "theme", ("source", "from")),
    _t("L1", "place_in", "theme", ("destination", "in")),
    _t("L2", "place_on", "theme", ("destination", "on")),
    _t("L3", "place_under", "theme", ("destination", "under")),
    _t("L4", "place", "theme", ("destination", "{relation}"), cond_modifiers=("orientation",)),
    _t("L5", "stack", "theme", ("destination", "on top of")),
    _t("R1", "dump", "theme", ("destination", "{relation}"), cond_modifiers=()),
    _t("M1", "push_to", "theme", ("destination", "to")),
    _t("H1", "hold_under", "theme", ("target", "under")),
    _t("A1", "turn_on", "target"),
    _t("A2", "press", "target", obj_cond=("start button",)),
    _t("A3", "push_down", "target", obj_cond=("lever",)),
    _t("D1", "turn_off", "target"),
    _t("J1", "set", "target"),
    _t("J2", "adjust", "target"),
    _t("T1", "stir", "theme", ("target", "in")),
    _t("B1", "scrub", "target", variants={"by hand": "wash", "wash": "wash", "wipe": "wipe"}),
    _t("G1", "agitate", "target", variants={"shake": "shake", "tilt": "tilt", "rotate": "rotate"}),
    _t("Q1", "press_against", "theme", ("target", "against")),
    _t("X1", "wait", None, ("target", "for")),
    # terminal interval and the cohorts of docs/segments.md, "Templates"
    _t("TASK_COMPLETE", "idle"),
    _t("AGIBOT_PICK", "pick"),
    _t("AGIBOT_PLACE", "place"),
    _t("AGIBOT_IDLE", "idle"),
    _t("ALLEX_BRING_OBJECT", "bring"),
    _t("ALLEX_PASS_OBJECT", "pass"),
    _t("ALLEX_ROTATE_BOX", "rotate_held"),
    _t("ALLEX_ROTATE_POLYBAG", "rotate_held"),
    # the generic set (docs/segments.md, "Template sets"): reach, grasp, lift, move, place
    # (still grasped), release, ... one row per template
    _t("G_REACH", "reach", "target"),
    _t("G_GRASP", "grasp", "theme"),
    _t("G_LIFT", "lift", "theme"),
    _t("G_MOVE", "carry", "theme", ("destination", "to"), verb_without_obj="move_arm"),
    _t("G_PLACE", "set_down", "theme", ("destination", "on")),
    _t("G_RELEASE", "release", "theme"),
    _t("G_PICK_UP", "pick_up", "theme"),
    _t("G_PUSH", "push", "theme"),
    _t("G_PULL", "pull", "theme"),
    _t("G_OPEN", "open", "target"),
    _t("G_CLOSE", "close", "target"),
    _t("G_POUR", "pour", "theme", ("destination", "into")),
    _t("G_WIPE", "wipe", "target"),
    _t("G_INSERT", "insert", "theme", ("destination", "into")),
    _t("G_ROTATE", "rotate", "theme"),
    _t("G_PRESS", "press", "target"),
    _t("G_HAND_OVER", "hand_over", "theme"),
    _t("G_NAVIGATE", "navigate_to", None, ("destination", "to")),
    _t("G_RETRACT", "retract"),
    _t("G_IDLE", "idle"),
]

#: Segmentation template id -> how it maps onto the vocabulary. One row per template.
TEMPLATE_VERBS: dict[str, TemplateVerb] = {row.template_id: row for row in _TEMPLATE_ROWS}


def check_tables() -> list[str]:
    """Problems in the two tables (every template verb must be a vocabulary row)."""
    return [
        f"template {row.template_id} names unknown verb {v!r}"
        for row in _TEMPLATE_ROWS
        for v in (row.verb, *row.variants.values(), *([row.verb_without_obj] if row.verb_without_obj else []))
        if v not in VERBS
    ]
