"""Whether an episode is known not to have succeeded, for ``task_complete_after_failure``
(docs/segments.md, "Validation and findings"): its outcome label is not a success, or its
(reviewed) verdict is ``success: false``; an episode with neither label is not known either way.
"""

from __future__ import annotations

from pathlib import Path


def failed_episodes(root: str | Path, *, labels_dir: str | Path | None = None) -> dict[int, str]:
    """Episode index -> why it did not succeed, for every episode labelled so.

    Reads both sidecars once (a missing sidecar contributes nothing).

    Raises:
        SidecarError: a sidecar exists but cannot be used (the same refusal its own tools give).
        RootNotFoundError: ``root`` (or ``labels_dir``) is not an existing directory.
    """
    from strands_robots.episode_labels.document import existing_store
    from strands_robots.episode_labels.review import effective_success
    from strands_robots.errors import LabelsNotFoundError
    from strands_robots.outcomes import list_outcomes
    from strands_robots.outcomes.verdicts import SUCCESS_OUTCOMES

    outcomes = {
        int(label["episode_index"]): f"its outcome label is {label['outcome']!r}, not a success"
        for label in list_outcomes(root, labels_dir=labels_dir)
        if label["outcome"] not in SUCCESS_OUTCOMES
    }
    try:
        store = existing_store(root, labels_dir)
    except LabelsNotFoundError:  # no label sidecar: nothing more is known (a missing root is raised)
        return outcomes
    success = store.query(lambda document: {int(k): effective_success(r) for k, r in document["episodes"].items()})
    verdicts = {ep: "its verdict in episode_labels.json is success=false" for ep, ok in success.items() if ok is False}
    return verdicts | outcomes  # an episode with both: the outcome label's reason
