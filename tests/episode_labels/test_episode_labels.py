"""episode_labels.json: verdicts, judge block, precedence, refusals (numbers out of range,
hand-edited null blocks), filter, agreement with blind human grades."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from strands_robots.episode_labels import (
    annotate_episode,
    annotate_episodes,
    deterministic_verdict,
    filter_episodes,
    labels_path,
    measure_agreement,
    read_labels,
    record_deterministic_verdicts,
    review_episode,
)
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, SidecarError
from strands_robots.fingerprint import metadata_digest
from tests.episode_labels.helpers import make_minimal_dataset, verdict


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_minimal_dataset(tmp_path / "ds", {i: 90 for i in range(6)})


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def det_bytes(root: Path, episode: int) -> bytes:
    return json.dumps(read_labels(root)["episodes"][str(episode)]["deterministic"], sort_keys=True).encode()


def test_labels_path_is_beside_meta(root):
    assert labels_path(root) == root / "episode_labels.json"
    assert labels_path(root, labels_dir=root / "elsewhere") == root / "elsewhere" / "episode_labels.json"


def test_file_format_is_canonical(root):
    record_deterministic_verdicts(root, [verdict(0, True)], benchmark="bench-é")
    text = labels_path(root).read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert "bench-é" in text  # no ASCII escaping
    document = json.loads(text)
    assert json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n" == text
    assert document["schema_version"] == 1
    assert document["benchmark"] == "bench-é"
    record = document["episodes"]["0"]
    assert record["episode_index"] == 0
    assert record["deterministic"] == {
        "success": True,
        "failure": False,
        "steps": 90,
        "cumulative_reward": 1.0,
        "seed": 0,
    }
    assert record["fingerprint"] == {"length": 90, "index_range": [0, 90], "meta": metadata_digest(root)}


def test_failure_defaults_to_false_and_numpy_values_normalised(root):
    record_deterministic_verdicts(root, [{"episode": np.int64(3), "success": np.bool_(True), "steps": np.int32(7)}])
    assert deterministic_verdict(root, 3) == {"success": True, "failure": False, "steps": 7}


def test_disputing_judge_leaves_deterministic_block_byte_identical(root):
    record_deterministic_verdicts(root, [verdict(0, True), verdict(1, False)])
    before = det_bytes(root, 0)
    record = annotate_episode(root, 0, quality="low", success_opinion=False, note="dropped it", model="m")
    assert record["judge"]["disputes_verdict"] is True
    assert det_bytes(root, 0) == before
    assert deterministic_verdict(root, 0)["success"] is True
    agreeing = annotate_episode(root, 1, quality="high", success_opinion=False)
    assert agreeing["judge"]["disputes_verdict"] is False
    no_opinion = annotate_episode(root, 1, quality="high")
    assert no_opinion["judge"]["disputes_verdict"] is False
    assert isinstance(no_opinion["judge"]["labeled_at"], float)


def test_rerecording_keeps_judge_and_updates_dispute(root):
    record_deterministic_verdicts(root, [verdict(0, True)])
    annotate_episode(root, 0, quality="medium", success_opinion=False, model="m")
    judge_before = read_labels(root)["episodes"]["0"]["judge"]
    assert judge_before["disputes_verdict"] is True
    record_deterministic_verdicts(root, [verdict(0, False)])
    judge_after = read_labels(root)["episodes"]["0"]["judge"]
    assert judge_after["disputes_verdict"] is False
    assert {k: v for k, v in judge_after.items() if k != "disputes_verdict"} == {
        k: v for k, v in judge_before.items() if k != "disputes_verdict"
    }
    assert deterministic_verdict(root, 0)["success"] is False


def test_annotate_refuses_episode_without_verdict(root):
    record_deterministic_verdicts(root, [verdict(0, True)])
    before = sha(labels_path(root))
    with pytest.raises(EpisodeNotFoundError, match="record_deterministic_verdicts"):
        annotate_episode(root, 1, quality="high")
    assert sha(labels_path(root)) == before


def test_annotate_without_sidecar_is_file_not_found(root):
    with pytest.raises(FileNotFoundError, match="Record deterministic verdicts first"):
        annotate_episode(root, 0, quality="high")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"quality": "great"}, "quality must be one of"),
        ({"quality": "hgih"}, "Did you mean: 'hgih' -> 'high'?"),
        ({"quality": "high", "failure_mode": "slipped"}, "failure_mode must be None or one of"),
        ({"quality": "high", "success_opinion": "true"}, "real boolean"),
        ({"quality": "high", "success_opinion": 1}, "real boolean"),
        ({"quality": "high", "note": 5}, "note must be a string"),
        ({"quality": "high", "note": "x" * 10_001}, "limit is 10000"),
        ({"quality": "high", "note": "bad \udcff"}, "not valid Unicode"),
        ({"quality": "high", "model": None}, "model must be a string"),
    ],
)
def test_annotate_refusals_change_nothing(root, kwargs, match):
    record_deterministic_verdicts(root, [verdict(0, True)])
    before = sha(labels_path(root))
    with pytest.raises(LabelValidationError, match=match):
        annotate_episode(root, 0, **kwargs)
    assert sha(labels_path(root)) == before


@pytest.mark.parametrize(
    "episodes, match",
    [
        ([], "non-empty list"),
        ([{"episode": True, "success": True}], "boolean"),
        ([{"episode": -1, "success": True}], "non-negative"),
        ([{"episode": "0", "success": True}], "non-negative integer"),
        ([{"episode": 0, "success": "true"}], "real boolean"),
        ([{"episode": 0, "success": 1}], "real boolean"),
        ([{"episode": 0, "success": None}], "real boolean"),
        ([{"episode": 0}], "no 'success'"),
        ([{"success": True}], "no 'episode'"),
        ([{"episode": 0, "success": True, "cumulative_reward": math.nan}], "finite"),
        ([{"episode": 0, "success": True, "cumulative_reward": math.inf}], "finite"),
        ([{"episode": 0, "success": True, "steps": -3}], "non-negative integer"),
        ([verdict(0, True), verdict(0, False)], "more than once"),
        (["not a dict"], "each verdict is a dict"),
    ],
)
def test_record_refusals_change_nothing(root, episodes, match):
    record_deterministic_verdicts(root, [verdict(5, True)])
    before = sha(labels_path(root))
    with pytest.raises(LabelValidationError, match=match):
        record_deterministic_verdicts(root, episodes)
    assert sha(labels_path(root)) == before


def test_record_refuses_unknown_episodes_listing_all(root):
    with pytest.raises(EpisodeNotFoundError, match=r"no episodes \[6, 9\]"):
        record_deterministic_verdicts(root, [verdict(0, True), verdict(6, True), verdict(9, False)])
    assert not labels_path(root).exists()


@pytest.mark.parametrize(
    "entry, match",
    [
        ({"episode": 2**70, "success": True}, "largest episode_index"),
        ({"episode": 0, "success": True, "cumulative_reward": 10**400}, "finite"),
        ({"episode": 0, "success": True, "seed": 2**80}, "seed"),
    ],
)
def test_out_of_range_numbers_are_refused(tmp_path, entry, match):
    with pytest.raises(LabelValidationError, match=match):
        record_deterministic_verdicts(tmp_path, [entry])


@pytest.mark.parametrize(
    "content",
    [
        b'{"schema_version": true, "benchmark": "", "episodes": {}}\n',
        b"\xff\xfe not utf-8",
    ],
)
def test_foreign_or_future_sidecar_is_refused_and_untouched(root, content):
    path = labels_path(root)
    path.write_bytes(content)
    with pytest.raises(SidecarError, match="left untouched"):
        record_deterministic_verdicts(root, [verdict(0, True)])
    with pytest.raises(SidecarError):
        read_labels(root)
    assert path.read_bytes() == content


@pytest.mark.parametrize(
    "document",
    [
        '{"schema_version": 1, "benchmark": "", "episodes": {"0": {"episode_index": 0, "deterministic": null}}}',
        '{"schema_version": 1, "benchmark": "", "episodes": {"0": {"episode_index": 0, "judge": null}}}',
        '{"schema_version": 1, "benchmark": 5, "episodes": {}}',
    ],
)
def test_hand_edited_null_blocks_are_refused_by_every_reader(tmp_path, document):
    (tmp_path / "episode_labels.json").write_text(document)
    for call in (read_labels, filter_episodes, lambda r: annotate_episode(r, 0, quality="low")):
        with pytest.raises(SidecarError):
            call(tmp_path)
    assert (tmp_path / "episode_labels.json").read_text() == document


def _build_all_combinations(root: Path) -> None:
    """Episode s*6 + q*2 + d: success s, quality q, disputed d; episode 12 unlabelled."""
    make_minimal_dataset(root, {i: 90 for i in range(13)})
    record_deterministic_verdicts(root, [verdict(i, bool(i // 6)) for i in range(13)])
    qualities = ("low", "medium", "high")
    for i in range(12):
        success, q, disputed = bool(i // 6), (i % 6) // 2, i % 2
        opinion = (not success) if disputed else success
        annotate_episode(root, i, quality=qualities[q], success_opinion=opinion)


@pytest.mark.parametrize("require_success", [True, False])
@pytest.mark.parametrize("min_quality", ["low", "medium", "high"])
@pytest.mark.parametrize("exclude_disputed", [True, False])
def test_filter_semantics_all_combinations(tmp_path, require_success, min_quality, exclude_disputed):
    root = tmp_path / "ds"
    _build_all_combinations(root)
    rank = {"low": 0, "medium": 1, "high": 2}[min_quality]
    expected = [
        i
        for i in range(12)
        if (not require_success or i // 6 == 1) and (i % 6) // 2 >= rank and not (exclude_disputed and i % 2 == 1)
    ]
    got = filter_episodes(
        root, require_success=require_success, min_quality=min_quality, exclude_disputed=exclude_disputed
    )
    assert got == expected
    assert 12 not in got


def test_filter_concrete_values(tmp_path):
    root = tmp_path / "ds"
    _build_all_combinations(root)
    assert filter_episodes(root) == [8, 9, 10, 11]
    assert filter_episodes(root, exclude_disputed=True) == [8, 10]
    assert filter_episodes(root, require_success=False, min_quality="high") == [4, 5, 10, 11]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"min_quality": "ok"}, "min_quality must be one of"),
        ({"require_success": "yes"}, "real boolean"),
        ({"exclude_disputed": None}, "real boolean"),
    ],
)
def test_filter_refusals(root, kwargs, match):
    record_deterministic_verdicts(root, [verdict(0, True)])
    with pytest.raises(LabelValidationError, match=match):
        filter_episodes(root, **kwargs)


def test_agreement_against_hand_computed_kappa_and_baseline(root):
    record_deterministic_verdicts(root, [verdict(i, True) for i in range(5)])
    judge = [("high", None), ("medium", "near_miss"), ("low", "jerky_motion"), ("medium", None)]
    for i, (q, fm) in enumerate(judge):
        annotate_episode(root, i, quality=q, failure_mode=fm)
    human = {
        0: {"quality": "high", "failure_mode": None},
        1: {"quality": "medium", "failure_mode": None},
        2: {"quality": "medium", "failure_mode": "jerky_motion"},
        3: {"quality": "low", "failure_mode": None},
        "4": {"quality": "high"},  # no judge block: reported missing, not scored
    }
    result = measure_agreement(root, human)
    assert result["episodes_compared"] == 4
    assert result["missing"] == [4]
    # quality: p_o = 2/4; judge {high 1, medium 2, low 1}, human {high 1, medium 2, low 1}
    # p_e = (1 + 4 + 1) / 16 = 0.375; kappa = (0.5 - 0.375) / 0.625 = 0.2
    assert result["quality_agreement"] == pytest.approx(0.5)
    assert result["quality_baseline"] == pytest.approx(0.5)
    assert result["quality_kappa"] == pytest.approx(0.2)
    assert result["quality_confusion"]["medium"]["low"] == 1
    assert result["quality_confusion"]["low"]["medium"] == 1
    # failure_mode: judge [null, near_miss, jerky, null], human [null, null, jerky, null]
    # p_o = 3/4; p_e = (2*3 + 1*0 + 1*1) / 16 = 7/16; kappa = (0.75 - 0.4375) / 0.5625 = 5/9
    assert result["failure_mode_agreement"] == pytest.approx(0.75)
    assert result["failure_mode_baseline"] == pytest.approx(0.75)
    assert result["failure_mode_kappa"] == pytest.approx(5 / 9)
    assert result["failure_mode_confusion"]["null"]["near_miss"] == 1
    assert {"episode": 1, "field": "failure_mode", "judge": "near_miss", "human": None} in result["disagreements"]


def test_agreement_kappa_none_when_expected_agreement_is_one(root):
    record_deterministic_verdicts(root, [verdict(0, True), verdict(1, True)])
    annotate_episode(root, 0, quality="medium")
    annotate_episode(root, 1, quality="medium")
    result = measure_agreement(root, {0: {"quality": "medium"}, 1: {"quality": "medium"}})
    assert result["quality_agreement"] == 1.0
    assert result["quality_kappa"] is None
    assert result["failure_mode_agreement"] is None


@pytest.mark.parametrize("key", ["¹", "٣x", "07x"])
def test_agreement_refuses_a_key_that_only_looks_like_digits(root, key):
    """A superscript digit passes str.isdigit() but not int(): a typed refusal, not a ValueError."""
    record_deterministic_verdicts(root, [verdict(0, True)])
    annotate_episode(root, 0, quality="medium")
    with pytest.raises(LabelValidationError, match=r"human_labels key .* must be a non-negative integer episode_index"):
        measure_agreement(root, {key: {"quality": "medium"}})


@pytest.mark.parametrize(
    "holdout, match",
    [
        ({}, "non-empty"),
        ([], "non-empty"),
        ({0: "high"}, "must be a dict"),
        ({0: {"quality": "great"}}, "must be a dict with 'quality' in"),
        ({0: {"failure_mode": "slip"}}, r"\['failure_mode'\] must be None or one of"),
        ({0: {"grade": "high"}}, "'quality' and/or 'failure_mode' only"),
        ({-1: {"quality": "high"}}, "non-negative"),
    ],
)
def test_agreement_refusals(root, holdout, match):
    record_deterministic_verdicts(root, [verdict(0, True)])
    annotate_episode(root, 0, quality="high")
    with pytest.raises(LabelValidationError, match=match):
        measure_agreement(root, holdout)


def test_a_blind_grade_survives_a_later_judge_label(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(3)])
    for episode, grade in enumerate(["high", "low", "medium"]):
        review_episode(root, episode, decision="grade_only", reviewer="ana", quality=grade)
    for episode in range(3):
        annotate_episode(root, episode, quality="high")
    result = measure_agreement(root)
    assert result["episodes_compared"] == 3
    assert result["quality_agreement"] == pytest.approx(1 / 3)
    assert filter_episodes(root) == [0, 2]  # the human's low on episode 1 counts
    record_deterministic_verdicts(root, [{"episode": 1, "success": True, "steps": 5}])  # a new verdict
    assert filter_episodes(root) == [0, 2]  # a grade stands until the human grades again
    review_episode(root, 1, decision="grade_only", reviewer="ana", quality="high")
    assert filter_episodes(root) == [0, 1, 2]


def test_batch_annotation_is_all_or_nothing(root):
    record_deterministic_verdicts(root, [verdict(i, True) for i in range(3)])
    before = sha(labels_path(root))
    with pytest.raises(EpisodeNotFoundError):
        annotate_episodes(root, [{"episode": 0, "quality": "high"}, {"episode": 4, "quality": "low"}])
    assert sha(labels_path(root)) == before
    records = annotate_episodes(root, [{"episode": i, "quality": "high", "model": "batch"} for i in range(3)])
    assert [r["judge"]["model"] for r in records] == ["batch"] * 3
    assert filter_episodes(root) == [0, 1, 2]


def test_relabel_keeps_history(root):
    record_deterministic_verdicts(root, [verdict(0, True)])
    annotate_episode(root, 0, quality="low", model="a")
    annotate_episode(root, 0, quality="high", model="b", keep_history=True)
    record = read_labels(root)["episodes"]["0"]
    assert record["judge"]["model"] == "b"
    assert [j["model"] for j in record["judge_history"]] == ["a"]


def test_labels_dir_keeps_dataset_untouched(root, tmp_path):
    elsewhere = tmp_path / "labels"
    elsewhere.mkdir()
    record_deterministic_verdicts(root, [verdict(0, True)], labels_dir=elsewhere)
    annotate_episode(root, 0, quality="high", labels_dir=elsewhere)
    assert not labels_path(root).exists()
    assert filter_episodes(root, labels_dir=elsewhere) == [0]


@pytest.mark.parametrize("role", ["model", "reviewer"])
def test_a_model_and_a_reviewer_have_the_one_name_limit_of_every_store(root, role):
    from strands_robots.arguments import NAME_CHARS
    from strands_robots.episode_labels import review_episode

    record_deterministic_verdicts(root, [verdict(0, True)])
    annotate_episode(root, 0, quality="high", model="judge")

    def write(name):
        if role == "model":
            return annotate_episode(root, 0, quality="low", model=name)["judge"]["model"]
        return review_episode(root, 0, decision="grade_only", reviewer=name, quality="high")["review"]["reviewer"]

    name = "r" * NAME_CHARS  # what a segment annotator or an outcome's labeled_by may be
    assert write(name) == name
    before = read_labels(root)
    with pytest.raises(LabelValidationError, match=f"is {NAME_CHARS + 1} characters; the limit is {NAME_CHARS}"):
        write(name + "r")
    assert read_labels(root) == before
