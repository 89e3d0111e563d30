"""The rule that finds where each recording went after a dataset edit: match, never guess.

LeRobot's dataset edits (``delete_episodes``, ``split_dataset``, ``merge_datasets``,
``remove_feature``, ``modify_tasks``, ``recompute_stats``, ``reencode_dataset``,
``convert_image_to_video_dataset``) keep each kept episode's frames and copy its
per-episode statistics unchanged (``recompute_stats`` rewrites only ``meta/stats.json``,
the aggregate), so an episode's ``length`` and ``content`` digest (:mod:`.columns`) identify
its recording across the edit. ``tasks`` identify it too, except after ``modify_tasks``.

:func:`match_episodes` pairs each old episode with the one new episode of equal
``length``, ``content`` and ``tasks``; when none has equal ``tasks``, with the one of equal
``length`` and ``content`` (a renamed task, reported). An old episode with no such new
episode, or whose identity is shared by several old or new episodes, is never paired
(``docs/editing.md``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class EpisodeMatch:
    """The pairing of old episodes with new ones.

    Attributes:
        table: ``{old_episode_index: new_episode_index}`` of the unique matches.
        unmatched: Old episodes with no new episode of the same recording.
        ambiguous: ``{old_episode_index: [candidate new episodes]}``: the recording's identity
            is shared, so no pairing is chosen.
        retasked: ``{old_episode_index: (old tasks, new tasks)}`` of pairs whose tasks changed.
    """

    table: dict[int, int] = field(default_factory=dict)
    unmatched: list[int] = field(default_factory=list)
    ambiguous: dict[int, list[int]] = field(default_factory=dict)
    retasked: dict[int, tuple[Any, Any]] = field(default_factory=dict)


def _key(fingerprint: Mapping[str, Any], with_tasks: bool) -> tuple[Any, ...] | None:
    if "length" not in fingerprint or "content" not in fingerprint:
        return None
    tasks = tuple(fingerprint.get("tasks") or ()) if with_tasks else ()
    return (fingerprint["length"], fingerprint["content"], tasks)


def match_episodes(old: Mapping[int, Mapping[str, Any]], new: Mapping[int, Mapping[str, Any]]) -> EpisodeMatch:
    """Pair old episodes with new ones by their recording's fingerprint (module rule).

    Args:
        old: ``{old_episode_index: fingerprint}`` of the episodes whose records are carried.
        new: ``{new_episode_index: fingerprint}`` of every episode of the edited dataset.

    Returns:
        :class:`EpisodeMatch`; an old episode without ``length`` and ``content`` is unmatched.
    """
    result = EpisodeMatch()
    by_key: dict[bool, dict[tuple[Any, ...], list[int]]] = {True: defaultdict(list), False: defaultdict(list)}
    for index, fingerprint in new.items():
        for with_tasks in (True, False):
            key = _key(fingerprint, with_tasks)
            if key is not None:
                by_key[with_tasks][key].append(index)
    claims: dict[int, list[int]] = defaultdict(list)
    for index, fingerprint in sorted(old.items()):
        candidates: list[int] = []
        for with_tasks in (True, False):
            key = _key(fingerprint, with_tasks)
            candidates = by_key[with_tasks].get(key, []) if key is not None else []
            if candidates:
                break
        if not candidates:
            result.unmatched.append(index)
        elif len(candidates) > 1:
            result.ambiguous[index] = sorted(candidates)
        else:
            claims[candidates[0]].append(index)
    for target, olds in claims.items():
        if len(olds) > 1:  # two old records of one recording: which is right is not ours to guess
            for index in olds:
                result.ambiguous[index] = [target]
            continue
        (index,) = olds
        result.table[index] = target
        before, after = old[index].get("tasks"), new[target].get("tasks")
        if before is not None and after is not None and list(before) != list(after):
            result.retasked[index] = (before, after)
    result.ambiguous = dict(sorted(result.ambiguous.items()))
    result.table = dict(sorted(result.table.items()))
    return result
