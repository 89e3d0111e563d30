"""The label stores answer the same with the light fingerprint reader as without it.

Verdicts record the same fingerprints, stale checks and filters agree before and after a
renumbering edit of ``meta/``, and a dataset the reader refuses is refused on both paths
with the reader's typed error, leaving no sidecar and no fingerprint cache behind.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import warnings
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_robots import episode_labels as el
from strands_robots.dataset import light_fingerprints, open_dataset
from strands_robots.dataset.cache import clear_cache
from strands_robots.dataset.signature import metadata_digest
from strands_robots.episode_labels import index as index_module
from strands_robots.episode_labels import rows
from strands_robots.episode_labels import stale as stale_module
from strands_robots.errors import DatasetError
from strands_robots.selection import filter_episodes
from tests.synth import make_v3_dataset, make_v21_dataset

MEAN = "stats/observation.state/mean"


def _new_process() -> None:
    """What a new process starts with (the files beside the sidecar stay)."""
    stale_module.clear_caches()
    index_module._memory.clear()
    clear_cache()


def _caches(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if ".fingerprints." in p.name)


def _v3(root: Path) -> Path:
    make_v3_dataset(root, [5, 7, 3, 9, 4], episode_indices=[0, 2, 5, 6, 11], episodes_per_file=2, tasks=("a", "b"))
    for path in sorted((root / "meta" / "episodes").glob("*/*.parquet")):
        table = pq.read_table(path)
        means = [[0.5 + e, -1.0 / (e + 3)] for e in table.column("episode_index").to_pylist()]
        pq.write_table(table.append_column(MEAN, pa.array(means, pa.list_(pa.float64()))), path)
    return root


def _v21(root: Path) -> Path:
    make_v21_dataset(root, [4, 6, 5, 3], episode_indices=[1, 3, 4, 8])
    lines = [{"episode_index": e, "stats": {"observation.state": {"mean": [0.5 * e, 1.0]}}} for e in (1, 3, 4, 8)]
    (root / "meta" / "episodes_stats.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


def _touch_meta(root: Path) -> None:
    for path in [*(root / "meta").rglob("*.parquet"), *(root / "meta").glob("*.jsonl")]:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def _delete_second_episode(root: Path) -> None:
    """What deleting the second episode leaves in ``meta/``: later episodes renumbered down
    by one, the index ranges recomputed, their statistics moved with them."""
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if files:
        tables = [pq.read_table(p) for p in files]
        gone = sorted(e for t in tables for e in t.column("episode_index").to_pylist())[1]
        total = 0
        for path, table in zip(files, tables, strict=True):
            keep = [i for i, e in enumerate(table.column("episode_index").to_pylist()) if e != gone]
            table = table.take(pa.array(keep, pa.int64()))
            renumbered = [e - (e > gone) for e in table.column("episode_index").to_pylist()]
            starts = []
            for length in table.column("length").to_pylist():
                starts.append(total)
                total += length
            ends = [s + n for s, n in zip(starts, table.column("length").to_pylist(), strict=True)]
            for name, values in (
                ("episode_index", renumbered),
                ("dataset_from_index", starts),
                ("dataset_to_index", ends),
            ):
                table = table.set_column(table.column_names.index(name), name, pa.array(values, pa.int64()))
            pq.write_table(table, path)
    else:
        for name in ("episodes.jsonl", "episodes_stats.jsonl"):
            path = root / "meta" / name
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            gone = sorted(line["episode_index"] for line in lines)[1]
            kept = [dict(x, episode_index=x["episode_index"] - (x["episode_index"] > gone)) for x in lines]
            kept = [x for x, old in zip(kept, lines, strict=True) if old["episode_index"] != gone]
            path.write_text("".join(json.dumps(x) + "\n" for x in kept))
    _touch_meta(root)


def _run(root: Path) -> dict:
    """Record, judge, check, filter; edit meta/; check and filter warm, then cold; re-record."""
    _new_process()
    episodes = list(open_dataset(root).episodes)
    clear_cache()
    out: dict = {}
    el.record_deterministic_verdicts(root, [{"episode": e, "success": i % 3 != 0} for i, e in enumerate(episodes)])
    out["fingerprints"] = {k: r["fingerprint"] for k, r in el.read_labels(root)["episodes"].items()}
    out["caches"] = _caches(root)
    el.annotate_episodes(root, [{"episode": e, "quality": "high"} for e in episodes])
    out["stale"] = el.stale_episodes(root)
    out["filter"] = filter_episodes(root, require_success=False)
    _delete_second_episode(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", el.StaleLabelsWarning)
        out["stale_warm"] = el.stale_episodes(root)
        out["filter_warm"] = filter_episodes(root, require_success=False)
        _new_process()
        out["stale_cold"] = el.stale_episodes(root)
        out["filter_cold"] = filter_episodes(root, require_success=False)
    el.record_deterministic_verdicts(root, [{"episode": episodes[0], "success": True}])
    out["stale_after"] = el.stale_episodes(root)
    return out


@pytest.mark.parametrize("make", [_v3, _v21], ids=["v3.0", "v2.1"])
def test_verdicts_stale_checks_and_filters_agree_with_and_without_the_light_path(tmp_path, monkeypatch, make):
    source = make(tmp_path / "source")
    light_root = shutil.copytree(source, tmp_path / "light")
    reader_root = shutil.copytree(source, tmp_path / "reader")
    assert light_fingerprints.light_fingerprint_columns(light_root) is not None  # the light path is taken
    light = _run(light_root)
    monkeypatch.setattr(light_fingerprints, "light_fingerprint_columns", lambda root: None)
    reader = _run(reader_root)
    assert light == reader
    assert light["stale"] == {} and light["caches"] == [".episode_labels.json.fingerprints.json"]
    assert light["stale_warm"] == light["stale_cold"] and len(light["stale_warm"]) >= 2  # the edit is seen
    assert light["stale_warm"].keys().isdisjoint(light["filter_warm"])


@pytest.mark.parametrize("make", [_v3, _v21], ids=["v3.0", "v2.1"])
def test_the_metadata_digest_only_saves_reads_never_changes_an_answer(tmp_path, monkeypatch, make):
    source = make(tmp_path / "source")
    with_digest = _run(shutil.copytree(source, tmp_path / "digest"))
    monkeypatch.setattr(stale_module, "read_from", lambda document, digest: False)
    without = _run(shutil.copytree(source, tmp_path / "no-digest"))
    assert with_digest == without
    digests = {fingerprint["meta"] for fingerprint in with_digest["fingerprints"].values()}
    assert digests == {metadata_digest(source)}  # every fingerprint names the metadata it was read from


def _must_not_read(*args, **kwargs):
    raise AssertionError("the dataset's metadata was read")


@pytest.mark.parametrize("make", [_v3, _v21], ids=["v3.0", "v2.1"])
def test_a_copied_labelled_dataset_is_checked_without_reading_its_metadata(tmp_path, monkeypatch, make):
    source = make(tmp_path / "source")
    episodes = list(open_dataset(source).episodes)
    el.record_deterministic_verdicts(source, [{"episode": e, "success": True} for e in episodes])
    el.annotate_episodes(source, [{"episode": e, "quality": "high"} for e in episodes])
    el.flush(source)
    copy = tmp_path / "copy"  # what a Hub download or rsync without the dot-files leaves
    shutil.copytree(source / "meta", copy / "meta")
    shutil.copyfile(source / "episode_labels.json", copy / "episode_labels.json")
    _touch_meta(copy)
    _new_process()
    monkeypatch.setattr(light_fingerprints, "light_fingerprint_columns", _must_not_read)
    monkeypatch.setattr(stale_module, "open_dataset_for_checks", _must_not_read)
    assert el.stale_episodes(copy) == {}
    assert filter_episodes(copy) == episodes
    assert _caches(copy) == []  # nothing was read, so nothing is kept


def test_a_dangling_episodes_file_is_reported_with_and_without_the_digest(tmp_path, monkeypatch):
    root = _v3(tmp_path / "ds")
    episodes = list(open_dataset(root).episodes)
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in episodes])
    el.annotate_episodes(root, [{"episode": e, "quality": "high"} for e in episodes])
    el.flush(root)
    # an episodes file the reader lists and cannot open (a symlink into a pruned cache)
    os.symlink(tmp_path / "pruned.parquet", root / "meta" / "episodes" / "chunk-000" / "file-009.parquet")
    answers = []
    for skip in (True, False):
        if not skip:
            monkeypatch.setattr(stale_module, "read_from", lambda document, digest: False)
        for cache in _caches(root):
            (root / cache).unlink()
        _new_process()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            answers.append((el.stale_episodes(root), [str(w.message) for w in caught]))
    assert answers[0] == answers[1]
    stale, messages = answers[0]
    assert stale == {} and len(messages) == 1 and "file-009.parquet" in messages[0]
    assert "labels were not checked for staleness" in messages[0]


def test_fingerprints_read_while_the_metadata_changes_name_no_digest(tmp_path, monkeypatch):
    root = _v3(tmp_path / "ds")
    episodes = list(open_dataset(root).episodes)
    clear_cache()
    read = light_fingerprints.light_fingerprint_columns

    def read_then_edit(where):
        columns = read(where)
        _touch_meta(root)  # LeRobot rewrites meta/ meanwhile
        return columns

    monkeypatch.setattr(light_fingerprints, "light_fingerprint_columns", read_then_edit)
    _new_process()
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in episodes])
    fingerprints = [r["fingerprint"] for r in el.read_labels(root)["episodes"].values()]
    assert fingerprints and all("meta" not in f and f["length"] > 0 for f in fingerprints)


def _corrupt_tasks(root: Path) -> None:
    (root / "meta" / "tasks.parquet").write_bytes(b"not parquet")


def _truncate_episodes_file(root: Path) -> None:
    path = sorted((root / "meta" / "episodes").glob("*/*.parquet"))[0]
    path.write_bytes(path.read_bytes()[:40])


@pytest.mark.parametrize("light", [True, False], ids=["light", "reader"])
@pytest.mark.parametrize("corrupt", [_corrupt_tasks, _truncate_episodes_file], ids=["tasks.parquet", "episodes file"])
def test_a_dataset_the_reader_refuses_is_refused_on_both_paths_and_leaves_no_cache(
    tmp_path, monkeypatch, light, corrupt
):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5], episodes_per_file=2)
    corrupt(root)
    _touch_meta(root)
    if not light:
        monkeypatch.setattr(light_fingerprints, "light_fingerprint_columns", lambda root: None)
    _new_process()
    with pytest.raises(DatasetError):  # the reader's typed error, never arro3's PanicException
        el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    assert not (root / "episode_labels.json").exists() and _caches(root) == []


@pytest.mark.parametrize("light", [True, False], ids=["light", "reader"])
def test_labels_of_a_dataset_the_reader_now_refuses_are_not_checked_on_either_path(tmp_path, monkeypatch, light):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in (0, 1, 2)])
    for cache in root.glob(".episode_labels.json.fingerprints.*"):
        cache.unlink()
    _corrupt_tasks(root)
    _touch_meta(root)
    if not light:
        monkeypatch.setattr(light_fingerprints, "light_fingerprint_columns", lambda root: None)
    _new_process()
    with pytest.warns(UserWarning, match="could not be opened"):
        assert el.stale_episodes(root) == {}
    assert _caches(root) == []


_STEPS = ("record", "annotate", "delete", "revert", "touch", "copy", "remap_without_meta")


def _both_answers(root: Path) -> list:
    """``(stale, filter, warnings)`` in a new process without the caches beside the sidecar
    (where the digest skips apply: a copied dataset), with the skips, then without them (no
    digest: neither ``read_from`` of a small sidecar nor the index's ``fp_meta`` answers)."""
    answers = []
    for skip in (True, False):
        for path in root.glob(".episode_labels.json.fingerprints.*"):
            path.unlink()
        _new_process()
        original = stale_module.metadata_digest_of
        if not skip:
            stale_module.metadata_digest_of = lambda root, signature: None
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                answer = (el.stale_episodes(root), filter_episodes(root, require_success=False))
        finally:
            stale_module.metadata_digest_of = original
        answers.append((*answer, sorted({str(w.message) for w in caught})))
    return answers


def _step(step: str, root: Path, original: Path, rng: random.Random, work: Path) -> Path:
    episodes = list(open_dataset(root).episodes)
    clear_cache()
    labelled = (root / "episode_labels.json").exists()
    if step == "record":
        chosen = rng.sample(episodes, rng.randint(1, len(episodes)))
        el.record_deterministic_verdicts(root, [{"episode": e, "success": rng.random() < 0.7} for e in chosen])
    elif step == "annotate" and labelled:
        records = el.read_labels(root)["episodes"]
        el.annotate_episodes(root, [{"episode": int(k), "quality": "high"} for k in records])
    elif step == "delete" and len(episodes) > 2:
        _delete_second_episode(root)
    elif step == "revert":  # the original bytes again (a fresh download)
        shutil.rmtree(root / "meta")
        shutil.copytree(original, root / "meta")
    elif step == "touch":
        _touch_meta(root)
    elif step == "copy":  # meta/ and the sidecar, not the dot-file caches
        copy = work / f"copy-{rng.randrange(10**9)}"
        shutil.copytree(root / "meta", copy / "meta")
        if labelled:
            el.flush(root)
            shutil.copyfile(root / "episode_labels.json", copy / "episode_labels.json")
        return copy
    elif step == "remap_without_meta" and labelled:  # remapped as a labels-only copy, put back
        el.flush(root)
        backup = work / f"backup-{rng.randrange(10**9)}"
        backup.mkdir()
        shutil.copyfile(root / "episode_labels.json", backup / "episode_labels.json")
        keys = sorted(int(k) for k in el.read_labels(backup)["episodes"])
        el.remap(backup, dict(zip(keys, rng.sample(keys, len(keys)), strict=True)))
        el.flush(backup)
        shutil.copyfile(backup / "episode_labels.json", root / "episode_labels.json")
    return root


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    version=st.sampled_from(["v3.0", "v2.1"]),
    large=st.booleans(),
    steps=st.lists(st.sampled_from(_STEPS), min_size=3, max_size=7),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_sequence_of_edits_gets_the_answers_of_a_full_read(tmp_path_factory, version, large, steps, seed):
    with mock.patch.object(rows, "SMALL_BYTES", 0 if large else rows.SMALL_BYTES):  # large: the columnar index
        _edit_and_compare(tmp_path_factory.mktemp("edits"), version, steps, seed)


def _edit_and_compare(work: Path, version: str, steps: list[str], seed: int) -> None:
    root = (_v3 if version == "v3.0" else _v21)(work / "ds")
    original = shutil.copytree(root / "meta", work / "original-meta")
    rng = random.Random(seed)
    for step in ["record", *steps]:
        root = _step(step, root, original, rng, work)
        if (root / "episode_labels.json").exists():
            with_skip, without = _both_answers(root)
            assert with_skip == without, step
