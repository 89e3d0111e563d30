"""Selecting episodes across stores: the label bar, then the current outcome labels.

This module sits above the label stores (``episode_labels`` and ``outcomes``), so neither
store imports the other to select (docs/architecture.md, "Layers"). The label rules are
:meth:`strands_robots.episode_labels.filter_rule.LabelIndex.drop_codes`'s; this module adds
the outcome filters, the held-out rule (docs/outcomes.md, "Held-out episodes") and the
stale check. ``strands_robots.episode_labels.filter_episodes`` is :func:`filter_episodes`
(the name strands-robots 0.5.3 has).

The outcomes package is imported inside the functions that read it: it loads the
dataset reader (pyarrow), and a directory without outcome labels costs one ``stat``.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any

import strands_robots
from strands_robots.arguments import names_argument
from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import existing_store
from strands_robots.episode_labels.filtering import StaleLabelsWarning
from strands_robots.episode_labels.vocab import LABEL_DROP_REASONS, QUALITY_RANK
from strands_robots.errors import LabelValidationError, did_you_mean
from strands_robots.storage.side_files import OUTCOMES

if TYPE_CHECKING:
    import numpy as np

    from strands_robots.episode_labels.filter_rule import LabelIndex
    from strands_robots.labels import Labels

#: This package's directory: the stale warning is shown at the first caller outside it.
PACKAGE = os.path.dirname(strands_robots.__file__) + os.sep

#: The ``evaluation_membership`` that keeps an episode out of every training release.
HELD_OUT = "held_out_eval"

#: The outcome sidecar's name (``storage.side_files.OUTCOMES``): a directory without outcome
#: labels costs one ``stat`` and no import of the outcomes package.
OUTCOMES_SIDECAR = OUTCOMES

#: ``explain_filter``'s drop reasons, in the order they are checked.
DROP_REASONS: tuple[str, ...] = (
    *LABEL_DROP_REASONS,
    "no outcome label",
    "outcome not selected",
    "membership not selected",
    "held out",
    "stale",
)


def refuse_stale_labels(labels: Labels) -> None:
    """The ``strict`` rule of :func:`filter_episodes`: every label is readable and matches the
    dataset, or the selection is refused (``docs/editing.md``, "Before the remap").

    Raises:
        StaleRecordError: labels of the dataset no longer match it (listed).
        UnreadableRecordError: label writes the store refused (never applied) are kept aside,
            or the dataset cannot be opened to check the labels' fingerprints.
    """
    from strands_robots.errors import StaleRecordError, UncheckedLabelsWarning, UnreadableRecordError
    from strands_robots.storage.side_files import rejected_path

    root = labels.root
    store = existing_store(labels.root, labels.labels_dir)
    refused = store.problems()["rejected"]
    if refused:
        raise UnreadableRecordError(
            f"{refused} label write(s) to {store.path} were refused and never applied (kept in "
            f"{rejected_path(store.path)} with the reason); strict selection refuses to leave those episodes' labels "
            f"out. Re-record them, then delete that file (`strands-labels show {root}` counts them)."
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncheckedLabelsWarning)
        try:
            stale = labels.episodes.stale()
        except UncheckedLabelsWarning as exc:
            raise UnreadableRecordError(
                f"{exc}; strict selection refuses labels it cannot check against the dataset. Repair the dataset "
                f"(`strands-labels info {root} --check` names what is wrong), then select again."
            ) from None
    if stale:
        shown = "; ".join(f"episode {e}: {why}" for e, why in list(stale.items())[:10])
        raise StaleRecordError(
            f"{len(stale)} label(s) of {root} no longer match the dataset ({shown}); strict selection refuses to "
            f"leave them out. Carry them: `strands-labels remap {root} --from OLD_ROOT` (docs/editing.md)."
        )


def held_out_episodes(labels: Labels) -> set[int]:
    """Episodes whose current outcome label is ``held_out_eval`` (empty without outcome labels)."""
    if not (labels.directory / OUTCOMES_SIDECAR).exists():
        return set()
    current = labels.outcomes.current()
    return {e for e, label in current.items() if label.get("evaluation_membership") == HELD_OUT}


class _Selection:
    """One selection's arguments, checked once: the label bar and the outcome filters (read lazily)."""

    def __init__(self, labels: Labels, options: dict[str, Any], context: str = "") -> None:
        """``options``: the keyword arguments of :func:`filter_episodes` or :func:`explain_filter`
        (its ``locals()`` on entry); ``context`` starts the message of a refused grade."""
        self.labels = labels
        self.bar: dict[str, Any] = {
            "require_success": checks.boolean(options["require_success"], "require_success"),
            "exclude_disputed": checks.boolean(options["exclude_disputed"], "exclude_disputed"),
        }
        include_held_out = checks.boolean(options["include_held_out"], "include_held_out")
        self.bar["min_rank"] = QUALITY_RANK[checks.quality(options["min_quality"], "min_quality", context=context)]
        self.outcomes = self.membership = None
        outcomes, membership = options["outcomes"], options["evaluation_membership"]
        self.active = outcomes is not None or membership is not None
        if self.active:  # the vocabulary: only when asked
            from strands_robots.outcomes.model import EVALUATION_MEMBERSHIPS, OUTCOMES

            self.outcomes = _as_set(outcomes, "outcomes", OUTCOMES)
            self.membership = _as_set(membership, "evaluation_membership", (*EVALUATION_MEMBERSHIPS, ""))
        self.keep_held_out = include_held_out or bool(self.membership and HELD_OUT in self.membership)

    def drop_codes(self) -> tuple[LabelIndex, np.ndarray]:
        """The label index and, per record, the first label rule it fails (:meth:`LabelIndex.drop_codes`)."""
        from strands_robots.episode_labels.filter_rule import label_index  # numpy

        index = label_index(existing_store(self.labels.root, self.labels.labels_dir))
        return index, index.drop_codes(**self.bar)

    def held_out(self) -> set[int]:
        return set() if self.keep_held_out else held_out_episodes(self.labels)

    def reason(self, label: dict[str, Any] | None) -> str | None:
        """``"no outcome label"``, ``"outcome not selected"``, ``"membership not selected"`` or None (kept)."""
        if label is None:
            return "no outcome label"
        if self.outcomes is not None and label.get("outcome") not in self.outcomes:
            return "outcome not selected"
        membership = label.get("evaluation_membership") or ""  # unset is not "none" (docs/outcomes.md)
        if self.membership is not None and membership not in self.membership:
            return "membership not selected"
        return None

    def narrow(self, chosen: list[int]) -> list[int]:
        if self.active:
            current = self.labels.outcomes.current()
            chosen = [i for i in chosen if self.reason(current.get(i)) is None]
        held_out = self.held_out()
        return [i for i in chosen if i not in held_out] if held_out else chosen


def filter_episodes(
    labels: Labels,
    *,
    require_success: bool = True,
    min_quality: str = "medium",
    exclude_disputed: bool = False,
    outcomes: str | list[str] | None = None,
    evaluation_membership: str | list[str] | None = None,
    include_held_out: bool = False,
    strict: bool = False,
) -> list[int]:
    """Episode indices that clear the bar, sorted.

    Rules (docs/sidecar-format.md, docs/review.md, docs/outcomes.md "Held-out splits"):

    - an episode with no judge block is always excluded;
    - ``require_success`` reads the deterministic verdict, flipped by a current human
      ``overrule_verdict`` review (the recorded verdict itself is untouched);
    - quality ranks ``low < medium < high``; a current review's ``quality`` replaces
      the judge's;
    - ``exclude_disputed`` drops disputes that no current review has decided;
    - ``outcomes`` / ``evaluation_membership`` keep only episodes whose current outcome
      label (``episode_outcomes.jsonl``) has one of the given values;
    - an episode whose current outcome label has ``evaluation_membership ==
      "held_out_eval"`` never enters a training selection (docs/outcomes.md, "Held-out
      episodes"): it is left out unless ``include_held_out`` is true or
      ``evaluation_membership`` asks for ``held_out_eval`` by name;
    - labels whose dataset fingerprint no longer matches (the dataset was renumbered)
      are excluded with a ``StaleLabelsWarning``.

    Args:
        labels: The dataset's :class:`~strands_robots.labels.Labels` (``Labels.filter`` calls this).
        require_success: Keep only (effectively) successful episodes.
        min_quality: Lowest acceptable grade.
        exclude_disputed: Drop episodes with an open dispute.
        outcomes: Outcome value(s) to keep, e.g. ``["expert_success", "slow_success"]``.
        evaluation_membership: ``train``, ``held_out_eval``, ``none``, or ``""`` for labels
            whose membership is unset (or a list of these).
        include_held_out: Keep held-out evaluation episodes too (for evaluation, not training).
        strict: A stale label, a refused label write or a dataset the labels cannot be
            checked against is an error instead of an excluded (or unchecked) episode, so a
            training script cannot quietly train on fewer episodes (``docs/editing.md``).

    Returns:
        Sorted real ``episode_index`` values.

    Raises:
        LabelValidationError: a flag is not a boolean or the grade or an outcome value is unknown.
        LabelsNotFoundError: no sidecar yet (a ``FileNotFoundError``).
        RootNotFoundError: the root or ``labels_dir`` is not a directory.
        StaleRecordError: ``strict`` and some labels no longer match the dataset (listed).
        UnreadableRecordError: ``strict`` and some labels cannot be read or checked
            (:func:`refuse_stale_labels`).
    """
    selection = _Selection(labels, locals(), context="filter_episodes")
    if checks.boolean(strict, "strict"):
        refuse_stale_labels(labels)
    index, codes = selection.drop_codes()
    chosen = selection.narrow(index.episode[codes == 0].tolist())
    # only records that carry a fingerprint can be stale (files written by other tools have none)
    stale = labels.episodes.stale() if index.has_fingerprint[codes == 0].any() else {}
    dropped = sorted(set(chosen) & set(stale))
    if dropped:
        warnings.warn(
            f"labels of episodes {dropped[:20]} are stale (the dataset changed since they were recorded, "
            f"e.g. {stale[dropped[0]]}); they were left out. Run `strands-labels remap` to carry labels "
            "across a dataset edit.",
            StaleLabelsWarning,
            skip_file_prefixes=(PACKAGE,),  # shown at the user's call
        )
        chosen = [i for i in chosen if i not in stale]
    return chosen


def explain_filter(
    labels: Labels,
    *,
    require_success: bool = True,
    min_quality: str = "medium",
    exclude_disputed: bool = False,
    outcomes: str | list[str] | None = None,
    evaluation_membership: str | list[str] | None = None,
    include_held_out: bool = False,
) -> dict[str, Any]:
    """The selection of :func:`filter_episodes` with the reason for every episode it drops.

    Takes the same arguments as :func:`filter_episodes` and applies the same rules; an
    episode is counted under the first rule it fails (the order of :data:`DROP_REASONS`).

    Returns:
        ``{"kept": [episode, ...], "dropped": {reason: [episode, ...]}}``; ``dropped`` has
        every key of :data:`DROP_REASONS` (empty lists included), episodes sorted.

    Raises:
        LabelValidationError: a flag is not a boolean or a value is unknown.
        LabelsNotFoundError: no sidecar yet (a ``FileNotFoundError``).
    """
    wanted = _Selection(labels, locals())
    index, codes = wanted.drop_codes()
    current = labels.outcomes.current() if wanted.active else {}
    held_out = wanted.held_out()
    stale = labels.episodes.stale() if index.has_fingerprint.any() else {}

    kept: list[int] = []
    dropped: dict[str, list[int]] = {name: [] for name in DROP_REASONS}
    for episode, code in zip(index.episode.tolist(), codes.tolist(), strict=True):
        why = LABEL_DROP_REASONS[code - 1] if code else None
        if why is None and wanted.active:
            why = wanted.reason(current.get(episode))
        if why is None and episode in held_out:
            why = "held out"
        if why is None and episode in stale:
            why = "stale"
        (kept if why is None else dropped[why]).append(episode)
    return {"kept": kept, "dropped": dropped}


def _as_set(value: Any, what: str, allowed: tuple[str, ...]) -> set[str] | None:
    """One value or a list, each from ``allowed`` (a typo must not empty a training set)."""
    if value is None:
        return None
    values = [value] if isinstance(value, str) else names_argument(value, what, f"[{allowed[0]!r}]") or []
    words = ", ".join(a for a in allowed if a) + (' or "" (not set)' if "" in allowed else "")
    for v in values:
        if v not in allowed:
            raise LabelValidationError(f"{what} value {v!r} is not one of {words}.{did_you_mean(v, allowed)}")
    return set(values)
