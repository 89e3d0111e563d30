"""The deterministic block: the simulator predicates' verdict (docs/judge.md, "Doctrine: two stages, one precedence").

:func:`record_deterministic_verdicts` is its only writer. A judge can annotate a
verdict, never overturn it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import open_store, query_document
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, VerdictNotFoundError, did_you_mean
from strands_robots.storage.codec import json_copy
from strands_robots.storage.mapping import index_ranges
from strands_robots.storage.record_store import Change


def _normalise_verdict(position: int, entry: Any) -> tuple[int, dict[str, Any]]:
    where = f"episodes[{position}]"
    if not isinstance(entry, dict):
        raise LabelValidationError(
            f"{where} is a {type(entry).__name__}; each verdict is a dict with episode, success, failure, "
            "steps, cumulative_reward, seed (one entry per episode of a benchmark evaluation)."
        )
    if "episode" not in entry:
        raise LabelValidationError(f"{where} has no 'episode' key; add the episode_index it describes.")
    index = checks.episode_index(entry["episode"], f"{where}.episode")
    if "success" not in entry:
        raise LabelValidationError(f"{where} has no 'success'; a verdict must state true or false.")
    block: dict[str, Any] = {
        "success": checks.boolean(entry["success"], f"{where}.success"),
        "failure": checks.boolean(entry.get("failure", False), f"{where}.failure"),
    }
    if block["success"] and block["failure"]:
        raise LabelValidationError(
            f"{where} (episode {index}) has success: true and failure: true; an episode cannot be both. "
            "Set failure: false for a success (failure marks an unrecoverable error), or success: false."
        )
    if "steps" in entry:
        block["steps"] = checks.non_negative_int(entry["steps"], f"{where}.steps")
    if "cumulative_reward" in entry:
        block["cumulative_reward"] = checks.finite_number(entry["cumulative_reward"], f"{where}.cumulative_reward")
    if "seed" in entry:
        seed = entry["seed"]
        if seed is not None:
            seed = int_argument(
                seed,
                lambda v: LabelValidationError(f"{where}.seed must be an integer (64-bit) or null, got {v!r}."),
                minimum=-(2**63),
                maximum=2**64 - 1,
            )
        block["seed"] = seed
    return index, block


def record_deterministic_verdicts(
    root: str | Path,
    episodes: list[dict[str, Any]],
    *,
    benchmark: str = "",
    labels_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Record the simulator's per-episode verdicts (stage one).

    Re-recording an episode replaces its deterministic block and keeps its judge block;
    when the new ``success`` differs, the judge's ``disputes_verdict`` is brought up to
    date (the one judge field this function touches). Rule source: docs/judge.md, "Doctrine:
    two stages, one precedence"; docs/sidecar-format.md.

    Args:
        root: Dataset root (holds ``meta/``).
        episodes: The per-episode list a benchmark evaluation returns: dicts with
            ``episode`` (int), ``success`` (bool), ``failure`` (bool, default False),
            ``steps`` (int frames), ``cumulative_reward`` (finite float), ``seed``.
        benchmark: Name of the benchmark the verdicts came from ("" keeps the stored one).
        labels_dir: Directory of the sidecar (default ``root``).

    Returns:
        The whole document after the write (a copy).

    Raises:
        LabelValidationError: a malformed entry (``success`` and ``failure`` both true
            included), an empty list or duplicate episodes.
        EpisodeNotFoundError: the dataset's metadata does not have some episodes (all listed).
        SidecarError: the file on disk is not a sidecar this version writes.
        RootNotFoundError: ``root`` (or ``labels_dir``) is not an existing directory (a
            ``FileNotFoundError`` and a ``ValueError``).
        StorageError: the write failed; nothing changed.
    """
    if not isinstance(episodes, list | tuple) or not episodes:
        raise LabelValidationError(
            "episodes must be a non-empty list of verdict dicts, one per episode: {'episode': 0, 'success': True, ...}."
        )
    benchmark = checks.name(benchmark, "benchmark")
    blocks: dict[int, dict[str, Any]] = {}
    duplicates: set[int] = set()
    for position, entry in enumerate(episodes):
        index, block = _normalise_verdict(position, entry)
        if index in blocks:
            duplicates.add(index)
        blocks[index] = block
    if duplicates:
        raise LabelValidationError(
            f"episodes {sorted(duplicates)} appear more than once in one call; pass one verdict per episode."
        )
    fingerprints = _fingerprints(root, list(blocks))

    def mutate(document: dict[str, Any]) -> tuple[Change, Any]:
        records = document["episodes"]
        fields = []
        if benchmark and document.get("benchmark") != benchmark:
            document["benchmark"] = benchmark
            fields.append("benchmark")
        keys = []  # the record keys, each one str shared by the document and the change
        for index, block in blocks.items():
            key = str(index)
            keys.append(key)
            record = dict(records.get(key) or {})
            record["episode_index"] = index
            record["deterministic"] = block
            if index in fingerprints:
                record["fingerprint"] = fingerprints[index]
            judge = record.get("judge")
            if judge is not None:
                opinion = judge.get("success_opinion")
                disputes = opinion is not None and opinion != block["success"]
                if judge.get("disputes_verdict") != disputes:
                    record["judge"] = {**judge, "disputes_verdict": disputes}
            records[key] = record
        return Change(records=keys, fields=fields), None

    store = open_store(root, labels_dir)
    store.update(mutate)
    return store.take()  # the caller's own document (no deep copy of a large document)


def _fingerprints(root: str | Path, wanted: list[int]) -> dict[int, dict[str, Any]]:
    """``{episode: fingerprint}`` of ``wanted`` (empty without ``meta/``), naming the metadata
    they were read from (:func:`strands_robots.fingerprint.columns.read_columns`).

    Raises:
        EpisodeNotFoundError: the dataset has no episodes of ``wanted`` (all listed).
        DatasetError: the dataset reader refuses the dataset.
    """
    from strands_robots.dataset.cache import has_dataset_metadata

    if not has_dataset_metadata(root):
        return {}
    from strands_robots.fingerprint.columns import read_columns  # pyarrow

    columns = read_columns(root)
    if columns is None:
        return {}
    positions, found = columns.positions(wanted)
    unknown = [episode for episode, ok in zip(wanted, found.tolist(), strict=True) if not ok]
    if unknown:
        raise EpisodeNotFoundError(
            f"the dataset at {root} has no episodes {sorted(unknown)}; record verdicts only for its episodes "
            "(see `strands-labels info ROOT`), or remap labels after editing the dataset."
        )
    return dict(zip(wanted, columns.records(positions), strict=True))


def verdict_record(records: dict[str, Any], index: int, action: str) -> dict[str, Any]:
    """The record of ``index``, which must hold a deterministic verdict (a judge or a reviewer
    never supplies one; ``action`` names what was refused).

    Raises:
        VerdictNotFoundError: it has none.
    """
    record = records.get(str(index))
    if not record or "deterministic" not in record:
        raise VerdictNotFoundError(
            f"No deterministic verdict recorded for episode {index}, so there is nothing to {action}; record "
            "verdicts first (record_deterministic_verdicts or `strands-labels verdicts ROOT FILE`)."
        )
    return record


def not_in_dataset(root: str | Path, wanted: list[int], action: str) -> VerdictNotFoundError | None:
    """The error for episodes with no verdict that the dataset itself does not have.

    ``annotate ROOT 44`` on a dataset of episodes 0-3 is a typo of the episode, not a
    missing verdict: the error says so (docs/judge.md, "Running it").

    Args:
        root: Dataset root.
        wanted: Episodes that have no verdict.
        action: What was refused (``annotate``, ``review``).

    Returns:
        A :class:`VerdictNotFoundError` naming the absent episodes and the ones the dataset
        has, or None (all of ``wanted`` are in the dataset, or ``root`` has no LeRobot
        metadata, or the reader refuses it: the missing verdict is the story).
    """
    from strands_robots.dataset.cache import cached_dataset_if_present  # pyarrow, only on this error path

    try:
        dataset = cached_dataset_if_present(root)
    except Exception:  # noqa: BLE001 - a broken dataset: the missing verdict is still the error to give
        return None
    if dataset is None:
        return None
    have = [int(i) for i in dataset.episodes.indices]
    present = set(have)
    absent = sorted({e for e in wanted if e not in present})
    if not absent:
        return None
    named = index_ranges(absent)
    return VerdictNotFoundError(  # the first words are the ones 0.5.3's callers match on
        f"No deterministic verdict recorded for episode {named}: the dataset at {root} has no episode {named} "
        f"(it has {index_ranges(have) or 'none'}), so there is nothing to {action}; pass one of its episodes "
        "(see `strands-labels info ROOT`)."
    )


def deterministic_verdict(root: str | Path, episode: int, *, labels_dir: str | Path | None = None) -> dict[str, Any]:
    """The authoritative verdict of one episode (a copy of its deterministic block).

    Raises:
        LabelValidationError: ``episode`` is not a non-negative int.
        LabelsNotFoundError: no sidecar yet (a ``FileNotFoundError``).
        VerdictNotFoundError: no verdict recorded for ``episode`` (a ``KeyError`` and a
            ``ValueError``).
    """
    index = checks.episode_index(episode)

    def get(document: dict[str, Any]) -> dict[str, Any] | None:
        record = document["episodes"].get(str(index))
        block = record.get("deterministic") if record else None
        return json_copy(block) if block is not None else None

    block = query_document(root, get, labels_dir)
    if block is None:
        raise VerdictNotFoundError(
            f"No deterministic verdict recorded for episode {index}; record it first with "
            "record_deterministic_verdicts (or `strands-labels verdicts ROOT FILE`)."
        )
    return block


def verdicts_from_dataset(root: str | Path, column: str | None = None) -> list[dict[str, Any]]:
    """Verdicts from a per-frame success column of a real-robot dataset.

    ``success`` is whether the column is true on any frame of the episode (LeRobot
    writes ``next.success`` true on the final frame of a successful episode);
    ``failure`` is its negation, ``steps`` the episode length in frames and
    ``cumulative_reward`` the sum of ``next.reward`` when the dataset has it, else
    1.0/0.0. ``next.done`` marks episode ends, not success: use it only when a dataset
    writes it on successful episodes alone.

    Args:
        root: Dataset root.
        column: ``"next.success"`` or ``"next.done"`` (or any boolean feature); default
            the first of those two the dataset has.

    Returns:
        The verdict list :func:`record_deterministic_verdicts` takes, sorted by episode.

    Raises:
        DatasetError: the dataset has no such column.
    """
    import numpy as np

    from strands_robots.dataset import open_dataset
    from strands_robots.errors import DatasetError

    dataset = open_dataset(root)
    if column is None:
        column = next((c for c in ("next.success", "next.done") if c in dataset.features), None)
        if column is None:
            raise DatasetError(
                f"the dataset at {root} has no 'next.success' or 'next.done' feature; pass column= naming a "
                "boolean per-frame success feature, or record verdicts from a benchmark run."
            )
    elif column not in dataset.features:
        features = tuple(sorted(dataset.features))
        raise DatasetError(
            f"the dataset at {root} has no feature {column!r}.{did_you_mean(column, features)} Pass --from-column "
            f"(column=) naming a boolean per-frame success feature of this dataset; its features are {list(features)}."
        )
    has_reward = "next.reward" in dataset.features
    columns = [column, "next.reward"] if has_reward else [column]
    verdicts = []
    for index in sorted(dataset.episodes):
        frames = dataset.read_frames(index, columns=columns)
        success = bool(np.any(np.asarray(frames[column]).astype(bool)))
        reward = float(np.nansum(frames["next.reward"])) if has_reward else float(success)
        verdicts.append(
            {
                "episode": int(index),
                "success": success,
                "failure": not success,
                "steps": int(dataset.episodes[index].length),
                "cumulative_reward": reward,
            }
        )
    return verdicts
