"""Group commits of model judges' labels: durable when ``write_label`` returns, one fsync for many.

Concurrent writers share a commit (docs/judge.md, "Parallel conversations"): the first to
arrive commits what every writer handed in meanwhile, then wakes them.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_robots.episode_labels.judge import annotate_episodes


def write_each(root: Path, labels_dir: str | Path | None, annotations: list[dict[str, Any]]) -> list[Any]:
    """Write ``annotations`` (items of :func:`~strands_robots.episode_labels.judge.annotate_episodes`)
    in one commit; when the all-or-nothing batch is refused, one at a time.

    Returns:
        Per annotation, its stored record or the exception that refused it.
    """
    try:
        return list(annotate_episodes(root, annotations, labels_dir=labels_dir))
    except Exception:  # noqa: BLE001 - all or nothing refused the batch: find the annotations at fault
        pass
    out: list[Any] = []
    for annotation in annotations:
        try:
            out.extend(annotate_episodes(root, [annotation], labels_dir=labels_dir))
        except Exception as exc:  # noqa: BLE001 - handed to its own writer
            out.append(exc)
    return out


@dataclass
class _Slot:
    root: Path
    labels_dir: Path | None
    annotation: dict[str, Any]
    done: threading.Event = field(default_factory=threading.Event)
    record: dict[str, Any] | None = None
    error: BaseException | None = None


class GroupCommit:
    """Concurrent label writes of one run, committed together (thread-safe).

    Attributes:
        commits: Group commits made (a figure for tests and benchmarks).
    """

    def __init__(self) -> None:
        self.commits = 0
        self._lock = threading.Lock()
        self._pending: list[_Slot] = []
        self._committing = False

    def write(self, root: Path, labels_dir: Path | None, episode: int, fields: dict[str, Any]) -> dict[str, Any]:
        """Write one judge block (``fields``: the keywords of ``annotate_episode``) and return the record.

        Returns once the label is durable (its batch committed).

        Raises:
            Exception: what :func:`~strands_robots.episode_labels.judge.annotate_episode`
                raises for this label.
        """
        slot = _Slot(root, labels_dir, {"episode": episode, **fields, "keep_history": True})
        with self._lock:
            self._pending.append(slot)
            lead = not self._committing
            self._committing = self._committing or lead
        if lead:
            self._drain()
        slot.done.wait()
        if slot.error is not None:
            raise slot.error
        assert slot.record is not None
        return slot.record

    def _drain(self) -> None:
        """Commit batches until no writer waits (run by one writer at a time)."""
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._committing = False
                    return
            groups: dict[tuple[Path, Path | None], list[_Slot]] = defaultdict(list)
            for slot in batch:
                groups[(slot.root, slot.labels_dir)].append(slot)
            try:
                for (root, labels_dir), slots in groups.items():
                    self._commit(root, labels_dir, slots)
            except BaseException as exc:  # an interrupt: no writer may wait for ever
                with self._lock:
                    stranded, self._pending, self._committing = batch + self._pending, [], False
                for slot in stranded:
                    if not slot.done.is_set():
                        slot.error = exc
                        slot.done.set()
                raise

    def _commit(self, root: Path, labels_dir: Path | None, slots: list[_Slot]) -> None:
        try:
            self.commits += 1
            for slot, outcome in zip(slots, write_each(root, labels_dir, [s.annotation for s in slots]), strict=True):
                if isinstance(outcome, Exception):
                    slot.error = outcome
                else:
                    slot.record = outcome
        finally:
            for slot in slots:
                slot.done.set()
