"""The mistake-and-recovery track (docs/outcomes.md, "Recovery track and verdicts")."""

from __future__ import annotations

from pathlib import Path

from strands_robots.outcomes.labels import load_store

#: The outcomes of the recovery track (never ``unsafe``).
RECOVERY_OUTCOMES: tuple[str, ...] = ("mistake_and_recovery", "intervention")


def recovery_track(root: str | Path, *, labels_dir: str | Path | None = None) -> list[int]:
    """Sorted ``episode_index`` values whose current outcome is in :data:`RECOVERY_OUTCOMES`.

    Read each episode's subtasks and hand actions with ``get_outcome`` to see where the
    mistake and the recovery are.
    """
    store = load_store(root, labels_dir)
    return sorted(e for e, v in store.versions.items() if v[-1].get("outcome") in RECOVERY_OUTCOMES)
