"""Small sidecars are filtered without numpy, with the columnar index's answers.

``filter_episodes`` reads a sidecar below ``rows.SMALL_BYTES`` whole and applies the
filter rules record by record; a larger one goes through the columnar index (numpy), and
the staleness check of a small labelled dataset reads the JSON fingerprint cache in plain
Python. Every test here runs both paths on the same files and requires the same result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_robots import episode_labels as el
from strands_robots.dataset import light_fingerprints
from strands_robots.dataset.cache import clear_cache
from strands_robots.dataset.signature import metadata_digest
from strands_robots.episode_labels import index as index_module
from strands_robots.episode_labels import rows
from strands_robots.episode_labels import stale as stale_module
from strands_robots.episode_labels.review import block_digest
from strands_robots.episode_labels.vocab import QUALITY_GRADES

TOY_VERDICTS = [{"episode": 0, "success": True}, {"episode": 1, "success": True}, {"episode": 2, "success": False}]


def _forget_process_caches() -> None:
    stale_module.clear_caches()
    index_module._memory.clear()
    clear_cache()


def _both_paths(monkeypatch, fn):
    """``fn()`` with the plain-Python path forced, then with the index forced (fresh caches)."""
    answers = []
    for small_bytes in (1 << 62, 0):
        monkeypatch.setattr(rows, "SMALL_BYTES", small_bytes)
        _forget_process_caches()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            answers.append((fn(), [str(w.message) for w in caught]))
    return answers


@st.composite
def records(draw, episode):
    record = {"episode_index": episode}
    if draw(st.booleans()) or draw(st.booleans()):
        success = draw(st.booleans())
        record["deterministic"] = {"success": success, "failure": not success and draw(st.booleans())}
    if draw(st.booleans()) or draw(st.booleans()):
        opinion = draw(st.none() | st.booleans())
        record["judge"] = {
            "quality": draw(st.sampled_from(QUALITY_GRADES)),
            "failure_mode": None,
            "success_opinion": opinion,
            "disputes_verdict": draw(st.booleans()),
        }
    if "deterministic" in record and draw(st.integers(0, 3)) == 0:
        current = draw(st.booleans())
        record["review"] = {
            "decision": draw(st.sampled_from(["uphold_verdict", "overrule_verdict", "grade_only"])),
            "quality": draw(st.none() | st.sampled_from(QUALITY_GRADES)),
            "verdict_seen": block_digest(record["deterministic"]) if current else "0" * 16,
            "judge_seen": block_digest(record.get("judge")) if draw(st.booleans()) else None,
            "reviewer": "r",
        }
    if draw(st.integers(0, 4)) == 0:
        record["fingerprint"] = draw(
            st.sampled_from([{}, None, {"length": 3}, {"length": 3, "tasks": ["t"]}, {"content": "short"}])
        )
    return record


@st.composite
def documents(draw):
    episodes = draw(st.lists(st.integers(0, 10_000), max_size=40, unique=True))
    return {
        "schema_version": 1,
        "benchmark": "b",
        "episodes": {str(e): draw(records(e)) for e in episodes},
    }


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    document=documents(),
    require_success=st.booleans(),
    min_quality=st.sampled_from(QUALITY_GRADES),
    exclude_disputed=st.booleans(),
)
def test_small_and_index_paths_select_the_same_episodes(
    tmp_path_factory, monkeypatch, document, require_success, min_quality, exclude_disputed
):
    root = tmp_path_factory.mktemp("labels")
    (root / "episode_labels.json").write_text(json.dumps(document, indent=2, sort_keys=True))
    rules = {"require_success": require_success, "min_quality": min_quality, "exclude_disputed": exclude_disputed}
    (small, _), (large, _) = _both_paths(monkeypatch, lambda: el.filter_episodes(root, **rules))
    assert small == large


def test_the_select_rows_agree_on_a_journaled_sidecar(tmp_path, monkeypatch):
    """A canonical file plus journal lines (writes past the write-through size)."""
    verdicts = [{"episode": i, "success": i % 3 != 0} for i in range(1500)]
    el.record_deterministic_verdicts(tmp_path, verdicts)
    el.annotate_episodes(tmp_path, [{"episode": i, "quality": QUALITY_GRADES[i % 3]} for i in range(1500)])
    for i in range(0, 1500, 50):
        el.annotate_episode(tmp_path, i, quality="high", success_opinion=i % 3 == 0)
    assert (tmp_path / ".episode_labels.json.journal").exists()
    store = el.open_store(tmp_path)
    for rules in (
        {"require_success": True, "min_rank": 1, "exclude_disputed": False},
        {"require_success": False, "min_rank": 0, "exclude_disputed": True},
    ):
        (small, _), (large, _) = _both_paths(monkeypatch, lambda rules=rules: rows.select_labelled(store, **rules))
        assert small == large and len(small[0]) > 100


def test_a_small_labelled_dataset_is_filtered_without_numpy_or_pyarrow(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high")
    assert (toy_dataset / ".episode_labels.json.fingerprints.json").is_file()  # left by the writer
    assert not (toy_dataset / ".episode_labels.json.fingerprints.npz").exists()
    code = (
        "import sys\n"
        "import strands_robots.episode_labels as el\n"
        f"assert el.filter_episodes({str(toy_dataset)!r}) == [0, 1]\n"
        f"assert el.stale_episodes({str(toy_dataset)!r}) == {{}}\n"
        "heavy = sorted(m for m in ('numpy', 'pyarrow', 'pydantic') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=toy_dataset)


def _retimed(path) -> None:
    st_ = os.stat(path)
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 10**9))


@pytest.mark.parametrize(
    "fingerprint",
    [
        None,  # the recorded one
        {"length": 1},
        {"index_range": [0, 1], "length": 999},
        {"tasks": ["another task"]},
        {"content": "0123456789abcdef"},
        {"content": "short", "length": 5},  # FP_OTHER: the record rule, in the stored order
        {"length": 2, "camera": "X1"},  # an unknown key
        {"tasks": ["a"], "length": 7, "content": "fedcba9876543210", "index_range": [1, 2]},
        "not a dict",
        [1, 2],
        {"length": True},
    ],
)
def test_small_and_index_stale_checks_agree(toy_dataset, monkeypatch, fingerprint):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high")
    document = el.read_labels(toy_dataset)
    if fingerprint is not None:
        document["episodes"]["1"]["fingerprint"] = fingerprint
    document["episodes"]["7"] = {  # a label of an episode the dataset no longer has
        "episode_index": 7,
        "deterministic": {"success": True, "failure": False},
        "judge": {"quality": "high"},
        "fingerprint": {"length": 3},
    }
    el.open_store(toy_dataset).transform(lambda _old: document)
    (small_stale, _), (large_stale, _) = _both_paths(monkeypatch, lambda: el.stale_episodes(toy_dataset))
    assert small_stale == large_stale and 7 in small_stale
    (small, small_warnings), (large, large_warnings) = _both_paths(monkeypatch, lambda: el.filter_episodes(toy_dataset))
    assert small == large and small_warnings == large_warnings


def test_the_json_cache_goes_stale_when_meta_changes(toy_dataset, monkeypatch):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    el.annotate_episode(toy_dataset, 0, quality="high")
    _forget_process_caches()
    assert stale_module._small_stale(toy_dataset, el.open_store(toy_dataset), _signature(toy_dataset)) == {}
    cache = toy_dataset / ".episode_labels.json.fingerprints.json"
    tampered = json.loads(cache.read_text())
    tampered["length"] = [length + 1 for length in tampered["length"]]  # would make every label stale
    cache.write_text(json.dumps(tampered))
    _forget_process_caches()
    assert set(stale_module._small_stale(toy_dataset, el.open_store(toy_dataset), _signature(toy_dataset))) == {0, 1, 2}
    _retimed(toy_dataset / "meta" / "info.json")  # meta/ touched: the cache is not used
    _forget_process_caches()
    # the bytes of meta/ are unchanged, and every fingerprint names their digest: nothing is read
    with monkeypatch.context() as patch:
        patch.setattr(light_fingerprints, "light_fingerprint_columns", _must_not_read)
        assert stale_module._small_stale(toy_dataset, el.open_store(toy_dataset), _signature(toy_dataset)) == {}
    assert json.loads(cache.read_text()) == tampered
    # labels written without the digest (an earlier version): the metadata is read again
    document = el.read_labels(toy_dataset)
    for record in document["episodes"].values():
        del record["fingerprint"]["meta"]
    el.open_store(toy_dataset).transform(lambda _old: document)
    _forget_process_caches()
    assert stale_module._small_stale(toy_dataset, el.open_store(toy_dataset), _signature(toy_dataset)) == {}
    refreshed = json.loads(cache.read_text())
    assert refreshed["signature"] == [list(s) for s in _signature(toy_dataset)]
    assert refreshed["length"] == [length - 1 for length in tampered["length"]]
    assert el.stale_episodes(toy_dataset) == {}


def _must_not_read(root):
    raise AssertionError(f"the metadata of {root} was read")


def _signature(root):
    from strands_robots.dataset.signature import metadata_signature

    return metadata_signature(root)


def test_the_json_cache_rows_are_the_dataset_fingerprints(toy_dataset):
    from strands_robots.dataset import open_dataset
    from strands_robots.episode_labels.fingerprint import Fingerprinter

    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    plain = json.loads((toy_dataset / ".episode_labels.json.fingerprints.json").read_text())
    fingerprinter = Fingerprinter(open_dataset(toy_dataset))
    for position, episode in enumerate(plain["episode"]):
        assert stale_module.plain_record(plain, position) == {
            **fingerprinter(episode),
            "meta": metadata_digest(toy_dataset),
        }
