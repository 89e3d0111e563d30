"""The template registry, as data (docs/segments.md, "Templates").

Every segment carries exactly one template. A template is one row of :data:`ROWS`:
its id, operation, the document's surface form, the typed roles (slots), the modifier
fields of section 5 it accepts, the forms the parser accepts and the document's
examples. Adding a template is adding one row.

Form grammar (used by :mod:`strands_robots.segments.parse`):

- ``the {slot}``: a noun phrase slot. The article is captured too (``the``/``a``/``an``);
  anything but ``the`` is kept as the modifier ``<slot>_article`` because the document
  gives it meaning (``a`` only when several identical instances qualify).
- ``<field>``: a modifier value: a closed set from the row's ``values`` or the open
  pattern of :data:`MODIFIER_PATTERNS`.
- ``[ ... ]``: an optional part (e.g. the source of ``pick up``, the level of ``turn on``).
- A form may fix modifier values (``wipe the {target}`` is B1 with ``variant: wipe``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from strands_robots.errors import LabelValidationError, did_you_mean

#: Operations of section 3, the AgiBot / Allex operations, the generic set's, ``custom``
#: (a label of a user-defined set whose verb is none of these) and the terminal one.
OPERATIONS = (
    "navigate",
    "open",
    "close",
    "slide",
    "pick",
    "place",
    "pour",
    "push",
    "hold",
    "activate",
    "deactivate",
    "adjust",
    "stir",
    "scrub",
    "agitate",
    "press",
    "wait",
    "idle",
    "bring",
    "pass",
    "rotate",
    "reach",
    "grasp",
    "lift",
    "move",
    "release",
    "pull",
    "wipe",
    "insert",
    "custom",
    "terminal",
)

#: Built-in cohorts (docs/segments.md, "Templates"). ``TASK_COMPLETE`` belongs to every
#: cohort, a user-defined label set's too (:mod:`strands_robots.segments.label_sets`).
COHORTS = ("robocasa365", "agibot", "allex", "generic")

#: How many reference examples define a cohort's convention (docs/segments.md, "Label pool
#: and reference examples"): one or two annotated episodes of the task; the AgiBot cohort's
#: two show the dataset's provided labels; the Allex cohort's start/end rules are pending
#: transcription, so its three reference examples define the convention.
REFERENCE_EXAMPLES = MappingProxyType({"robocasa365": 2, "agibot": 2, "allex": 3, "generic": 2})

TASK_COMPLETE = "TASK_COMPLETE"

#: Open modifier values (regex fragments, lower case). Closed sets live in the rows.
MODIFIER_PATTERNS = MappingProxyType(
    {
        "setting": r"[a-z0-9][a-z0-9.%\-]*(?: [a-z0-9.%\-]+)*",
        "direction": r"[a-z][a-z\-]*(?: [a-z\-]+)?",
        "orientation": (
            r"upside down|upright|right side up|on its side|with the [a-z][a-z\- ]*? facing [a-z][a-z\-]*(?: [a-z\-]+)?"
        ),
    }
)

#: Modifiers whose values come from a closed set or fixed pattern: they count as literal
#: text when two parses of one label compete (see ``parse._score``).
CLOSED_MODIFIERS = frozenset({"relation", "orientation", "variant"})


@dataclass(frozen=True)
class Slot:
    """A typed role of a template (``theme: object, group_noun``)."""

    name: str
    types: tuple[str, ...]
    optional: bool = False


@dataclass(frozen=True)
class Form:
    """One surface form the parser accepts; ``fixed`` are the modifiers it implies."""

    pattern: str
    fixed: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Template:
    """One template row.

    Attributes:
        id: ``N1`` ... ``X1``, ``AGIBOT_PICK`` ..., ``TASK_COMPLETE``.
        operation: One of :data:`OPERATIONS`.
        surface: The surface form as the document writes it.
        slots: Typed roles, in surface order.
        modifiers: Modifier fields (section 5) the template accepts.
        values: Closed value sets of some modifiers (e.g. the relations of L4).
        variants: Verb variants and what they mean (B1 ``wash`` = by hand).
        forms: Accepted forms, canonical first.
        examples: The document's examples (each round-trips through parse/render).
        note: When the operation starts and ends and what is folded into it.
        cohorts: Cohorts the template belongs to.
    """

    id: str
    operation: str
    surface: str
    slots: tuple[Slot, ...]
    forms: tuple[Form, ...]
    examples: tuple[str, ...] = ()
    note: str = ""
    modifiers: tuple[str, ...] = ()
    values: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    variants: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    cohorts: tuple[str, ...] = ("robocasa365",)

    def slot(self, name: str) -> Slot | None:
        """The slot called ``name`` or None."""
        return next((s for s in self.slots if s.name == name), None)

    def to_dict(self) -> dict:
        """JSON-ready description (for a template dropdown)."""
        return {
            "id": self.id,
            "operation": self.operation,
            "surface": self.surface,
            "slots": [{"name": s.name, "types": list(s.types), "optional": s.optional} for s in self.slots],
            "modifiers": list(self.modifiers),
            "values": {k: list(v) for k, v in self.values.items()},
            "variants": dict(self.variants),
            "examples": list(self.examples),
            "note": self.note,
            "cohorts": list(self.cohorts),
        }


def _roles(spec: str) -> tuple[Slot, ...]:
    """``"theme: object, group_noun; source?: fixture"`` -> slots (``?`` = optional)."""
    return tuple(
        Slot(name, tuple(t.strip() for t in types.split(",") if t.strip()), optional == "?")
        for name, optional, types in re.findall(r"(\w+)(\??):([^;]*)", spec)
    )


def _row(
    id: str,
    operation: str,
    surface: str,
    roles: str,
    forms: tuple[str | tuple[str, dict], ...] | None = None,
    *,
    examples: tuple[str, ...] = (),
    note: str = "",
    modifiers: tuple[str, ...] = (),
    values: dict[str, tuple[str, ...]] | None = None,
    variants: dict[str, str] | None = None,
    cohorts: tuple[str, ...] = ("robocasa365",),
) -> Template:
    return Template(
        id=id,
        operation=operation,
        surface=surface,
        slots=_roles(roles),
        forms=tuple(Form(f) if isinstance(f, str) else Form(f[0], MappingProxyType(f[1])) for f in forms or (surface,)),
        examples=examples,
        note=note,
        modifiers=modifiers,
        values=MappingProxyType(dict(values or {})),
        variants=MappingProxyType(dict(variants or {})),
        cohorts=cohorts,
    )


_ORIENTATION = ("orientation",)
_ANY = "object, group_noun, fixture, fixture_part"
_PLACE_ROLES = "theme: object, group_noun; destination: fixture, fixture_part, object"


def _generic(operation: str, form: str, examples: tuple[str, ...], note: str) -> Template:
    """A row of the generic set: its id and surface are the form's (brackets dropped), every slot optional."""
    word = form.split("[")[0]
    return _row(
        f"G_{word.upper().replace(' ', '_')}",
        operation,
        form.replace("[ ", " ").replace("]", ""),
        "; ".join(f"{name}?: {_ANY}" for name in re.findall(r"\{(\w+)\}", form)),
        (form,),
        examples=examples,
        note=note,
        cohorts=("generic",),
    )


#: The registry rows, in the document's order (section 3, then sections 7, 8, the generic
#: set and section 2).
ROWS: tuple[Template, ...] = (
    _row(
        "N1",
        "navigate",
        "navigate to the {destination}",
        "destination: fixture, fixture_part, object",
        examples=(
            "navigate to the fridge",
            "navigate to the cup on the dining counter",
            "navigate to the tupperware with only the fish in it",
        ),
        note="Base motion that brings the robot to face a different fixture/location, with or without an object "
        "in hand. Returning to an earlier location is still 'navigate to' (no 'back'). Shuffling in front of the "
        "same fixture is folded into the following manipulation segment.",
    ),
    _row(
        "O1",
        "open",
        "open the {target}",
        "target: fixture, fixture_part",
        examples=(
            "open the drawer",
            "open the left drawer",
            "open the fridge",
            "open the microwave door",
            "open the electric kettle lid",
            "open the stand mixer head",
            "open the left cabinet door",
        ),
        note="Hinged/sliding fixture parts only: doors, drawers, hinged lids, the stand mixer head. One segment per "
        "door. A button that opens a lid (electric kettle) is O1, not activate. The blender lid is a loose object "
        "-> pick/place.",
    ),
    _row(
        "C1",
        "close",
        "close the {target}",
        "target: fixture, fixture_part",
        examples=(
            "close the dishwasher door",
            "close the microwave door",
            "close the freezer door",
            "close the toaster oven door",
            "close the right cabinet door",
        ),
    ),
    _row(
        "S1",
        "slide",
        "slide the {target} out",
        "target: fixture_part",
        examples=(
            "slide the top oven rack out",
            "slide the toaster oven tray out",
            "slide the top dishwasher rack out",
        ),
        note="Racks and trays only; drawers are open/close.",
    ),
    _row(
        "S2",
        "slide",
        "slide the {target} in",
        "target: fixture_part",
        examples=("slide the oven rack in", "slide the toaster oven tray in"),
    ),
    _row(
        "P1",
        "pick",
        "pick up the {theme} from the {source}",
        "theme: object, group_noun; source?: fixture, fixture_part, object",
        ("pick up the {theme}[ from the {source}]",),
        examples=(
            "pick up the straw from the drawer",
            "pick up a chicken drumstick from the fridge",
            "pick up the larger bowl from the counter",
            "pick up the fish from the top rack of the oven",
            "pick up the lid from the saucepan",
            "pick up the blender lid from the blender",
            "pick up the bowls from the counter",
            "pick up the bowl",
        ),
        note="Approach + grasp + lift, including regrasps after a failed grasp; ends when the object is clear of "
        "its support. Give the source whenever it is identifiable; the source-less alias exists only for "
        "compatibility with official labels. Use 'a' only when several identical instances qualify. Several "
        "objects grasped together -> group noun as theme.",
    ),
    _row(
        "L1",
        "place",
        "place the {theme} in the {destination}",
        _PLACE_ROLES,
        ("place the {theme} in the {destination}[ <orientation>]",),
        examples=(
            "place the bowl in the dishwasher",
            "place the straw in the glass cup",
            "place the steak in the empty tupperware",
            "place the mug in the left sink basin",
            "place the mug in the dish rack upside down",
        ),
        note="Optional orientation suffix: 'place the mug in the dish rack upside down'.",
        modifiers=_ORIENTATION,
    ),
    _row(
        "L2",
        "place",
        "place the {theme} on the {destination}",
        _PLACE_ROLES,
        ("place the {theme} on the {destination}[ <orientation>]",),
        examples=(
            "place the pan on the front-right burner",
            "place the knife on the cutting board",
            "place the fish on the top rack of the oven",
            "place the lid on the saucepan",
            "place the blender lid on the blender",
            "place the mug on the dish rack upside down",
            "place the mug on the counter with the handle facing right",
        ),
        note="Default modifier 'on'; an orientation suffix is appended when the task requires a final orientation.",
        modifiers=_ORIENTATION,
    ),
    _row(
        "L3",
        "place",
        "place the {theme} under the {destination}",
        "theme: object; destination: fixture, fixture_part",
        ("place the {theme} under the {destination}[ <orientation>]",),
        examples=("place the mug under the coffee machine dispenser",),
        modifiers=_ORIENTATION,
    ),
    _row(
        "L4",
        "place",
        "place the {theme} {relation} the {destination}",
        _PLACE_ROLES,
        ("place the {theme} <relation> the {destination}[ <orientation>]",),
        examples=(
            "place the jam next to the plate",
            "place the tongs next to the tray",
            "place the fork on the left side of the plate",
            "place the steak behind the older steak",
            "place the mug far away from the sink",
        ),
        modifiers=("relation", "orientation"),
        values={
            "relation": (
                "next to",
                "behind",
                "in front of",
                "beside",
                "near",
                "far away from",
                "away from",
                "on the left side of",
                "on the right side of",
                "to the left of",
                "to the right of",
                "left of",
                "right of",
                "between",
                "around",
                "inside",
                "on top of",
            )
        },
    ),
    _row(
        "L5",
        "place",
        "stack the {theme} on top of the {destination}",
        "theme: object; destination: object",
        examples=(
            "stack the larger bowl on top of the smaller bowl in the cabinet",
            "stack the can on top of the other cans",
        ),
    ),
    _row(
        "R1",
        "pour",
        "dump the {theme} {relation} the {destination}",
        _PLACE_ROLES,
        ("dump the {theme} <relation> the {destination}",),
        examples=(
            "dump the vegetables onto the plate",
            "dump the leftovers into the sink",
            "dump the broccoli into the sink",
        ),
        note="Tilting the held container so its contents fall out; covers tilt and untilt. The container is picked "
        "before and placed after, so it is not repeated in the label.",
        modifiers=("relation",),
        values={"relation": ("into", "onto", "in", "on", "over", "out of")},
    ),
    _row(
        "M1",
        "push",
        "push the {theme} to the {destination}",
        "theme: object; destination: fixture, fixture_part, object",
        examples=("push the cutting board to the sink",),
        note="Translate an object along its support without lifting it. Rotation-in-place of a grasped pan is G1, "
        "not M1.",
    ),
    _row(
        "H1",
        "hold",
        "hold the {theme} under the {target}",
        "theme: object; target: fixture_part",
        examples=(
            "hold the carrot under the sink faucet",
            "hold the jug under the sink faucet",
            "hold the sponge under the sink faucet",
        ),
        note="Only while the object stays grasped under running water (rinse / fill / soak). If the object is set "
        "down in the sink and water runs over it, label place + wait instead.",
    ),
    _row(
        "A1",
        "activate",
        "turn on the {target}",
        "target: fixture, fixture_part",
        ("turn on the {target}[ to <setting>]",),
        examples=(
            "turn on the front-left burner",
            "turn on the front-left burner to medium",
            "turn on the sink faucet",
            "turn on the microwave",
            "turn on the blender",
            "turn on the oven",
            "turn on the toaster oven",
        ),
        note="Off -> on for every fixture except the coffee machine (A2), toaster and electric kettle (A3); see "
        "activation_controls. If the same knob turn also sets a level, keep it one A1 segment and record the level "
        "via the alias.",
        modifiers=("setting",),
    ),
    _row(
        "A2",
        "activate",
        "press the start button on the {target}",
        "target: fixture",
        examples=("press the start button on the coffee machine",),
        note="Coffee machine only; see activation_controls.",
    ),
    _row(
        "A3",
        "activate",
        "push down the lever of the {target}",
        "target: fixture",
        examples=("push down the lever of the toaster", "push down the lever of the electric kettle"),
        note="Toaster and electric kettle only.",
    ),
    _row(
        "D1",
        "deactivate",
        "turn off the {target}",
        "target: fixture, fixture_part",
        examples=(
            "turn off the sink faucet",
            "turn off the front-right burner",
            "turn off the microwave",
            "turn off the stove knob for the kettle",
        ),
        note="On -> off for every fixture (the microwave stop button is 'turn off the microwave').",
    ),
    _row(
        "J1",
        "adjust",
        "set the {target} to {setting}",
        "target: fixture_part",
        ("set the {target} to <setting>",),
        examples=(
            "set the toaster oven temperature knob to max",
            "set the toaster oven temperature knob to lowest",
            "set the toaster oven temperature knob to higher",
            "set the front-left burner to medium",
            "set the front-left burner to low",
            "set the faucet handle to hot",
        ),
        note="Change the level of a control that is already on (burner heat, faucet temperature) - and ALWAYS for "
        "the toaster oven temperature knob, which is a level, not an on/off switch (the toaster oven is turned on by "
        "its timer -> A1). Use higher/lower when only the direction of change is specified.",
        modifiers=("setting",),
    ),
    _row(
        "J2",
        "adjust",
        "turn the {target} to the {direction}",
        "target: fixture_part",
        (
            "turn the {target} to the <direction>",
            ("sweep the {target} across the basin", {"variant": "sweep"}),
        ),
        examples=(
            "turn the sink spout to the left",
            "turn the sink spout to the right",
            "sweep the sink spout across the basin",
        ),
        note="Re-orientation of the sink spout; the direction is task-relevant (TurnSinkSpout, RinseSinkBasin) and "
        "is kept.",
        modifiers=("direction", "variant"),
        variants={"sweep": "sweep the spout across the basin"},
    ),
    _row(
        "T1",
        "stir",
        "stir the {theme} in the {target}",
        "theme: object, group_noun; target: object",
        examples=("stir the vegetables in the pot", "stir the cheese in the pot"),
        note="The utensil is grasped in a preceding pick segment.",
    ),
    _row(
        "B1",
        "scrub",
        "scrub the {target}",
        "target: fixture, fixture_part, object",
        (
            "scrub the {target}",
            ("wipe the {target}", {"variant": "wipe"}),
            ("wash the {target}", {"variant": "wash"}),
        ),
        examples=(
            "scrub the cutting board",
            "scrub the bowl",
            "scrub the sink",
            "wipe the counter",
            "wash the broccoli",
        ),
        note="Repeated contact/agitation on the target. Default variant 'with tool' (held sponge/brush; 'wipe' "
        "normalises here). 'wash the {target}' = variant 'by hand': agitating/turning the object in running water "
        "with the hand, no tool (e.g. DrainVeggies).",
        modifiers=("variant",),
        variants={"scrub": "with tool", "wipe": "with tool", "wash": "by hand"},
    ),
    _row(
        "G1",
        "agitate",
        "{verb} the {target}",
        "target: object",
        ("<variant> the {target}",),
        examples=("shake the pan", "tilt the pan", "rotate the pan"),
        note="Grasp + agitate + release of an object that ends on the same support it started on (lift included). "
        "Moving it to another support is pick + place.",
        modifiers=("variant",),
        values={"variant": ("shake", "tilt", "rotate")},
        variants={"shake": "shake", "tilt": "tilt", "rotate": "rotate"},
    ),
    _row(
        "Q1",
        "press",
        "press the {theme} against the {target}",
        "theme: object; target: object",
        examples=("press the lemon against the reamer", "press the spatula against the chicken"),
        note="Force contact between a held object and another object; 'against' distinguishes it from A2.",
    ),
    _row(
        "X1",
        "wait",
        "wait for the {target}",
        "target: fixture, fixture_part, object",
        examples=(
            "wait for the toaster",
            "wait for the digital scale",
            "wait for the pot",
            "wait for the kettle",
            "wait for the cutting board",
        ),
        note="Robot idle while a process completes, mid-episode; name only the fixture/object being waited on, not "
        "the event clause. The idle tail after the last subtask is 'task complete'.",
    ),
    # -- section 7: AgiBot cohort (supermarket pickup, task 327) -------------------------------
    _row(
        "AGIBOT_PICK",
        "pick",
        "Pick",
        "",
        examples=("Pick",),
        note="Reaching for, grasping and lifting one item.",
        cohorts=("agibot",),
    ),
    _row(
        "AGIBOT_PLACE",
        "place",
        "Place",
        "",
        examples=("Place",),
        note="Carrying the item picked before and putting it down at its destination.",
        cohorts=("agibot",),
    ),
    _row(
        "AGIBOT_IDLE",
        "idle",
        "Idle",
        "",
        examples=("Idle",),
        note="Frames before the first Pick and after the last Place; a clear pause with nothing in progress between a "
        "Place and the next Pick.",
        cohorts=("agibot",),
    ),
    # -- section 8: Allex cohort (conveyor logistics) ------------------------------------------
    *(
        _row(
            f"ALLEX_{label.upper().replace(' ', '_')}",
            operation,
            label,
            "",
            examples=(label,),
            note="Start and end rules pending transcription from the original annotators' guideline; the reference "
            "examples define the convention.",
            cohorts=("allex",),
        )
        for label, operation in (
            ("Bring Object", "bring"),
            ("Pass Object", "pass"),
            ("Rotate Box", "rotate"),
            ("Rotate PolyBag", "rotate"),
        )
    ),
    # -- the generic set: the primitives of robot-learning datasets, object optional ----------------
    *(
        _generic(operation, form, examples, note)
        for operation, form, examples, note in (
            (
                "reach",
                "reach[ for the {target}]",
                ("reach", "reach for the red cube"),
                "The arm moves toward the object until the gripper is around it.",
            ),
            (
                "grasp",
                "grasp[ the {theme}]",
                ("grasp", "grasp the cup"),
                "The gripper closes on the object; ends when the grasp is stable.",
            ),
            ("lift", "lift[ the {theme}]", ("lift", "lift the cup"), "The grasped object leaves its support."),
            (
                "move",
                "move[ the {theme}][ to the {destination}]",
                ("move", "move the cup", "move the cup to the tray"),
                "Transport: the arm carries the object (or moves empty) between two places.",
            ),
            (
                "place",
                "place[ the {theme}][ on the {destination}]",
                ("place", "place the cup on the tray"),
                "The object is set down on its destination, still grasped.",
            ),
            (
                "release",
                "release[ the {theme}]",
                ("release", "release the cup"),
                "The gripper opens and leaves the object.",
            ),
            ("pick", "pick up[ the {theme}]", ("pick up", "pick up the cup"), "Reach, grasp and lift as one segment."),
            (
                "push",
                "push[ the {theme}]",
                ("push", "push the block"),
                "Contact without a grasp moves the object away.",
            ),
            ("pull", "pull[ the {theme}]", ("pull", "pull the drawer"), "The object is drawn toward the robot."),
            (
                "open",
                "open[ the {target}]",
                ("open", "open the drawer"),
                "A door, lid, drawer or gripper-held container is opened.",
            ),
            (
                "close",
                "close[ the {target}]",
                ("close", "close the drawer"),
                "A door, lid, drawer or container is closed.",
            ),
            (
                "pour",
                "pour[ the {theme}][ into the {destination}]",
                ("pour", "pour the water into the bowl"),
                "The held container is tilted until its content has left it.",
            ),
            ("wipe", "wipe[ the {target}]", ("wipe", "wipe the table"), "A tool or the gripper rubs a surface."),
            (
                "insert",
                "insert[ the {theme}][ into the {destination}]",
                ("insert", "insert the peg into the hole"),
                "The object is fitted into a receptacle.",
            ),
            (
                "rotate",
                "rotate[ the {theme}]",
                ("rotate", "rotate the valve"),
                "The object (or a knob, valve, lid) is turned about an axis.",
            ),
            ("press", "press[ the {target}]", ("press", "press the button"), "A button or switch is pushed."),
            (
                "pass",
                "hand over[ the {theme}]",
                ("hand over", "hand over the cup"),
                "The object passes from one hand (or robot) to the other.",
            ),
            (
                "navigate",
                "navigate[ to the {destination}]",
                ("navigate", "navigate to the table"),
                "The base moves; the arms carry nothing new.",
            ),
            ("move", "retract", ("retract",), "The arm returns to its rest pose after the task's last contact."),
            ("idle", "idle", ("idle",), "Nothing in progress: before the first motion, a pause."),
        )
    ),
    # -- section 2: the terminal interval -------------------------------------------------------
    _row(
        TASK_COMPLETE,
        "terminal",
        TASK_COMPLETE,
        "",
        (TASK_COMPLETE, "task complete"),
        examples=(TASK_COMPLETE,),
        note="Optional; only a distinct trailing interval after the task has succeeded. If the last subtask reaches "
        "the end of the episode, end with that subtask.",
        cohorts=COHORTS,
    ),
)

_REGISTRY: dict[str, Template] = {t.id: t for t in ROWS}
if len(_REGISTRY) != len(ROWS):  # pragma: no cover - a duplicated id in ROWS
    raise RuntimeError("duplicate template id in ROWS")
_USER_COHORTS: dict[str, tuple[str, ...]] = {}  # user-defined set -> its template ids
_version = [0]

#: Template id -> definition (a read-only view; user-defined label sets join it when registered).
TEMPLATES: MappingProxyType[str, Template] = MappingProxyType(_REGISTRY)


def known_cohorts() -> tuple[str, ...]:
    """The built-in cohorts, then the user-defined label sets registered in this process."""
    return COHORTS + tuple(_USER_COHORTS)


def all_templates() -> tuple[Template, ...]:
    """Every template in registry order (the built-in rows, then user-defined ones)."""
    return tuple(_REGISTRY.values())


def registry_version() -> int:
    """Changes whenever a label set is registered (the parser recompiles its forms then)."""
    return _version[0]


def register_cohort(name: str, templates: tuple[Template, ...]) -> None:
    """Make ``templates`` the cohort ``name`` (replacing an earlier set of that name).

    ``TASK_COMPLETE`` joins the cohort. The parser and every check see it at once.

    Raises:
        LabelValidationError: ``name`` is a built-in cohort, or a template id is taken.
    """
    if name in COHORTS:
        raise LabelValidationError(
            f"{name!r} is a built-in template set; give your label set another name ({', '.join(COHORTS)} are taken)."
        )
    for tid in _USER_COHORTS.pop(name, ()):
        _REGISTRY.pop(tid, None)
    for template in templates:
        if template.id in _REGISTRY:
            raise LabelValidationError(f"template id {template.id!r} is taken; rename the label set.")
    terminal = _REGISTRY.pop(TASK_COMPLETE)  # stays last, as in every built-in set
    _REGISTRY.update((t.id, t) for t in templates)
    _USER_COHORTS[name] = tuple(t.id for t in templates)
    _REGISTRY[TASK_COMPLETE] = replace(terminal, cohorts=known_cohorts())
    _version[0] += 1


def cohort_templates(cohort: str) -> tuple[Template, ...]:
    """The templates of ``cohort`` in registry order.

    Raises:
        LabelValidationError: unknown cohort (names the known ones).
    """
    check_cohort(cohort)
    return tuple(t for t in _REGISTRY.values() if cohort in t.cohorts)


def check_cohort(cohort: str) -> str:
    """Return ``cohort`` or raise a :class:`LabelValidationError` naming the known cohorts."""
    if cohort not in COHORTS and cohort not in _USER_COHORTS:
        raise LabelValidationError(
            f"unknown cohort {cohort!r}; use one of {', '.join(known_cohorts())} (a label set of your own is loaded "
            f"from its file: strands-labels segments page ROOT --labels FILE).{did_you_mean(cohort, known_cohorts())}"
        )
    return cohort
