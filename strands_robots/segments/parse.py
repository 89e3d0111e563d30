"""Labels <-> template instances (docs/segments.md, "Templates").

``parse_label("pick up a chicken drumstick from the fridge")`` gives
``TemplateInstance("P1", {"theme": "chicken drumstick", "source": "fridge"},
{"theme_article": "a"})`` and :func:`render` gives the text back. Matching ignores case,
repeated spaces and a trailing full stop; slots are lower-case noun phrases without the
article. When a label fits several forms (``place the fork on the left side of the plate``
fits L2 and L4), the parse that leaves the least free text in its slots wins (L4 with
``relation: on the left side of``).
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from strands_robots.errors import LabelValidationError
from strands_robots.segments.lexicon import IN_PLACE_ROTATION, TRAILING_PARTICLE, operation_of, wait_target
from strands_robots.segments.templates import (
    CLOSED_MODIFIERS,
    MODIFIER_PATTERNS,
    TEMPLATES,
    Form,
    Template,
    all_templates,
    check_cohort,
    known_cohorts,
    registry_version,
)

ARTICLES = ("the", "an", "a")
_ARTICLE_SUFFIX = "_article"


class LabelParseError(LabelValidationError):
    """A label fits no template. ``nearest`` is the id of the closest template."""

    def __init__(self, message: str, *, nearest: str | None) -> None:
        super().__init__(message)
        self.nearest = nearest


@dataclass(frozen=True)
class TemplateInstance:
    """One template with its slots and modifiers filled.

    Attributes:
        template_id: Key of :data:`TEMPLATES`.
        slots: Slot name -> lower-case noun phrase without article.
        modifiers: Section-5 fields (``relation``, ``orientation``, ``setting``,
            ``direction``, ``variant``) and ``<slot>_article`` when the article is not
            ``the``. Defaults (``the``, B1's ``scrub``) are omitted.
    """

    template_id: str
    slots: dict[str, str] = field(default_factory=dict)
    modifiers: dict[str, str] = field(default_factory=dict)

    @property
    def template(self) -> Template:
        """The template definition."""
        return TEMPLATES[self.template_id]

    @property
    def operation(self) -> str:
        """The template's operation (``pick``, ``activate``, ...)."""
        return self.template.operation

    def render(self) -> str:
        """The surface text (see :func:`render`)."""
        return render(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"template_id", "slots", "modifiers"}`` (JSON-ready)."""
        return {"template_id": self.template_id, "slots": dict(self.slots), "modifiers": dict(self.modifiers)}


@dataclass(frozen=True)
class FreeLabel:
    """A label kept as the text another tool wrote: it fits no template of any set.

    Imported proposals keep such labels (docs/segments.md, "Free labels") instead of
    dropping them; a segment marks one with ``"free": true``. A free label passes the
    structure checks and is a ``free_label`` warning; the template rules skip it.
    """

    text: str
    template_id: None = None

    def render(self) -> str:
        """The text, as written."""
        return self.text

    def to_dict(self) -> dict[str, Any]:
        """``{"template_id": None, "slots": {}, "modifiers": {}, "free": True}`` (JSON-ready)."""
        return {"template_id": None, "slots": {}, "modifiers": {}, "free": True}


# -- form compilation ----------------------------------------------------------------------------

_TOKEN = re.compile(r"the \{(\w+)\}|\{(\w+)\}|<(\w+)>|\[|\]")


@dataclass(frozen=True)
class _Compiled:
    template: Template
    form: Form
    regex: re.Pattern[str]
    parts: tuple  # ("lit", text) | ("slot", name, with_article) | ("mod", name) | ("opt", parts)


def _parse_form(pattern: str) -> tuple:
    stack: list[list] = [[]]
    pos = 0
    for m in _TOKEN.finditer(pattern):
        if m.start() > pos:
            stack[-1].append(("lit", pattern[pos : m.start()]))
        article, slot, modifier = m.groups()
        if article or slot:
            stack[-1].append(("slot", article or slot, bool(article)))
        elif modifier:
            stack[-1].append(("mod", modifier))
        elif m.group(0) == "[":
            stack.append([])
        else:
            inner = stack.pop()
            stack[-1].append(("opt", tuple(inner)))
        pos = m.end()
    if pos < len(pattern):
        stack[-1].append(("lit", pattern[pos:]))
    if len(stack) != 1:  # pragma: no cover - registry data error
        raise RuntimeError(f"unbalanced [ ] in form {pattern!r}")
    return tuple(stack[0])


def _modifier_regex(template: Template, name: str) -> str:
    if closed := template.values.get(name):
        return "|".join(re.escape(v) for v in sorted(closed, key=len, reverse=True))
    return MODIFIER_PATTERNS[name]


def _regex(template: Template, parts: tuple) -> str:
    out = []
    for part in parts:
        kind = part[0]
        if kind == "lit":
            out.append(re.escape(part[1].lower()))
        elif kind == "slot":
            name = part[1]
            body = rf"(?P<{name}>(?!(?:the|an|a) )\S.*?)"
            out.append(rf"(?P<{name}__art>the|an|a) {body}" if part[2] else body)
        elif kind == "mod":
            out.append(rf"(?P<m__{part[1]}>{_modifier_regex(template, part[1])})")
        else:
            out.append(f"(?:{_regex(template, part[1])})?")
    return "".join(out)


@functools.lru_cache(maxsize=1)
def _compiled(version: int) -> tuple[_Compiled, ...]:
    """Every form of every template, compiled; recompiled when a label set joins the registry."""
    forms = [(template, form, _parse_form(form.pattern)) for template in all_templates() for form in template.forms]
    return tuple(
        _Compiled(template, form, re.compile(_regex(template, parts)), parts) for template, form, parts in forms
    )


def clean_text(text: str) -> str:
    """Trim, collapse whitespace and drop one trailing full stop."""
    text = " ".join(str(text).split())
    return text[:-1].rstrip() if text.endswith(".") else text


def _score(instance: TemplateInstance) -> int:
    free = [v for k, v in instance.modifiers.items() if not k.endswith(_ARTICLE_SUFFIX) and k not in CLOSED_MODIFIERS]
    return sum(map(len, [*instance.slots.values(), *free]))


def _match(c: _Compiled, lowered: str) -> TemplateInstance | None:
    m = c.regex.fullmatch(lowered)
    if m is None:
        return None
    groups = m.groupdict()
    slots: dict[str, str] = {}
    modifiers: dict[str, str] = dict(c.form.fixed)
    for key, value in groups.items():
        if value is None:
            continue
        if key.startswith("m__"):
            modifiers[key[3:]] = value
        elif key.endswith("__art"):
            if value != "the":
                modifiers[key[: -len("__art")] + _ARTICLE_SUFFIX] = value
        elif TRAILING_PARTICLE.search(value):
            return None  # 'push the wok around': 'around' belongs to the verb, not to the noun phrase
        else:
            slots[key] = value
    if c.template.operation == "wait" and "target" in slots:
        slots["target"] = wait_target(slots["target"])  # name only what is waited on (section 3 X1)
    return TemplateInstance(c.template.id, slots, modifiers)


def parse_candidates(text: str, *, cohort: str | None = None) -> list[TemplateInstance]:
    """Every parse of ``text``, best first (least free slot text, then registry order)."""
    if cohort is not None:
        check_cohort(cohort)
    lowered = clean_text(text).lower()
    forms = [c for c in _compiled(registry_version()) if cohort is None or cohort in c.template.cohorts]
    return sorted(filter(None, (_match(c, lowered) for c in forms)), key=_score)  # stable: ties in registry order


def nearest_template(text: str, *, cohort: str | None = None) -> tuple[Template, str]:
    """The template whose example is most similar to ``text``, and that example."""
    lowered = clean_text(text).lower()
    operation = operation_of(lowered)
    pool = [t for t in all_templates() if cohort is None or cohort in t.cohorts]
    pool = [t for t in pool if t.operation == operation] or pool  # 'grab the mug' is a pick
    pairs = [(t, example) for t in pool for example in t.examples or (t.surface,)]
    return max(pairs, key=lambda p: difflib.SequenceMatcher(None, lowered, p[1].lower()).ratio())


def parse_label(text: str, *, cohort: str | None = None) -> TemplateInstance:
    """Parse a label into a template instance.

    Args:
        text: The label, e.g. ``"turn on the front-left burner to medium"``.
        cohort: Only consider this cohort's templates (``robocasa365``, ``agibot``,
            ``allex``); default all.

    Returns:
        The instance; ``render(parse_label(t)) == t`` for every canonical label.

    Raises:
        LabelParseError: no template fits; the message names the nearest template and
            the remedy (docs/segments.md, "parse_label and render": choose the nearest template and describe the
            problem in the segment note).
    """
    if not isinstance(text, str):
        raise LabelValidationError(f"a label must be text, got {type(text).__name__} {text!r}.")
    if candidates := parse_candidates(text, cohort=cohort):
        return candidates[0]
    cleaned = clean_text(text)
    if not cleaned:
        raise LabelParseError("the label is empty; choose a template for the segment.", nearest=None)
    nearest, example = nearest_template(cleaned, cohort=cohort)
    hint = ""
    if cleaned.lower().startswith("other:"):
        hint = " 'other: <free text>' is not a label in this audit."
    elif rotation := IN_PLACE_ROTATION.match(cleaned.lower()):
        hint = (
            f" Rotating a grasped object in place is not a push ('around' is no part of the object): label it"
            f" 'rotate {rotation.group(1)}' (docs/segments.md, Templates)."
        )
    elif operation_of(cleaned) == "release" and not any(
        t.operation == "release" for t in all_templates() if cohort is None or cohort in t.cohorts
    ):
        hint = (
            " A release without transport is folded into the preceding segment (extend that segment over these"
            " frames); if the object is carried to a new place first, label it place (docs/segments.md, Templates)."
        )
    raise LabelParseError(
        f"{cleaned!r} matches no template{f' of cohort {cohort!r}' if cohort else ''}.{hint} The nearest is "
        f"{nearest.id} ({nearest.operation}) {nearest.surface!r}, e.g. {example!r}. Rewrite the label in a template's "
        "form, or choose the nearest template and describe the problem in the segment note (docs/segments.md, parse_label and render).",
        nearest=nearest.id,
    )


# -- rendering -----------------------------------------------------------------------------------


def _placeholders(parts: tuple) -> set[tuple[str, str]]:
    """``(kind, name)`` of every slot and modifier in ``parts``, optional parts included."""
    out: set[tuple[str, str]] = set()
    for part in parts:
        if part[0] in ("slot", "mod"):
            out.add((part[0], part[1]))
        elif part[0] == "opt":
            out |= _placeholders(part[1])
    return out


def _fill(parts: tuple, instance: TemplateInstance) -> str | None:
    out = []
    for part in parts:
        kind = part[0]
        if kind == "lit":
            out.append(part[1])
        elif kind in ("slot", "mod"):
            value = (instance.slots if kind == "slot" else instance.modifiers).get(part[1])
            if value is None:
                return None
            with_article = kind == "slot" and part[2]
            out.append(f"{instance.modifiers.get(part[1] + _ARTICLE_SUFFIX, 'the')} {value}" if with_article else value)
        else:
            names = _placeholders(part[1])
            present = {(k, n) for k, n in names if n in (instance.slots if k == "slot" else instance.modifiers)}
            if present and present != names:
                return None  # an optional part is written whole or not at all
            inner = _fill(part[1], instance) if present else ""
            if inner is None:
                return None
            out.append(inner)
    return "".join(out)


def render(instance: TemplateInstance) -> str:
    """The surface text of ``instance`` (``pick up the bowl from the counter``).

    Raises:
        LabelValidationError: unknown template, or slots/modifiers no form of the
            template can express.
    """
    template = TEMPLATES.get(instance.template_id)
    if template is None:
        raise LabelValidationError(f"unknown template id {instance.template_id!r}; see TEMPLATES for the ids.")
    slots = {s.name for s in template.slots}
    for c in (c for c in _compiled(registry_version()) if c.template.id == template.id):
        expressible = {name for kind, name in _placeholders(c.parts) if kind == "mod"} | set(c.form.fixed)
        if (
            all(instance.modifiers.get(k) == v for k, v in c.form.fixed.items())
            and set(instance.modifiers) <= expressible | {name + _ARTICLE_SUFFIX for name in slots}
            and set(instance.slots) <= slots
            and (text := _fill(c.parts, instance)) is not None
        ):
            return text
    raise LabelValidationError(
        f"{template.id} cannot express slots {instance.slots} with modifiers {instance.modifiers}; "
        f"its form is {template.surface!r} and it accepts the modifiers {list(template.modifiers) or 'none'}."
    )


def make_instance(
    template_id: str, slots: dict[str, Any] | None = None, modifiers: dict[str, Any] | None = None
) -> TemplateInstance:
    """Build and check an instance from a chosen template and filled slots (an annotation page's input).

    Slot values are trimmed and lower-cased; a leading article is moved to the
    ``<slot>_article`` modifier (``the`` is the default and is dropped).

    Raises:
        LabelValidationError: unknown template, unknown or missing slot, a modifier the
            template does not take or a value outside its set, or slot text that would
            make the label read as another template (the rendered label must parse back
            to the same instance).
    """
    template = TEMPLATES.get(template_id)
    if template is None:
        close = difflib.get_close_matches(str(template_id), list(TEMPLATES), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise LabelValidationError(f"unknown template id {template_id!r}.{hint} See TEMPLATES for the ids.")
    slots = dict(slots or {})
    mods = {str(k): clean_text(str(v)).lower() for k, v in (modifiers or {}).items() if v not in (None, "")}
    known = {s.name for s in template.slots}
    if unknown := sorted(set(slots) - known):
        raise LabelValidationError(f"{template_id} has no slot {unknown}; its slots are {sorted(known) or 'none'}.")
    clean_slots: dict[str, str] = {}
    for slot in template.slots:
        value = slots.get(slot.name)
        value = clean_text(str(value)).lower() if value is not None else ""
        if not value:
            if not slot.optional:
                raise LabelValidationError(f"{template_id} needs the slot {slot.name!r} ({', '.join(slot.types)}).")
            continue
        first, _, rest = value.partition(" ")
        if first in ARTICLES and rest:
            if first != "the":
                mods[slot.name + _ARTICLE_SUFFIX] = first
            value = rest
        clean_slots[slot.name] = value
    for key in list(mods):
        if key.endswith(_ARTICLE_SUFFIX):
            if key[: -len(_ARTICLE_SUFFIX)] not in clean_slots or mods[key] not in ARTICLES:
                raise LabelValidationError(f"{key}={mods[key]!r} does not fit {template_id}'s filled slots.")
            if mods[key] == "the":
                del mods[key]
            continue
        if key not in template.modifiers:
            raise LabelValidationError(
                f"{template_id} takes no modifier {key!r}; it accepts {list(template.modifiers) or 'none'}."
            )
        allowed = template.values.get(key) or (tuple(template.variants) if key == "variant" else None)
        if allowed and mods[key] not in allowed:
            raise LabelValidationError(f"{key}={mods[key]!r} is not one of {list(allowed)} for {template_id}.")
        if not allowed and key in MODIFIER_PATTERNS and not re.fullmatch(MODIFIER_PATTERNS[key], mods[key]):
            raise LabelValidationError(f"{key}={mods[key]!r} is not a valid {key} for {template_id}.")
    if template_id == "B1" and mods.get("variant") == "scrub":
        del mods["variant"]  # the default variant is not written
    instance = TemplateInstance(template_id, clean_slots, mods)
    text = render(instance)
    # read back among the templates of its own set (another set may spell the label alike)
    back = parse_candidates(text, cohort=template.cohorts[0] if len(template.cohorts) == 1 else None)
    if not back or back[0] != instance:
        other = back[0].template_id if back else "no template"
        raise LabelValidationError(
            f"the slots make {text!r} read as {other} {back[0].slots if back else ''}, not {template_id} "
            f"{clean_slots}; shorten the noun phrases (no words like 'from the', 'in the', 'to' inside a slot)."
        )
    return instance


def coerce_instance(label: Any, cohort: str | None = None) -> TemplateInstance:
    """A :class:`TemplateInstance` from an instance, a label string, or a dict with ``template_id``.

    A label string is read as ``cohort``'s first: a label several cohorts spell alike (``open
    the drawer``, ``idle``) is the cohort's own; one the cohort has no template for is parsed
    over every template (so a check can say which cohort it belongs to).

    Raises:
        LabelParseError, LabelValidationError: see :func:`parse_label` / :func:`make_instance`.
    """
    if isinstance(label, TemplateInstance):
        return make_instance(label.template_id, label.slots, label.modifiers)
    if isinstance(label, dict):
        return make_instance(label.get("template_id", ""), label.get("slots"), label.get("modifiers"))
    if cohort is not None and isinstance(label, str) and cohort in known_cohorts():
        if candidates := parse_candidates(label, cohort=cohort):
            return candidates[0]
        try:
            return parse_label(label)
        except LabelParseError:
            return parse_label(label, cohort=cohort)  # the error names the cohort's nearest template
    return parse_label(label)
