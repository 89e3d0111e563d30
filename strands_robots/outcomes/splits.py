"""Held-out evaluation splits by leakage group: union-find over shared group values, then a
subset sum over the seed-shuffled components (docs/outcomes.md, "Held-out splits").
"""

from __future__ import annotations

import numbers
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from strands_robots.arguments import HELD_OUT_SHARE, UNIT_FRACTION, int_argument, number_argument, number_refusal
from strands_robots.dataset.cache import cached_dataset
from strands_robots.errors import LabelValidationError, did_you_mean
from strands_robots.outcomes.labels import default_labeled_by, load_store, new_version
from strands_robots.outcomes.model import LEAKAGE_GROUP_KEYS, WRITABLE_FIELDS
from strands_robots.outcomes.store import OutcomeStore, open_outcome_store
from strands_robots.storage.mapping import MAX_EPISODE_INDEX

PathLike = str | Path

#: Largest subset-sum table (components x episodes, in bits) solved exactly; above it a
#: seeded greedy pass is used instead.
MAX_DP_BITS = 200_000_000


class SplitImpossibleError(LabelValidationError):
    """The leakage-group constraint cannot give the requested held-out split; nothing was written."""


def _group_keys(group_keys: Iterable[str]) -> tuple[str, ...]:
    keys = (group_keys,) if isinstance(group_keys, str) else tuple(group_keys)
    bad = [k for k in keys if k not in LEAKAGE_GROUP_KEYS]
    if not keys or bad or len(set(keys)) != len(keys):
        raise LabelValidationError(
            f"group_keys {keys!r} must be one or more distinct keys of {', '.join(LEAKAGE_GROUP_KEYS)}."
            + "".join(did_you_mean(k, LEAKAGE_GROUP_KEYS) for k in bad)
        )
    return keys


def _held_out_refusal(value: Any) -> LabelValidationError:
    shown = repr(value) if not isinstance(value, int) or value.bit_length() < 64 else "a huge integer"
    return LabelValidationError(
        f"held_out={shown[:60]} must be an episode count (an int, at least 1) or a fraction "
        f"{HELD_OUT_SHARE.describe()} (a float); pass e.g. held_out=12 or held_out=0.2."
    )


def held_out_argument(value: Any, refuse: Callable[[Any], Exception] = _held_out_refusal) -> int | float:
    """``held_out`` as given to :func:`split_by_groups`: an episode count or a share.

    An integer (numpy integers too) is a count of at least 1 (and within int64); any other real number is a
    share within :data:`~strands_robots.arguments.HELD_OUT_SHARE` (strictly between 0 and 1).

    Args:
        value: The argument as passed.
        refuse: Builds the error of a refused value; the default names ``held_out=``, the
            CLI passes one naming ``--held-out`` (one rule, each boundary's own wording).

    Raises:
        LabelValidationError: a bool, text, NaN or infinity, a count below 1 or a share
            outside (0, 1) (or ``refuse(value)``).
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int_argument(value, refuse, minimum=1, maximum=MAX_EPISODE_INDEX)
    return number_argument(value, refuse, HELD_OUT_SHARE)


def _target(held_out: int | float, n: int) -> tuple[int, float | None]:
    """``(episode count, fraction or None)`` of a checked ``held_out``; refuses holding out everything."""
    if isinstance(held_out, float):
        return round(held_out * n), held_out
    if not held_out < n:
        raise LabelValidationError(
            f"a held-out count of {held_out} would leave no train episode among the {n} candidate episodes; "
            f"ask for at most {n - 1} episodes, or a fraction."
        )
    return held_out, None


def components(groups: dict[int, dict[str, str]], keys: tuple[str, ...]) -> list[list[int]]:
    """Episodes joined when they share any value of a chosen key; sorted lists, by first episode."""
    parent: dict[int, int] = {e: e for e in groups}

    def find(e: int) -> int:
        while parent[e] != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e

    owner: dict[tuple[str, str], int] = {}
    for episode in sorted(groups):
        for key in keys:
            value = groups[episode].get(key)
            if value is None:
                continue
            first = owner.setdefault((key, value), episode)
            a, b = find(first), find(episode)
            if a != b:
                parent[max(a, b)] = min(a, b)
    comps: dict[int, list[int]] = {}
    for episode in sorted(groups):
        comps.setdefault(find(episode), []).append(episode)
    return sorted(comps.values(), key=lambda c: c[0])


def _subset_sums(sizes: list[int], limit: int) -> list[int]:
    """``tables[i]``: bitset of sums reachable with the first i sizes (sums <= limit)."""
    mask = (1 << (limit + 1)) - 1
    tables = [1]
    for size in sizes:
        tables.append((tables[-1] | (tables[-1] << size)) & mask)
    return tables


def _pick(sizes: list[int], tables: list[int], total: int) -> list[int]:
    """Indices of sizes that sum to ``total`` (reachable in ``tables[-1]``)."""
    chosen = []
    for i in range(len(sizes) - 1, -1, -1):
        if not (tables[i] >> total) & 1:
            chosen.append(i)
            total -= sizes[i]
    return chosen


def _nearest(bits: int, target: int, n: int) -> tuple[int | None, int | None]:
    """The reachable sums in ``[1, n - 1]`` nearest below-or-at and above ``target``."""
    below = next((s for s in range(min(target, n - 1), 0, -1) if (bits >> s) & 1), None)
    above = next((s for s in range(max(target + 1, 1), n) if (bits >> s) & 1), None)
    return below, above


def plan_split(
    groups: dict[int, dict[str, str]], held_out: Any, keys: tuple[str, ...], seed: int, tolerance: float = 0.05
) -> tuple[list[int], dict[str, Any]]:
    """Choose the held-out episodes; returns ``(held_out_episodes, facts)``.

    A fraction is met by the nearest achievable count; when that misses the fraction by
    more than ``tolerance`` (absolute), the request is impossible.

    Raises:
        SplitImpossibleError: the constraint makes the request impossible.
    """
    n = len(groups)
    if n < 2:
        raise SplitImpossibleError(
            f"{n} labelled episode(s) can be split; a held-out split needs at least 2. Label more episodes."
        )
    target, fraction = _target(held_out_argument(held_out), n)
    ungrouped = [e for e in sorted(groups) if not any(k in groups[e] for k in keys)]
    if ungrouped:
        raise SplitImpossibleError(
            f"episodes {ungrouped[:50]}{' ...' if len(ungrouped) > 50 else ''} have none of the leakage groups "
            f"{', '.join(keys)}; hold out by group, never by random episode: set their leakage_groups or choose "
            "group_keys they have."
        )
    comps = components(groups, keys)
    random.Random(seed).shuffle(comps)
    sizes = [len(c) for c in comps]
    facts: dict[str, Any] = {"components": len(comps), "largest_component": max(sizes)}
    if len(comps) == 1:
        raise SplitImpossibleError(
            f"all {n} episodes are joined into one group by shared {', '.join(keys)} values, so any held-out "
            "split would leak; choose fewer group_keys or correct the leakage_groups."
        )
    if len(comps) * (n + 1) <= MAX_DP_BITS:
        tables = _subset_sums(sizes, n)
        reachable = tables[-1]
        if fraction is None:
            if not (reachable >> target) & 1:
                nearest = [s for s in _nearest(reachable, target, n) if s is not None]
                raise SplitImpossibleError(
                    f"no union of whole leakage groups ({', '.join(keys)}) holds out exactly {target} of {n} "
                    f"episodes; the nearest possible counts are {' and '.join(map(str, nearest))} (component sizes: "
                    f"{sorted(sizes, reverse=True)[:20]}). Ask for one of those or a fraction."
                )
            achieved = target
        else:
            below, above = _nearest(reachable, max(target, 1), n)
            options = [s for s in (below, above) if s is not None]
            achieved = min(options, key=lambda s: (abs(s - fraction * n), s))
        chosen = _pick(sizes, tables, achieved)
    else:  # too large for an exact table: seeded greedy fill
        chosen, total = [], 0
        for i, size in enumerate(sizes):
            if total + size <= target:
                chosen.append(i)
                total += size
        if total == 0 or (fraction is None and total != target):
            raise SplitImpossibleError(
                f"a greedy pass over {len(comps)} leakage-group components reached {total} held-out episodes, "
                f"not {target}; try another seed or a fraction."
            )
    held = sorted(e for i in chosen for e in comps[i])
    if fraction is not None and abs(len(held) / n - fraction) > tolerance + 1e-12:
        raise SplitImpossibleError(
            f"whole leakage groups ({', '.join(keys)}) can hold out {len(held)} of {n} episodes "
            f"({len(held) / n:.0%}) at best near the requested {fraction:.0%}, which misses it by more than the "
            f"tolerance of {tolerance:.0%} (component sizes: {sorted(sizes, reverse=True)[:20]}). Ask for that "
            "count, widen tolerance=, or choose fewer group_keys."
        )
    facts.update(requested=target, requested_fraction=fraction, achieved=len(held))
    return held, facts


def split_by_groups(
    root: PathLike,
    *,
    held_out: int | float = 0.2,
    group_keys: Iterable[str] = LEAKAGE_GROUP_KEYS,
    seed: int = 0,
    labels_dir: PathLike | None = None,
    labeled_by: str | None = None,
    dry_run: bool = False,
    tolerance: float = 0.05,
) -> dict[str, Any]:
    """Assign ``evaluation_membership`` (``train`` / ``held_out_eval``) without group leakage
    (docs/outcomes.md, "Held-out splits"); episodes labelled ``none`` are left alone.

    Args:
        root: The dataset root.
        held_out: An exact episode count (``int``) or a fraction in (0, 1) (``float``; the
            nearest achievable count is used and reported, if within ``tolerance``).
        group_keys: The leakage-group keys that must not leak (default all five).
        seed: Shuffles the groups before the subset choice (same seed, same split).
        labels_dir: Where ``episode_outcomes.jsonl`` lives (default ``root``).
        labeled_by: Recorded on the new versions (default the login name).
        dry_run: Compute and report, write nothing.
        tolerance: How far (absolute fraction, from 0 to 1) the achieved held-out share may
            miss a requested fraction before the split is refused (default 0.05).

    Returns:
        ``{"counts": {"train": n, "held_out_eval": m}, "requested": count,
        "requested_fraction": f or None, "achieved": m, "held_out_eval": [...],
        "train": [...], "excluded_none": [...], "components": c, "largest_component": k,
        "group_keys": [...], "seed": seed, "written": versions written}``.

    Raises:
        LabelValidationError: a bad ``held_out`` (:func:`held_out_argument`), ``tolerance``
            or ``group_keys``; nothing written.
        SplitImpossibleError: the constraint makes the request impossible; nothing written.
        DatasetError: ``root`` is not a LeRobot dataset (a write; nothing created).
    """
    held_out = held_out_argument(held_out)
    tolerance = number_argument(
        tolerance,
        number_refusal("tolerance", UNIT_FRACTION, "pass how far the achieved share may miss, e.g. tolerance=0.05."),
        UNIT_FRACTION,
    )
    keys = _group_keys(group_keys)
    who = labeled_by if labeled_by is not None else default_labeled_by()

    def build(store: OutcomeStore) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        current = {e: v[-1] for e, v in store.versions.items()}
        excluded = {e for e, r in current.items() if r.get("evaluation_membership") == "none"}
        groups = {e: r.get("leakage_groups") or {} for e, r in current.items() if e not in excluded}
        held, facts = plan_split(groups, held_out, keys, seed, tolerance)
        held_set = set(held)
        train = sorted(e for e in groups if e not in held_set)
        records = []
        for episode in sorted(groups):
            membership = "held_out_eval" if episode in held_set else "train"
            record = current[episode]
            if record.get("evaluation_membership") != membership:
                label = {k: record.get(k) for k in WRITABLE_FIELDS}
                label.update(evaluation_membership=membership, labeled_by=who)
                records.append(new_version(episode, label, record, record.get("fingerprint")))  # the same recording
        report = {
            "counts": {"train": len(train), "held_out_eval": len(held)},
            **facts,
            "held_out_eval": held,
            "train": train,
            "excluded_none": sorted(excluded),
            "group_keys": list(keys),
            "seed": seed,
            "written": 0 if dry_run else len(records),
        }
        return ([] if dry_run else records), report

    if dry_run:
        return build(load_store(root, labels_dir))[1]
    cached_dataset(root)  # outcome labels are written into a dataset only (no labels-only root): nothing created
    return open_outcome_store(root, labels_dir).write(build)
