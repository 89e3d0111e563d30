"""The project's own segmentations (docs/segments.md) as SSC subtasks.

Each segment carries one typed template (``P1`` "pick up the {theme} from the
{source}", ...). :data:`~strands_robots.ssc.verbs.TEMPLATE_VERBS` maps a template id to
a vocabulary verb and says which slot is the object and which are secondary objects, so
a segmentation plugs into :func:`~strands_robots.ssc.chain.build_chain` unchanged.
Segment labels name no arm: every action gets an ``arm_assignment`` query for the
cascade. ``strands_robots.segments`` is imported only inside :func:`subtasks_from_segments`,
so the SSC works without it for BEHAVIOR-1K input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from strands_robots.errors import LabelValidationError
from strands_robots.ssc.records import ParsedAction, Subtask
from strands_robots.ssc.verbs import TEMPLATE_VERBS, TemplateVerb, UnknownVerbError, match_verb_prefix, normalize_verb

_MODIFIER_TEXT = {
    "orientation": "{}",
    "setting": "to {}",
    "direction": "to the {}",
    "relation": "{}",
}


def action_from_instance(
    template_id: str, slots: Mapping[str, str], modifiers: Mapping[str, str], text: str = ""
) -> ParsedAction:
    """One parsed action from a template instance (id, slots, modifiers).

    A template of a label set of your own (id ``NAME:LABEL``, no slots) takes the
    vocabulary verb its label starts with (``"drop it"`` -> ``drop``), else the stateless
    ``custom`` verb (docs/ssc.md, "Template sets").

    Raises:
        UnknownVerbError: a built-in template id with no row in ``TEMPLATE_VERBS``.
    """
    row = TEMPLATE_VERBS.get(template_id) or _label_set_row(template_id)
    if row is None:
        raise UnknownVerbError(
            f"template {template_id!r} has no row in strands_robots.ssc.verbs.TEMPLATE_VERBS; add one "
            "(template id, verb, object slot, secondary slots)."
        )
    obj = slots.get(row.obj_slot) if row.obj_slot else None
    verb = row.variants.get(str(modifiers.get("variant", "")), row.verb)
    if not obj and row.verb_without_obj:
        verb = row.verb_without_obj
    relation = str(modifiers.get("relation") or "on")  # the preposition a "{relation}" slot takes
    targets = [
        (relation if prep == "{relation}" else prep, slots[slot]) for slot, prep in row.targets if slots.get(slot)
    ]
    cond = [
        _MODIFIER_TEXT[m].format(modifiers[m]) for m in row.cond_modifiers if modifiers.get(m) and m in _MODIFIER_TEXT
    ]
    return ParsedAction(
        verb=verb,
        obj=None if obj is None else "_".join(obj.split()),  # noun phrase -> id: front-left_burner
        targets=[(p, "_".join(v.split())) for p, v in targets],
        obj_cond=list(row.obj_cond),
        cond=cond,
        text=text,
    )


def _label_set_row(template_id: str) -> TemplateVerb | None:
    """The row of a label-set template ``NAME:LABEL``: its label's leading verb, else ``custom``."""
    name, sep, label = template_id.partition(":")
    if not (sep and name and label):
        return None
    found = match_verb_prefix(normalize_verb(label).split("_"))
    return TemplateVerb(template_id, found[0].name if found else "custom")


def _get(seg: Any, key: str) -> Any:
    return seg.get(key) if isinstance(seg, Mapping) else getattr(seg, key, None)


def subtasks_from_segments(segments: Iterable[Any], *, cohort: str | None = None) -> list[Subtask]:
    """Convert a segmentation into subtasks.

    Args:
        segments: ``{"start", "end", "label"}`` dicts as stored in
            ``episode_segments.json`` (``template_id``/``slots``/``modifiers`` used when
            present, else the label is parsed with ``strands_robots.segments.parse_label``),
            or objects with those attributes. Frames, half-open ``[start, end)``.
        cohort: Passed to ``parse_label`` (``robocasa365``, ``agibot``, ``allex``).

    Returns:
        One subtask per segment, ``st_idx`` = position.

    Raises:
        LabelValidationError: a segment without integer frames, or a label no template fits
            (the segments parser's error, naming the nearest template).
        UnknownVerbError: a template without a row in ``TEMPLATE_VERBS``.
    """
    out: list[Subtask] = []
    for i, seg in enumerate(segments):
        start, end, label = _get(seg, "start"), _get(seg, "end"), _get(seg, "label")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) or end < start:
            raise LabelValidationError(
                f"segment {i}: start/end must be integer frames with start <= end, got {start!r}, {end!r}."
            )
        template_id = _get(seg, "template_id")
        slots, modifiers = _get(seg, "slots") or {}, _get(seg, "modifiers") or {}
        if not template_id:
            from strands_robots.segments import parse_label  # the segmentation issue's parser

            instance = parse_label(str(label), **({"cohort": cohort} if cohort else {}))
            template_id, slots, modifiers = instance.template_id, dict(instance.slots), dict(instance.modifiers)
        action = action_from_instance(str(template_id), slots, modifiers, str(label or ""))
        out.append(
            Subtask(
                st_idx=i,
                start=start,
                end=end,
                actions=[action],
                label=str(label or template_id),
                object_ids=[o for o in [action.obj, *(t for _, t in action.targets)] if o],
                source=f"segment:{template_id}",
            )
        )
    return out
