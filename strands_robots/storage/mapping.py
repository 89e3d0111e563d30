"""The episode mapping of a dataset edit that renumbers episodes, and its one rule.

A mapping is ``{old_episode_index: new_episode_index}`` of non-negative integers (a key may
be decimal text, a value must be a JSON integer), one-to-one; an old episode that is not a
key is dropped, which is refused unless it is listed in ``deleted`` or ``allow_drop=True``
(docs/sidecar-format.md, "Remap": the mapping rule, dropping needs consent).
:func:`mapping_after_delete` builds the mapping LeRobot's ``delete_episodes`` applies.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, MappingMismatchError, quoted
from strands_robots.storage.episode_index import MAX_EPISODE_INDEX, episode_index

_SHAPE = 'the mapping is a JSON object {old_episode_index: new_episode_index}, e.g. {"3": 2, "4": 3}'


def index_ranges(indices: Iterable[int], sep: str = ", ") -> str:
    """Sorted episode indices written as runs: ``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    parts: list[str] = []
    for index in sorted(indices):
        if parts and index == int(parts[-1].rpartition("-")[2]) + 1:
            parts[-1] = f"{parts[-1].partition('-')[0]}-{index}"
        elif not parts or index != int(parts[-1].rpartition("-")[2]):
            parts.append(str(index))
    return sep.join(parts)


def _as_value(value: Any) -> Any:
    """numpy integers become int; everything else is left for the strict check."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value) is not int:
        return int(value)
    return value


def _as_key(value: Any) -> Any:
    """A decimal-text key becomes its int (JSON object keys are text); numpy ints become int."""
    if isinstance(value, str) and value.isascii():
        digits = value[1:] if value.startswith("-") else value
        if digits.isdigit() and (digits == "0" or digits[0] != "0"):
            return int(value)
    return _as_value(value)


@functools.cache
def _table_adapter() -> Any:
    """The pydantic validator of a mapping's table (built once; pydantic is imported lazily)."""
    from typing import Annotated

    from pydantic import BeforeValidator, Field, Strict, TypeAdapter

    key = Annotated[int, BeforeValidator(_as_key), Strict(), Field(ge=0, le=MAX_EPISODE_INDEX)]
    value = Annotated[int, BeforeValidator(_as_value), Strict(), Field(ge=0, le=MAX_EPISODE_INDEX)]
    return TypeAdapter(dict[key, value])  # type: ignore[valid-type]


def _explain(error: Mapping[str, Any]) -> str:
    """One pydantic error of the table as a sentence naming the remedy."""
    loc = error.get("loc", ())
    given = error.get("input")
    is_key = len(loc) >= 2 and loc[-1] == "[key]"
    where = f"mapping key {loc[0]!r}" if is_key else f"mapping[{loc[0]!r}]" if loc else "the mapping"
    if is_key:
        given = _as_key(given)
    if isinstance(given, int | float) and not isinstance(given, bool) and given < 0:
        return (
            f"{where} is {given}; an episode_index must be non-negative (indices start at 0). To drop an episode, leave it "
            "out of the mapping and pass allow_drop=True (CLI: --allow-drop) or list it as deleted (--deleted)."
        )
    if isinstance(given, int) and not isinstance(given, bool) and given > MAX_EPISODE_INDEX:
        return f"{where} is {given}, beyond the largest episode_index a dataset holds ({MAX_EPISODE_INDEX}, int64)."
    if not is_key and isinstance(given, str):
        hint = f'{{"{loc[0]}": {int(given)}}}' if given.strip().isdigit() else '{"3": 2}'
        return f"{where} is the text {given!r}; write the new index as a JSON number, e.g. {hint}."
    return f"{where} is {type(given).__name__} {given!r}, not a non-negative integer episode_index; {_SHAPE}."


@dataclass(frozen=True)
class EpisodeMapping:
    """A validated ``{old: new}`` episode mapping (see the module rule).

    Attributes:
        table: old episode_index -> new episode_index.
        deleted: Old episodes the edit deleted (their labels may be dropped without
            ``allow_drop``); :func:`mapping_after_delete` fills it.
    """

    table: dict[int, int]
    deleted: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, value: Any, *, deleted: Iterable[int] = ()) -> EpisodeMapping:
        """Validate ``value`` (a mapping object, or an :class:`EpisodeMapping`).

        Raises:
            LabelValidationError: not an object, a key or value that is not a
                non-negative integer (decimal text accepted for keys), or not one-to-one;
                the message names the remedy.
        """
        if isinstance(value, EpisodeMapping):
            return value if not deleted else cls(value.table, value.deleted | frozenset(deleted))
        if not isinstance(value, dict):
            raise LabelValidationError(f"mapping must be an object, got {type(value).__name__}; {_SHAPE}.")
        from pydantic import ValidationError

        try:
            table = _table_adapter().validate_python(value)
        except ValidationError as exc:
            errors = exc.errors()
            more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
            raise LabelValidationError(_explain(errors[0]) + more) from None
        if len(table) != len(value):
            raise LabelValidationError(f'mapping names one old episode twice (e.g. 3 and "3"); {_SHAPE}.')
        seen: dict[int, int] = {}
        for old, new in table.items():
            if new in seen:
                raise LabelValidationError(
                    f"mapping sends episodes {seen[new]} and {old} both to {new}; it must be one-to-one "
                    "(each new index used once)."
                )
            seen[new] = old
        gone = frozenset(_index(d, "deleted episode") for d in deleted)
        both = sorted(gone & table.keys())
        if both:
            raise LabelValidationError(f"episodes {both} are listed as deleted and also mapped; give each one once.")
        return cls(table, gone)

    def get(self, old: int) -> int | None:
        """The new index of ``old``, or None when it is dropped."""
        return self.table.get(old)

    def __len__(self) -> int:
        return len(self.table)

    def targets(self) -> list[int]:
        """The new indices, sorted."""
        return sorted(self.table.values())

    def to_json(self) -> dict[str, int]:
        """``{"<old>": new}`` sorted by old index (how a remap line and the intent store it)."""
        return {str(old): new for old, new in sorted(self.table.items())}

    def refuse_drops(self, labelled: Iterable[int], *, allow_drop: bool, what: str) -> None:
        """Refuse dropping labelled episodes the caller did not name.

        Args:
            labelled: Old episodes that carry a record in the sidecar.
            allow_drop: The caller accepts dropping every unmapped record.
            what: The sidecar, for the message.

        Raises:
            LabelValidationError: a labelled episode is neither a key of the mapping nor
                listed as deleted, and ``allow_drop`` is False.
        """
        if allow_drop:
            return
        dropped = sorted(e for e in labelled if e not in self.table and e not in self.deleted)
        if dropped:
            shown = ", ".join(map(str, dropped[:20])) + (" ..." if len(dropped) > 20 else "")
            raise LabelValidationError(
                f"the mapping would drop the {what} of {len(dropped)} episode(s) [{shown}], which are not keys "
                "of the mapping. If the dataset edit deleted them, say so: pass allow_drop=True (CLI: --allow-drop) "
                "or build the mapping from the deleted episodes (mapping_after_delete; CLI: --deleted 3,7). "
                "Otherwise add them to the mapping. Nothing was changed."
            )


def _index(value: Any, what: str) -> int:
    """An episode index given as an int, a numpy int or its decimal text (the one check: :mod:`.episode_index`)."""
    return episode_index(_as_key(value), what)


def mapping_after_delete(total_episodes: int, deleted: Iterable[int]) -> EpisodeMapping:
    """The mapping LeRobot's ``delete_episodes`` applies: survivors renumbered in order.

    Episodes ``0 .. total_episodes-1`` minus ``deleted`` become ``0, 1, 2, ...`` in their
    original order (``{old: new for new, old in enumerate(kept)}``).

    Args:
        total_episodes: Episodes in the dataset before the edit.
        deleted: The ``episode_index`` values the edit deleted.

    Returns:
        The mapping, with ``deleted`` recorded so their labels are dropped without
        ``allow_drop``.

    Raises:
        LabelValidationError: ``total_episodes`` is not a non-negative integer, or a
            deleted index is negative or not below ``total_episodes``.
    """
    total = int_argument(
        _as_key(total_episodes),
        lambda v: LabelValidationError(
            f"total_episodes must be a non-negative integer, got {quoted(v)}; pass the number of episodes the "
            "dataset had before the edit (CLI: --total-episodes)."
        ),
        minimum=0,
        maximum=MAX_EPISODE_INDEX,
    )
    gone = sorted({_index(d, "deleted episode") for d in deleted})
    outside = [d for d in gone if d >= total]
    if outside:
        raise LabelValidationError(
            f"deleted episodes {outside} are not below total_episodes={total}; pass the number of episodes the "
            "dataset had before the edit (CLI: --total-episodes) and the indices the edit deleted."
        )
    gone_set = set(gone)
    kept = (old for old in range(total) if old not in gone_set)
    return EpisodeMapping({old: new for new, old in enumerate(kept)}, frozenset(gone))


def check_fingerprints(moves: Iterable[tuple[int, int, Any]], fingerprinter: Any, what: str) -> None:
    """Refuse a mapping that moves records onto episodes their fingerprints do not describe.

    The rule of every store's remap (docs/sidecar-format.md, "Remap"): a moved record's
    stored fingerprint must match its new episode in the keys that identify the recording
    (:data:`strands_robots.fingerprint.IDENTITY_KEYS`: ``length``, ``tasks``, ``content``);
    ``index_range`` moves with the edit. A record without a fingerprint is not checked.

    Args:
        moves: ``(old_index, new_index, stored fingerprint or None)`` per moved record.
        fingerprinter: The edited dataset's :class:`strands_robots.fingerprint.Fingerprinter`.
        what: The records, for the message ("labels", "outcome labels", "segmentations").

    Raises:
        MappingMismatchError: some moves contradict the fingerprints (a
            ``LabelValidationError``); the message lists up to ten (``old -> new (reason)``)
            and the remedy. Nothing was changed.
    """
    from strands_robots.fingerprint import IDENTITY_KEYS, stale_reason

    moves = list(moves)
    current = fingerprinter.present([new for _old, new, _stored in moves])
    contradictions = []
    for old, new, stored in moves:
        reason = stale_reason(stored, current.get(new), new, IDENTITY_KEYS)
        if reason:
            contradictions.append(f"{old} -> {new} ({reason})")
    if contradictions:
        raise MappingMismatchError(
            f"the mapping contradicts the {what}' fingerprints, so it does not describe this dataset edit: "
            + "; ".join(contradictions[:10])
            + ". Nothing was changed; check the mapping (old index -> new index), build it from the "
            "deleted episodes (mapping_after_delete; CLI: --deleted 3,7), or let the dataset before the edit "
            "find it (`strands-labels remap ROOT --from OLD_ROOT`)."
        )


def check_targets(mapping: EpisodeMapping, episodes: Any, root: Any) -> None:
    """Refuse new indices the (edited) dataset does not have.

    Args:
        mapping: The mapping.
        episodes: The dataset's episodes (a container of ``episode_index``).
        root: The dataset root, for the message.

    Raises:
        EpisodeNotFoundError: some targets are not episodes of the dataset; the message
            names them and the remedy.
    """
    known = set(episodes)  # one pass over the dataset's indices, not one search per target
    unknown = [n for n in mapping.targets() if n not in known]
    if unknown:
        have = len(episodes)
        raise EpisodeNotFoundError(
            f"the mapping sends labels to episodes {unknown[:20]} that the dataset at {root} does not have "
            f"(it has {have} episode(s)). A mapping describes the dataset after the edit: run the remap on the "
            "edited dataset, and build the mapping from the deleted episodes (mapping_after_delete; CLI: "
            "--deleted 3,7) rather than by hand. Nothing was changed."
        )
