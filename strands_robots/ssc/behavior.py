"""BEHAVIOR-1K ``skill_annotation`` JSON -> subtasks (paper ``001``, Appendices B and E;
docs/ssc.md, "Inputs": the fields read, the verb match, the arm word, objects, targets and
conditions).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, cast

from strands_robots.errors import LabelValidationError
from strands_robots.ssc.cascade import spatial_prefix_arm
from strands_robots.ssc.records import ParsedAction, Subtask
from strands_robots.ssc.verbs import VERBS, UnknownVerbError, match_verb_prefix, normalize_verb
from strands_robots.storage.textfile import read_user_text

_ARM_WORDS = {"left": "left", "right": "right", "both": "coop", "coop": "coop", "bimanual": "coop"}
_ARM_NOUNS = ("arm", "hand", "arms", "hands", "gripper", "grippers")
_ARTICLES = ("the", "a", "an")
#: Words that open a source/destination phrase of a label (``from breakfast table``): a target.
_PREPOSITIONS = (
    ("on", "top", "of"),
    ("in", "front", "of"),
    ("next", "to"),
    ("out", "of"),
    ("from",),
    ("onto",),
    ("on",),
    ("into",),
    ("in",),
    ("inside",),
    ("to",),
    ("toward",),
    ("towards",),
    ("under",),
    ("over",),
    ("above",),
    ("below",),
    ("beside",),
    ("behind",),
    ("near",),
    ("at",),
    ("off",),
    ("against",),
    ("across",),
    ("between",),
)
#: Words that open a condition of a label (``with the knife``, ``while holding``): not the object.
_CONDITION_LEADS = ("with", "using", "while", "until", "when", "if", "before", "after", "by")


def _split_phrases(words: list[str]) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """``book from breakfast table`` -> ``(["book"], [("from", "breakfast_table")], [])``.

    The object is the words before the first preposition or condition word; each
    preposition opens a target (its words joined by ``_``, like an object id); a condition
    word opens a condition that runs to the end (``with knife``).
    """
    obj: list[str] = []
    targets: list[tuple[str, list[str]]] = []
    cond: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _CONDITION_LEADS and (obj or targets):
            cond.append(" ".join(w for w in words[i:] if w not in _ARTICLES))
            break
        prep = next((p for p in _PREPOSITIONS if tuple(words[i : i + len(p)]) == p), None)
        if prep is not None and (obj or targets or len(prep) > 1):
            # a spatial phrase ('on top of shelf') is a target even with no object before it
            targets.append((" ".join(prep), []))
            i += len(prep)
            continue
        if word not in _ARTICLES:
            (targets[-1][1] if targets else obj).append(word)
        i += 1
    return obj, [(p, "_".join(t)) for p, t in targets], cond


def _straddles_preposition(words: list[str], used: int) -> int:
    """How many verb words to give back so that a multiword preposition stays whole.

    ``place on top of table``: the longest verb is ``place_on``, but ``on`` opens
    ``on top of`` (a spatial condition), so the verb is ``place`` (returns 1).
    """
    for prep in _PREPOSITIONS:
        for k in range(1, len(prep)):
            if used - k > 0 and tuple(words[used - k : used - k + len(prep)]) == prep:
                return k
    return 0


@dataclass
class BehaviorEpisode:
    """One parsed annotation file.

    Attributes:
        task_name: ``task_name`` of the file ("" when absent).
        task_duration: ``meta_data.valid_duration`` as ``(start, end)``, else the span of
            the subtasks.
        subtasks: Parsed subtasks in frame order.
        object_list: Every object id mentioned, in first-seen order.
    """

    task_name: str
    task_duration: tuple[int, int]
    subtasks: list[Subtask]
    object_list: list[str] = field(default_factory=list)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _strings(value: Any) -> list[str] | None:
    """Non-blank strings of a field; nested lists (``[["left"]]``) are flattened."""
    if value is None:
        return None
    out: list[str] = []
    for v in _as_list(value):
        if isinstance(v, list | tuple):
            out += _strings(list(v)) or []
        elif str(v).strip():
            out.append(str(v))
    return out


def _object_groups(raw: Any, where: str) -> list[list[str]]:
    items = _as_list(raw)
    if not items:
        return []
    if all(isinstance(x, str) for x in items):
        return [[str(x) for x in items]]
    groups: list[list[str]] = []
    for g in items:
        if isinstance(g, str):
            groups.append([g])
        elif isinstance(g, list | tuple) and all(isinstance(x, str) for x in g):
            groups.append([str(x) for x in g])
        else:
            raise LabelValidationError(f"{where}: object_id must be a list of id lists, got {raw!r}.")
    return groups


def _frames(raw: Any, where: str) -> tuple[int, int]:
    def bad() -> LabelValidationError:
        return LabelValidationError(
            f"{where}: frame_duration must be [start, end] with 0 <= start <= end (frames), got {raw!r}."
        )

    if not isinstance(raw, list | tuple) or not raw:
        raise bad()
    spans = raw if isinstance(raw[0], list | tuple) else [raw]  # an interrupted skill: list of intervals
    try:
        pairs = [(int(s), int(e)) for s, e in spans]
    except (TypeError, ValueError):
        raise bad() from None
    if any(isinstance(v, bool) for span in spans for v in span) or any(s < 0 or e < s for s, e in pairs):
        raise bad()
    return min(s for s, _ in pairs), max(e for _, e in pairs)


def parse_skill_text(text: str, objects: list[str] | None = None) -> ParsedAction:
    """Parse one ``skill_description`` string into an action.

    Args:
        text: ``"pick up from"``, ``"open door"``, ``"left pick bowl"``.
        objects: The matching ``object_id`` list (object first, then its source or
            destination); when absent, words after the verb name the object.

    Raises:
        UnknownVerbError: no verb of the table starts the text.
    """
    words = normalize_verb(text).split("_")
    arm = None
    if words and words[0] in _ARM_WORDS:
        arm = _ARM_WORDS[words[0]]
        words = words[1:]
        # 'left hand pick cup': the arm noun goes; 'left hand over cup': 'hand over' is the verb
        if words and words[0] in _ARM_NOUNS and (match_verb_prefix(words[1:]) or not match_verb_prefix(words)):
            words = words[1:]
    found = match_verb_prefix(words)
    if found is None:
        raise UnknownVerbError(
            f"skill description {text!r} starts with no verb of the SSC vocabulary; add a row to "
            "strands_robots.ssc.verbs.VERBS (paper Appendix E: one new verb is one new row)."
        )
    row, used = found
    back = _straddles_preposition(words, used)
    if back:
        shorter = match_verb_prefix(words[: used - back])
        if shorter is not None:
            row, used = shorter
    obj_words, spans, cond = _split_phrases(words[used:])
    text_targets = [(p, t) for p, t in spans if t]
    written = [p for p, _ in spans]  # the prepositions the text writes, with or without their object
    preps = tuple(written) or row.preps
    objs = list(objects or [])
    obj: str | None = None
    targets: list[tuple[str, str]] = []
    if not objs and (row.motion or row.role == "idle"):
        named = ["_".join(obj_words)] if obj_words else []
        targets = [(_prep(row.preps, i), o) for i, o in enumerate(named)] + text_targets
    elif not objs:
        obj = "_".join(obj_words) or None
        targets = text_targets
    elif row.motion or row.role == "idle":
        targets = [(_prep(preps, i), o) for i, o in enumerate(objs)]
    else:
        obj = objs[0]
        targets = [(_prep(preps, i), o) for i, o in enumerate(objs[1:])]
    return ParsedAction(verb=row.name, arm=cast(Any, arm), obj=obj, targets=targets, cond=cond, text=text)


def _prep(preps: tuple[str, ...], i: int) -> str:
    return preps[min(i, len(preps) - 1)] if preps else "with"


def read_behavior_annotation(path_or_dict: str | PathLike[str] | Mapping[str, Any]) -> BehaviorEpisode:
    """Parse a BEHAVIOR-1K annotation file or its decoded dict.

    Raises:
        LabelValidationError: not a JSON object with a ``skill_annotation`` list, or an
            entry with a bad ``frame_duration`` / ``object_id`` (message names the entry).
        UnknownVerbError: a ``skill_description`` whose verb is not in the table.
        InputFileNotFoundError: the path does not exist (a ``FileNotFoundError``).
        InputFileError: the path is a directory, not UTF-8 or unreadable.
    """
    where = "annotation"
    if isinstance(path_or_dict, Mapping):
        doc = path_or_dict
    else:
        path = Path(path_or_dict)
        where = str(path)
        try:
            doc = json.loads(read_user_text(path, what="the annotation file", kind="BEHAVIOR-1K annotation file"))
        except json.JSONDecodeError as exc:
            raise LabelValidationError(
                f"{path} is not valid JSON ({exc}); pass a BEHAVIOR-1K annotation file."
            ) from exc
    if not isinstance(doc, Mapping) or not isinstance(doc.get("skill_annotation"), list):
        raise LabelValidationError(
            f"{where}: expected a JSON object with a 'skill_annotation' list (BEHAVIOR-1K annotation format)."
        )
    subtasks: list[Subtask] = []
    for order, skill in enumerate(doc["skill_annotation"]):
        here = f"{where}: skill_annotation[{order}]"
        if not isinstance(skill, Mapping):
            raise LabelValidationError(f"{here} is not an object.")
        start, end = _frames(skill.get("frame_duration"), here)
        descriptions = _strings(skill.get("skill_description")) or []
        if not descriptions:
            raise LabelValidationError(f"{here}: skill_description is empty; every skill needs a label.")
        groups = _object_groups(skill.get("object_id"), here)
        manip = _strings(skill.get("manipulating_object_id")) or []
        spatial = _strings(skill.get("spatial_prefix"))
        conditions = [
            " ".join(t.lower().replace("_", " ").split()) for t in spatial or [] if spatial_prefix_arm(t) is None
        ]
        actions = []
        for i, text in enumerate(descriptions):
            group = groups[i] if i < len(groups) else (groups[0] if len(groups) == 1 else [])
            try:
                action = parse_skill_text(text, group)
            except UnknownVerbError as exc:
                raise UnknownVerbError(f"{here}: {exc}") from exc
            row = VERBS[action.verb]
            if action.obj is None and manip and not row.motion and row.role != "idle":
                action.obj = manip[min(i, len(manip) - 1)]
            # a spatial_prefix that names no arm ('on top of', 'near') is a spatial condition of the action
            written = {p for p, _ in action.targets}
            action.cond += [c for c in conditions if c not in written and c not in action.cond]
            actions.append(action)
        idx = skill.get("skill_idx", order)
        subtasks.append(
            Subtask(
                st_idx=int(idx) if isinstance(idx, int) and not isinstance(idx, bool) else order,
                start=start,
                end=end,
                actions=actions,
                label="; ".join(descriptions),
                skill_type=_strings(skill.get("skill_type")),
                memory_prefix=_strings(skill.get("memory_prefix")),
                spatial_prefix=spatial,
                object_ids=[o for g in groups for o in g],
                source="behavior",
            )
        )
    objects = list(dict.fromkeys(o for s in subtasks for o in s.object_ids))  # first seen in the file
    subtasks.sort(key=lambda s: (s.start, s.st_idx))
    meta = doc.get("meta_data")
    valid = meta.get("valid_duration") if isinstance(meta, Mapping) else None
    if isinstance(valid, list | tuple) and len(valid) == 2 and all(isinstance(v, int) for v in valid):
        duration = (int(valid[0]), int(valid[1]))
    elif subtasks:
        duration = (min(s.start for s in subtasks), max(s.end for s in subtasks))
    else:
        duration = (0, 0)
    return BehaviorEpisode(str(doc.get("task_name") or ""), duration, subtasks, objects)


def load_behavior_annotation(path_or_dict: str | PathLike[str] | Mapping[str, Any]) -> list[Subtask]:
    """The subtasks of a BEHAVIOR-1K annotation (see :func:`read_behavior_annotation`).

    Returns:
        :class:`~strands_robots.ssc.records.Subtask` list in frame order.
    """
    return read_behavior_annotation(path_or_dict).subtasks
