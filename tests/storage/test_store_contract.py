"""The store contract, written once and run for every label store.

``episode_labels.json`` (verdicts, judge labels, reviews), ``episode_outcomes.jsonl``
(outcome labels) and ``episode_segments.json`` (segmentations) keep the same promises
(docs/architecture.md, "One store contract"):

- a dataset root or ``labels_dir`` that does not exist is one typed error
  (:class:`RootNotFoundError`) for reads and writes, and nothing is created;
- an argument that is not an episode index (``-1``, ``True``) is a
  :class:`LabelValidationError`, an episode the dataset lacks an
  :class:`EpisodeNotFoundError`, and neither stores anything;
- what is written is read back, by this process and by a fresh one;
- a sidecar this build cannot use (another tool's file, a newer format, not JSON) is one
  :class:`SidecarError` for reads and writes that says it was left untouched and names the
  remedy, and its bytes stay as they were; a sidecar path that is no regular file (a
  directory, a FIFO) is refused by reads and writes without hanging, and a write never goes
  through a symbolic link;
- a write leaves no temporary file behind, and a write that fails (the disk refuses the
  fsync) leaves the stored bytes exactly as they were;
- each record carries the dataset fingerprint, so a renumbering edit makes it stale, and
  the one transactional remap (:func:`strands_robots.remap.remap_dataset`) moves it and
  clears the staleness;
- each store's own ``remap`` applies one rule: a mapping that would drop records needs
  ``allow_drop``, a new index the dataset lacks is an :class:`EpisodeNotFoundError`, a
  mapping the stored fingerprints contradict is a :class:`LabelValidationError` listing
  the moves, and a refused remap changes no stored byte; without a sidecar it writes nothing;
- one store instance per file and process (a forked child opens its own), and each store's cache is checked with the shared
  :func:`~strands_robots.storage.registry.file_identity` / ``appended_since`` rule.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from strands_robots import episode_labels as el
from strands_robots import outcomes, segments
from strands_robots.errors import (
    EpisodeNotFoundError,
    LabelValidationError,
    RootNotFoundError,
    SidecarError,
    StorageError,
)
from strands_robots.remap import mapping_after_delete, remap_dataset
from strands_robots.storage.registry import appended_since, file_identity
from strands_robots.storage.side_files import STATE_DIR, journal_path, state_dir
from tests.processes import in_new_process
from tests.storage.remap_helpers import delete_episodes_meta
from tests.synth import make_v3_dataset

LENGTHS = [60, 90, 120]


def _segment(root: Path, episode: int, tag: str) -> Any:
    from strands_robots.dataset import open_dataset

    episodes = open_dataset(root).episodes
    length = int(episodes[episode].length) if episode in episodes else 90  # a refused index: any span
    span = [{"start": 0, "end": length, "label": "pick up the cube from the table"}]
    return segments.save_segmentation(root, episode, span, annotator=tag)


def _open_labels(root: Path) -> Any:
    from strands_robots.episode_labels.document import open_store

    return open_store(root)


def _open_outcomes(root: Path) -> Any:
    from strands_robots.outcomes.store import open_outcome_store

    return open_outcome_store(root)


def _open_segments(root: Path) -> Any:
    from strands_robots.segments.store import open_store

    return open_store(root)


def _stored_outcome(root: Path, episode: int) -> dict[str, Any]:
    """The stored current version (the public label leaves the fingerprint out)."""
    from strands_robots.outcomes.store import OutcomeStore, outcomes_path

    return OutcomeStore.open(outcomes_path(root)).refresh().current(episode)


@dataclass(frozen=True)
class Store:
    """One label store seen through the contract: write a tag, read it back, list stale records."""

    name: str
    sidecar: str
    write: Callable[[Path, int, str], Any]
    read: Callable[[Path, int], str]
    read_all: Callable[[Path], Any]
    stale: Callable[[Path], dict[int, str]]
    open: Callable[[Path], Any]
    fingerprint: Callable[[Path, int], dict[str, Any]]
    remap: Callable[..., int]
    #: what the drop refusal calls the records
    what: str
    #: a sidecar this build cannot use, by kind: (file content, what the refusal says)
    unusable: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: a remap rewrites the records (their fingerprint is refreshed) rather than appending a move
    rewrites: bool = True
    flush: Callable[[Path], Any] = lambda root: None


STORES = [
    Store(
        name="episode_labels",
        sidecar="episode_labels.json",
        write=lambda root, e, tag: el.annotate_episode(root, e, quality="high", note=tag),
        read=lambda root, e: el.read_labels(root)["episodes"][str(e)]["judge"]["note"],
        read_all=lambda root: el.read_labels(root),
        stale=lambda root: el.stale_episodes(root),
        open=_open_labels,
        fingerprint=lambda root, e: el.read_labels(root)["episodes"][str(e)]["fingerprint"],
        remap=el.remap,
        what="labels",
        unusable={
            "foreign": ('{"labels": []}\n', "it has schema_version None; this build reads version 1"),
            "future": ('{"schema_version": 2, "benchmark": "", "episodes": {}}\n', "it has schema_version 2"),
            "not JSON": ('{"schema_version": 1, "benchmark": "", "episo', "is not valid JSON"),
        },
        flush=lambda root: el.flush(root),
    ),
    Store(
        name="outcomes",
        sidecar="episode_outcomes.jsonl",
        write=lambda root, e, tag: outcomes.set_outcome(root, e, outcome="expert_success", labeled_by=tag),
        read=lambda root, e: outcomes.get_outcome(root, e)["labeled_by"],
        read_all=lambda root: outcomes.list_outcomes(root),
        stale=lambda root: outcomes.stale_outcomes(root),
        open=_open_outcomes,
        fingerprint=lambda root, e: _stored_outcome(root, e)["fingerprint"],
        remap=outcomes.remap,
        what="outcome labels",
        unusable={
            "foreign": ('{"episode_index": 0, "outcome": "success"}\n', "is not an outcome sidecar"),
            "future": (
                '{"kind": "header", "format": "strands-robots-labels/episode_outcomes", "version": 2}\n',
                "has format version 2; this strands-robots-labels reads version 1. Upgrade",
            ),
            "not JSON": ('{"kind": "hea\n{"x"\n', "(line 1 after byte 0) is not valid JSON"),
        },
        rewrites=False,
    ),
    Store(
        name="segments",
        sidecar="episode_segments.json",
        write=_segment,
        read=lambda root, e: segments.get_segmentation(root, e)["annotator"],
        read_all=lambda root: segments.list_segmentations(root),
        stale=lambda root: segments.stale_segmentations(root),
        open=_open_segments,
        fingerprint=lambda root, e: segments.get_segmentation(root, e)["fingerprint"],
        remap=segments.remap,
        what="segmentations",
        unusable={
            "foreign": ('{"schema_version": 1, "episodes": {}}', "its 'kind' is None, not 'episode_segments'"),
            "future": (
                '{"schema_version": 2, "kind": "episode_segments", "episodes": {}}',
                "schema_version 2 is newer than this build reads (1); upgrade",
            ),
            "not JSON": ('{"schema_version": 1, "kind": "episode_segm', "is not valid JSON"),
        },
    ),
]


@pytest.fixture(params=STORES, ids=[s.name for s in STORES])
def store(request) -> Store:
    return request.param


@pytest.fixture
def root(tmp_path) -> Path:
    """Three episodes of 60, 90 and 120 frames; 1 and 2 have a deterministic verdict (so a
    judge label can be written) and are the episodes the tests label."""
    root = make_v3_dataset(tmp_path / "ds", LENGTHS)
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in (1, 2)])
    return root


def _stored_bytes(root: Path, store: Store) -> dict[str, bytes]:
    """Every file of the store (the sidecar and its hidden journal), by name."""
    names = [store.sidecar, f"{STATE_DIR}/{store.sidecar}.journal"]
    return {name: (root / name).read_bytes() for name in names if (root / name).exists()}


def _temporary_files(root: Path) -> list[str]:
    folders = [d for d in (root, state_dir(root)) if d.is_dir()]
    return sorted(p.name for d in folders for p in d.iterdir() if p.name.endswith(".tmp") or ".tmp." in p.name)


# -- a missing root ------------------------------------------------------------------------------


def test_a_missing_root_is_one_typed_error_for_reads_and_writes(store, tmp_path):
    gone = tmp_path / "gone"
    with pytest.raises(RootNotFoundError, match=f"Dataset root {gone} is not an existing directory"):
        store.read_all(gone)
    with pytest.raises(RootNotFoundError, match="not an existing directory"):
        store.read(gone, 0)
    assert not gone.exists()


def test_a_missing_labels_dir_is_refused_not_created(store, root, tmp_path):
    """The outcome store alone reads a labels_dir that does not exist yet as empty and
    creates it on its first write (``strands-labels outcome import --labels-dir NEW``); the
    others refuse the read naming the labels directory (not the dataset root) and create nothing."""
    elsewhere = tmp_path / "no-such-labels-dir"
    readers = {
        "episode_labels": lambda: el.read_labels(root, labels_dir=elsewhere),
        "outcomes": lambda: outcomes.list_outcomes(root, labels_dir=elsewhere),
        "segments": lambda: segments.list_segmentations(root, labels_dir=elsewhere),
    }
    if store.name == "outcomes":
        assert readers[store.name]() == []
        assert not elsewhere.exists()
        outcomes.set_outcome(root, 1, outcome="failure", labels_dir=elsewhere)
        assert [label["episode_index"] for label in readers[store.name]()] == [1]
        return
    with pytest.raises(RootNotFoundError, match=f"Labels directory {elsewhere} is not an existing directory"):
        readers[store.name]()
    assert not elsewhere.exists()


# -- round trip ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("episode", "error", "says"),
    [
        (-1, LabelValidationError, "non-negative integer episode_index"),
        (True, LabelValidationError, "non-negative integer episode_index"),
        (7, EpisodeNotFoundError, "7"),
    ],
)
def test_an_episode_index_is_checked_before_anything_is_stored(store, root, episode, error, says):
    store.write(root, 1, "kept")
    store.flush(root)
    before = _stored_bytes(root, store)
    with pytest.raises(error, match=says):
        store.write(root, episode, "lost")
    assert _stored_bytes(root, store) == before
    assert store.read(root, 1) == "kept"


def test_what_is_written_is_read_back_here_and_by_a_fresh_process(store, root):
    store.write(root, 1, "first")
    store.write(root, 1, "second")
    store.write(root, 2, "other")
    assert (store.read(root, 1), store.read(root, 2)) == ("second", "other")
    store.flush(root)
    assert in_new_process(lambda: (store.read(root, 1), store.read(root, 2))) == ("second", "other")
    assert (root / store.sidecar).is_file()


@pytest.mark.parametrize("kind", ["foreign", "future", "not JSON"])
def test_an_unusable_sidecar_is_refused_by_reads_and_writes_and_left_untouched(store, root, kind):
    content, says = store.unusable[kind]
    path = root / store.sidecar
    path.write_text(content)
    for call in (lambda: store.read_all(root), lambda: store.write(root, 1, "lost")):
        with pytest.raises(SidecarError, match="left untouched") as info:
            call()
        assert says in str(info.value)
        assert "move it away" in str(info.value)  # the remedy
    assert path.read_text() == content
    assert not journal_path(root / store.sidecar).exists()


NOT_A_FILE = {
    "symlink": "is a symbolic link; refusing to write through it",
    "directory": "is a directory; move it away",
    "fifo": "is not a regular file; move it away",
}


@pytest.mark.parametrize("kind", sorted(NOT_A_FILE))
def test_a_sidecar_path_that_is_no_regular_file_is_refused_and_nothing_changes(store, root, kind):
    """The episode-label store alone reads through a symbolic link (0.5.3 opens the path);
    every store refuses to write through one."""
    store.write(root, 1, "kept")
    store.flush(root)
    path = root / store.sidecar
    real = root.parent / "elsewhere"
    if kind == "symlink":
        path.rename(real)
        path.symlink_to(real)
        before = real.read_bytes()
    elif kind == "directory":
        path.unlink()
        path.mkdir()
    else:
        path.unlink()
        os.mkfifo(path)
    calls = [lambda: store.write(root, 1, "lost")]
    if kind != "symlink":
        calls.append(lambda: store.read_all(root))
    previous = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("hung")))
    try:
        for call in calls:
            signal.alarm(10)
            with pytest.raises(SidecarError, match=NOT_A_FILE[kind]):
                call()
            signal.alarm(0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert (kind == "symlink") == path.is_symlink()
    assert (kind == "directory") == path.is_dir() and (kind == "fifo") == path.is_fifo()
    if kind == "symlink":
        assert real.read_bytes() == before


def test_one_instance_per_file(store, root):
    first = store.open(root)
    assert store.open(root) is first
    assert store.open(Path(str(root) + "/.")) is first  # the same file by another spelling


# -- atomic writes -------------------------------------------------------------------------------


def test_writes_leave_no_temporary_file(store, root):
    for tag in ("a", "b", "c"):
        store.write(root, 2, tag)
    store.flush(root)
    assert _temporary_files(root) == []
    assert store.read(root, 2) == "c"


def test_a_failed_write_leaves_the_stored_bytes_unchanged(store, root, monkeypatch):
    """The disk refuses the fsync (CI runs as root, so a read-only directory would not stop it)."""
    store.write(root, 1, "kept")
    store.flush(root)
    before = _stored_bytes(root, store)
    assert before  # the sidecar exists

    def refuse(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error (injected)")

    monkeypatch.setattr(os, "fsync", refuse)
    monkeypatch.setattr(os, "fdatasync", refuse)  # the JSON Lines append syncs its data only
    with pytest.raises((StorageError, OSError)):
        store.write(root, 1, "lost")
        store.flush(root)
    monkeypatch.undo()
    assert _stored_bytes(root, store) == before
    assert _temporary_files(root) == []
    assert in_new_process(lambda: store.read(root, 1)) == "kept"
    store.write(root, 1, "after")  # the store still works
    assert store.read(root, 1) == "after"


# -- fingerprint, staleness and the one remap ----------------------------------------------------


def test_each_record_stores_the_dataset_fingerprint(store, root):
    store.write(root, 2, "two")
    stored = store.fingerprint(root, 2)
    assert stored["length"] == 120 and stored["index_range"] == [150, 270]
    assert store.stale(root) == {}


def test_a_renumbering_edit_makes_records_stale_and_the_one_remap_moves_them(store, root):
    store.write(root, 1, "one")
    store.write(root, 2, "two")
    assert store.stale(root) == {}
    delete_episodes_meta(root, [0])  # LeRobot's delete_episodes([0]): 1 -> 0 (90 frames), 2 -> 1 (120)
    stale = store.stale(root)
    assert sorted(stale) == [1, 2]
    # one reason rule in every store: identity keys (length, tasks, content) before index_range
    assert stale[1] == "length was 90 when labelled, now 120"
    assert "no longer in the dataset" in stale[2]
    result = remap_dataset(root, mapping_after_delete(3, [0]))
    assert result.counts[store.name] >= 2
    assert store.stale(root) == {}
    assert (store.read(root, 0), store.read(root, 1)) == ("one", "two")
    assert store.fingerprint(root, 0)["length"] == 90
    if store.rewrites:  # refreshed by the remap; an appended move keeps what was read at labelling
        assert store.fingerprint(root, 0)["index_range"] == [0, 90]
    assert in_new_process(lambda: (store.read(root, 0), store.read(root, 1))) == ("one", "two")


def test_a_remap_that_drops_records_needs_allow_drop(store, root):
    store.write(root, 1, "one")
    store.write(root, 2, "two")
    store.flush(root)
    delete_episodes_meta(root, [1])  # 0 stays, 2 -> 1
    before = _stored_bytes(root, store)
    with pytest.raises(LabelValidationError, match=rf"would drop the {store.what} of 1 episode\(s\) \[1\]"):
        store.remap(root, {0: 0, 2: 1})
    assert _stored_bytes(root, store) == before
    assert store.remap(root, {0: 0, 2: 1}, allow_drop=True) == 1
    assert store.read(root, 1) == "two" and store.stale(root) == {}
    assert in_new_process(lambda: store.read(root, 1)) == "two"


def test_a_new_index_the_dataset_lacks_is_refused_and_nothing_changes(store, root):
    store.write(root, 1, "one")
    store.write(root, 2, "two")
    store.flush(root)
    before = _stored_bytes(root, store)
    with pytest.raises(EpisodeNotFoundError, match=r"sends labels to episodes \[9\] that the dataset"):
        store.remap(root, {1: 1, 2: 9})
    assert _stored_bytes(root, store) == before


@pytest.mark.parametrize("edit", ["length", "content"])
def test_a_mapping_the_fingerprints_contradict_is_refused_and_nothing_changes(store, root, toy_dataset, edit):
    """Two episodes swapped by the mapping but not in the dataset: of other lengths (60/90/120
    frames), or of one length and other recordings (the toy dataset: 3 x 90 frames, each its
    own ``observation.state`` mean)."""
    if edit == "content":
        root = toy_dataset
        el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in (1, 2)])
    store.write(root, 1, "one")
    store.write(root, 2, "two")
    store.flush(root)
    before = _stored_bytes(root, store)
    with pytest.raises(LabelValidationError, match=rf"contradicts the {store.what}' fingerprints") as info:
        store.remap(root, {1: 2, 2: 1})
    assert f"1 -> 2 ({edit} was" in str(info.value) and f"2 -> 1 ({edit} was" in str(info.value)
    assert _stored_bytes(root, store) == before
    assert in_new_process(lambda: (store.read(root, 1), store.read(root, 2))) == ("one", "two")


def test_a_remap_without_a_sidecar_writes_nothing(store, tmp_path):
    bare = make_v3_dataset(tmp_path / "bare", LENGTHS)
    assert store.remap(bare, {0: 0, 1: 1, 2: 2}) == 0
    assert store.remap(bare, {}) == 0
    assert not (bare / store.sidecar).exists()


def test_a_record_moved_without_the_dataset_keeps_its_identity_but_not_its_meta(store, root, tmp_path):
    """Without the dataset's metadata a moved record is not checked: the values its
    fingerprint's ``meta`` vouches for were not read for its new index (one rule for the
    stores that rewrite their records)."""
    if not store.rewrites:
        pytest.skip("an appended move keeps every version as it was written")
    store.write(root, 1, "one")
    store.write(root, 2, "two")
    store.flush(root)
    labels_only = tmp_path / "labels-only"
    labels_only.mkdir()
    shutil.copy(root / store.sidecar, labels_only / store.sidecar)
    before = {e: store.fingerprint(labels_only, e) for e in (1, 2)}
    assert before[2]["length"] == 120
    assert store.remap(labels_only, {1: 1, 2: 0}, allow_drop=True) == 2
    assert store.fingerprint(labels_only, 0) == {k: v for k, v in before[2].items() if k != "meta"}
    assert store.fingerprint(labels_only, 1) == before[1]  # not moved: kept as it was
    assert (store.read(labels_only, 0), store.read(labels_only, 1)) == ("two", "one")


def test_each_store_remap_is_the_one_transaction(store, root, monkeypatch):
    """``episode_labels.remap``, ``outcomes.remap`` and ``segments.remap`` are ``remap_sidecar`` over ``run_remap``."""
    from strands_robots.storage import remap_txn

    store.write(root, 2, "two")
    delete_episodes_meta(root, [0])
    seen: list[list[str]] = []
    real = remap_txn.run_remap

    def spy(directory, participants, mapping, **options):
        seen.append([p.name for p in participants])
        return real(directory, participants, mapping, **options)

    monkeypatch.setattr(remap_txn, "run_remap", spy)
    store.remap(root, {1: 0, 2: 1}, allow_drop=True)
    assert seen == [[store.name]]
    assert store.read(root, 1) == "two"


# -- process registry and cache validity ---------------------------------------------------------


def test_a_forked_child_opens_its_own_store(store, root):
    store.write(root, 1, "parent")
    parent = store.open(root)

    def child() -> tuple[bool, str]:
        return store.open(root) is parent, store.read(root, 1)

    assert in_new_process(child) == (False, "parent")
    assert store.open(root) is parent  # the parent keeps its own


def test_a_file_replaced_by_another_tool_is_read_again(store, root):
    """The cache is keyed by the shared file identity: a sidecar replaced under a new inode
    (another tool's atomic write) is read again, not served from memory."""
    store.write(root, 1, "before")
    store.flush(root)
    assert store.read(root, 1) == "before"
    copy = root / "copy"
    store.write(root, 1, "after")
    store.flush(root)
    saved = (root / store.sidecar).read_bytes()
    assert store.read(root, 1) == "after"  # cached
    path = root / store.sidecar
    copy.write_bytes(saved.replace(b'"after"', b'"other"'))
    os.replace(copy, path)  # a new inode, same size
    assert store.read(root, 1) == "other"


def test_appended_since_is_one_rule_for_append_only_files(tmp_path):
    path = tmp_path / "log.jsonl"
    assert appended_since(path, file_identity(path), None, 0)  # no file seen, none there
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    ino, offset = file_identity(path)[0], 8
    assert not appended_since(path, None, ino, offset)  # the file went
    assert appended_since(path, file_identity(path), ino, offset)  # grown past the offset
    with open(path, "r+b") as handle:  # rewritten in place, same inode: the prefix is not ours
        handle.write(b'{"a":12345}\n')
    assert file_identity(path)[0] == ino
    assert not appended_since(path, file_identity(path), ino, offset)
    with open(path, "r+b") as handle:
        handle.truncate(4)  # shorter than what was read
    assert not appended_since(path, file_identity(path), ino, offset)
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"a":1}\n{"b":2}\n')
    os.replace(other, path)  # another file under the name
    assert not appended_since(path, file_identity(path), ino, offset)
