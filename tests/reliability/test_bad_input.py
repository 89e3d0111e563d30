"""Bad-input matrix (docs/performance.md, "Reliability tests (in CI)"): every case gives a typed error naming the remedy and
leaves the sidecar's bytes unchanged (sha256 compared). Public API and CLI here; the
judge tools' error envelopes are at the end."""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.errors import (
    EpisodeNotFoundError,
    LabelArgumentError,
    LabelsError,
    LabelValidationError,
    SidecarError,
    StorageError,
)
from strands_robots.storage import atomic
from tests.episode_labels.helpers import make_minimal_dataset

V = LabelValidationError
API_CASES = [
    # (id, function name, args, kwargs, error type, message fragment)
    ("record-empty", "record_deterministic_verdicts", ([],), {}, V, "non-empty list"),
    ("record-not-list", "record_deterministic_verdicts", ({"episode": 0},), {}, V, "non-empty list"),
    (
        "record-bool-episode",
        "record_deterministic_verdicts",
        ([{"episode": False, "success": True}],),
        {},
        V,
        "boolean",
    ),
    ("record-float-episode", "record_deterministic_verdicts", ([{"episode": 1.0, "success": True}],), {}, V, "integer"),
    ("record-negative", "record_deterministic_verdicts", ([{"episode": -2, "success": True}],), {}, V, "non-negative"),
    (
        "record-unknown",
        "record_deterministic_verdicts",
        ([{"episode": 99, "success": True}],),
        {},
        EpisodeNotFoundError,
        "no episodes [99]",
    ),
    (
        "record-str-success",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": "yes"}],),
        {},
        V,
        "real boolean",
    ),
    (
        "record-int-failure",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True, "failure": 0}],),
        {},
        V,
        "real boolean",
    ),
    (
        "record-nan-reward",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True, "cumulative_reward": math.nan}],),
        {},
        V,
        "finite",
    ),
    (
        "record-inf-reward",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True, "cumulative_reward": -math.inf}],),
        {},
        V,
        "finite",
    ),
    (
        "record-str-reward",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True, "cumulative_reward": "1"}],),
        {},
        V,
        "finite",
    ),
    (
        "record-bool-steps",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True, "steps": True}],),
        {},
        V,
        "non-negative integer",
    ),
    (
        "record-float-seed",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True, "seed": 1.5}],),
        {},
        V,
        "seed",
    ),
    (
        "record-benchmark-int",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True}],),
        {"benchmark": 3},
        V,
        "benchmark must be a string",
    ),
    (
        "record-duplicate",
        "record_deterministic_verdicts",
        ([{"episode": 0, "success": True}, {"episode": 0, "success": False}],),
        {},
        V,
        "more than once",
    ),
    ("annotate-bool-episode", "annotate_episode", (True,), {"quality": "high"}, V, "boolean"),
    ("annotate-np-bool-episode", "annotate_episode", (np.bool_(True),), {"quality": "high"}, V, "boolean"),
    ("annotate-str-episode", "annotate_episode", ("0",), {"quality": "high"}, V, "integer"),
    ("annotate-negative", "annotate_episode", (-1,), {"quality": "high"}, V, "non-negative"),
    (
        "annotate-unknown",
        "annotate_episode",
        (77,),
        {"quality": "high"},
        EpisodeNotFoundError,
        "No deterministic verdict",
    ),
    ("annotate-no-verdict", "annotate_episode", (3,), {"quality": "high"}, EpisodeNotFoundError, "record"),
    ("annotate-quality-oov", "annotate_episode", (0,), {"quality": "excellent"}, V, "quality must be one of"),
    ("annotate-quality-case", "annotate_episode", (0,), {"quality": "High"}, V, "Did you mean: 'High' -> 'high'?"),
    ("annotate-quality-none", "annotate_episode", (0,), {"quality": None}, V, "quality must be one of"),
    ("annotate-mode-oov", "annotate_episode", (0,), {"quality": "high", "failure_mode": "slip"}, V, "failure_mode"),
    ("annotate-mode-int", "annotate_episode", (0,), {"quality": "high", "failure_mode": 3}, V, "failure_mode"),
    (
        "annotate-opinion-str",
        "annotate_episode",
        (0,),
        {"quality": "high", "success_opinion": "false"},
        V,
        "real boolean",
    ),
    ("annotate-opinion-int", "annotate_episode", (0,), {"quality": "high", "success_opinion": 0}, V, "real boolean"),
    ("annotate-note-bytes", "annotate_episode", (0,), {"quality": "high", "note": b"note"}, V, "note must be a string"),
    ("annotate-note-long", "annotate_episode", (0,), {"quality": "high", "note": "n" * 10_001}, V, "limit is 10000"),
    (
        "annotate-note-surrogate",
        "annotate_episode",
        (0,),
        {"quality": "high", "note": "\ud800"},
        V,
        "not valid Unicode",
    ),
    ("annotate-model-long", "annotate_episode", (0,), {"quality": "high", "model": "m" * 300}, V, "limit is 255"),
    (
        "batch-unknown-key",
        "annotate_episodes",
        ([{"episode": 0, "quality": "high", "grade": 1}],),
        {},
        V,
        "unknown keys",
    ),
    ("batch-no-quality", "annotate_episodes", ([{"episode": 0}],), {}, V, "no 'quality'; add one of low"),
    (
        "batch-typo-key",
        "annotate_episodes",
        ([{"episode": 0, "qualty": "high"}],),
        {},
        V,
        "Did you mean: 'qualty' -> 'quality'?",
    ),
    ("batch-int", "annotate_episodes", (5,), {}, LabelArgumentError, "pass a list such as"),
    ("batch-none", "annotate_episodes", (None,), {}, LabelArgumentError, "pass a list such as"),
    ("batch-item-int", "annotate_episodes", ([3],), {}, V, "must be a dict with 'episode'"),
    ("keep-history-no", "annotate_episode", (0,), {"quality": "high", "keep_history": "no"}, V, "keep_history"),
    ("filter-outcomes-int", "filter_episodes", (), {"outcomes": 5}, LabelArgumentError, "list of strings"),
    ("filter-membership-int-item", "filter_episodes", (), {"evaluation_membership": [5]}, LabelArgumentError, "[0]"),
    ("filter-labels-dir-int", "filter_episodes", (), {"labels_dir": 5}, LabelArgumentError, "labels_dir"),
    ("filter-min-quality", "filter_episodes", (), {"min_quality": "good"}, V, "min_quality"),
    ("filter-require-str", "filter_episodes", (), {"require_success": "false"}, V, "real boolean"),
    ("filter-disputed-int", "filter_episodes", (), {"exclude_disputed": 1}, V, "real boolean"),
    ("verdict-bool", "deterministic_verdict", (False,), {}, V, "boolean"),
    ("verdict-missing", "deterministic_verdict", (5,), {}, EpisodeNotFoundError, "No deterministic verdict"),
    ("agreement-empty", "measure_agreement", ({},), {}, V, "non-empty"),
    ("agreement-oov", "measure_agreement", ({0: {"quality": "superb"}},), {}, V, "must be a dict with 'quality' in"),
    ("agreement-bad-key", "measure_agreement", ({"zero": {"quality": "high"}},), {}, V, "integer"),
    ("review-decision", "review_episode", (0,), {"decision": "approve", "reviewer": "a"}, V, "decision must be one of"),
    (
        "review-no-reviewer",
        "review_episode",
        (0,),
        {"decision": "grade_only", "reviewer": " "},
        V,
        "reviewer must name",
    ),
    (
        "review-undisputed",
        "review_episode",
        (0,),
        {"decision": "overrule_verdict", "reviewer": "a"},
        V,
        "no disputed verdict",
    ),
    (
        "review-quality-oov",
        "review_episode",
        (0,),
        {"decision": "grade_only", "reviewer": "a", "quality": "ok"},
        V,
        "quality",
    ),
    (
        "review-unknown",
        "review_episode",
        (55,),
        {"decision": "grade_only", "reviewer": "a"},
        EpisodeNotFoundError,
        "No deterministic verdict",
    ),
    ("remap-not-dict", "remap", ([1, 2],), {}, V, "mapping must be an object"),
    ("remap-collision", "remap", ({"0": 1, "1": 1},), {}, V, "one-to-one"),
    ("remap-unknown-target", "remap", ({"0": 40},), {}, EpisodeNotFoundError, "does not have"),
    ("remap-negative", "remap", ({"0": -1},), {}, V, "non-negative"),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = make_minimal_dataset(tmp_path / "ds", {i: 90 for i in range(5)})
    el.record_deterministic_verdicts(root, [{"episode": i, "success": i != 1} for i in range(3)], benchmark="b")
    el.annotate_episode(root, 0, quality="high")
    return root


def digest(root: Path) -> str:
    return hashlib.sha256((root / "episode_labels.json").read_bytes()).hexdigest()


@pytest.mark.parametrize("case", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_refusals_name_the_problem_and_change_nothing(root, case):
    _id, name, args, kwargs, error, fragment = case
    before = digest(root)
    with pytest.raises(error) as caught:
        getattr(el, name)(root, *args, **kwargs)
    assert fragment in str(caught.value)
    assert isinstance(caught.value, LabelsError)
    assert digest(root) == before


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b'{"other_tool": 1}\n', "schema_version None"),
        (b'{"schema_version": 9, "episodes": {}}\n', "schema_version 9"),
        (b'{"schema_version": 1, "episodes": {"01": {}}}\n', "decimal spelling"),
        (b'{"schema_version": 1, "episodes": {"0": {"judge": {"quality": "great"}}}}\n', "judge.quality"),
        (b'{"schema_version": 1, "episodes": {"0": {"deterministic": {"success": "yes"}}}}\n', "boolean 'success'"),
        (b'{"schema_version": 1, "episodes": {"0": {"deterministic": {"success": NaN}}}}\n', "boolean 'success'"),
        (b'{"schema_version": 1, "epis', "not valid JSON"),
        (b"", "not valid JSON"),
    ],
)
@pytest.mark.parametrize("operation", ["read", "filter", "annotate"])
def test_unusable_sidecars_are_refused_and_untouched(root, content, fragment, operation):
    path = root / "episode_labels.json"
    path.write_bytes(content)
    with pytest.raises(SidecarError, match="left untouched") as caught:
        if operation == "read":
            el.read_labels(root)
        elif operation == "filter":
            el.filter_episodes(root)
        else:
            el.annotate_episode(root, 0, quality="low")
    assert fragment in str(caught.value)
    assert path.read_bytes() == content


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_failing_write_is_a_storage_error_and_changes_nothing(root, monkeypatch, err):
    before = digest(root)

    def fail(*args, **kwargs):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(os, "replace", fail)
    monkeypatch.setattr(atomic, "rename_with", fail)  # the sidecar's own install step (an exchange)
    with pytest.raises(StorageError, match="Nothing was changed") as caught:
        el.annotate_episode(root, 2, quality="low")
    assert ("free disk space" in str(caught.value)) or ("labels_dir" in str(caught.value))
    monkeypatch.undo()
    assert digest(root) == before
    assert sorted(p.name for p in root.iterdir() if p.name.endswith(".tmp")) == []
    assert "judge" not in el.read_labels(root)["episodes"]["2"]


runner = CliRunner()

CLI_CASES = [
    ("annotate-quality", ["annotate", "{root}", "0", "--quality", "superb"], "superb"),
    ("annotate-episode-text", ["annotate", "{root}", "zero", "--quality", "high"], "valid integer"),
    ("annotate-no-verdict", ["annotate", "{root}", "4", "--quality", "high"], "No deterministic verdict"),
    ("annotate-mode", ["annotate", "{root}", "0", "--quality", "high", "--failure-mode", "oops"], "near_miss"),
    ("verdicts-missing-file", ["verdicts", "{root}", "{root}/nope.json"], "does not exist; pass the path"),
    ("verdicts-bad-json", ["verdicts", "{root}", "{root}/bad.json"], "not valid JSON"),
    ("verdicts-bad-jsonl-line", ["verdicts", "{root}", "{root}/bad.jsonl"], "line 2 is not valid JSON"),
    ("verdicts-directory", ["verdicts", "{root}", "{root}/meta"], "is a directory"),
    ("annotate-episode-float", ["annotate", "{root}", "1.0", "--quality", "high"], "valid integer"),
    ("annotate-episode-exp", ["annotate", "{root}", "1e0", "--quality", "high"], "valid integer"),
    ("show-episode-float", ["show", "{root}", "0.0"], "valid integer"),
    ("verdicts-unknown-episode", ["verdicts", "{root}", "{root}/unknown.json"], "no episodes [42]"),
    ("verdicts-nan", ["verdicts", "{root}", "{root}/nan.json"], "finite"),
    ("filter-quality", ["filter", "{root}", "--min-quality", "great"], "great"),
    ("remap-collision", ["remap", "{root}", "{root}/collide.json"], "one-to-one"),
    ("agreement-oov", ["agreement", "{root}", "{root}/holdout.json"], "holdout.json line 1, episode 0: quality"),
    (
        "resolve-undisputed",
        ["resolve", "{root}", "0", "--decision", "uphold_verdict", "--reviewer", "a"],
        "no disputed verdict",
    ),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refusals_exit_nonzero_with_the_reason_and_change_nothing(root, case):
    (root / "bad.json").write_text("[{")
    (root / "bad.jsonl").write_text('{"episode": 0, "success": true}\n{"episode": 1,\n')
    (root / "unknown.json").write_text(json.dumps([{"episode": 42, "success": True}]))
    (root / "nan.json").write_text('[{"episode": 0, "success": true, "cumulative_reward": NaN}]')
    (root / "collide.json").write_text(json.dumps({"0": 1, "2": 1}))
    (root / "holdout.json").write_text(json.dumps({"0": {"quality": "fine"}}))
    before = digest(root)
    _id, argv, fragment = case
    result = runner.invoke(app, [a.format(root=root) for a in argv])
    assert result.exit_code != 0
    text = result.output + (str(result.exception) if result.exception else "")
    assert fragment in text
    assert digest(root) == before


# --- the judge tools: model-chosen arguments never raise, and change nothing ---------


def _tool_cases(root: Path, outside: Path) -> list[tuple[str, str, dict, str]]:
    r = str(root)
    return [
        ("root-dotdot", "load_episode", {"root": f"{r}/../{root.name}", "episode": 0}, ".."),
        ("root-nul", "read_predicate_verdict", {"root": r + "\x00", "episode": 0}, "NUL"),
        ("root-system", "load_episode", {"root": "/etc", "episode": 0}, "/etc"),
        ("root-outside-allow-list", "read_predicate_verdict", {"root": str(outside), "episode": 0}, "allow"),
        ("root-not-dataset", "load_episode", {"root": str(root / "meta"), "episode": 0}, "info.json"),
        ("episode-bool", "read_predicate_verdict", {"root": r, "episode": True}, "episode"),
        ("episode-negative", "sample_frames", {"root": r, "episode": -3}, "episode"),
        ("episode-unknown", "sample_frames", {"root": r, "episode": 44}, "44"),
        ("write-quality-oov", "write_label", {"root": r, "episode": 0, "quality": "awesome"}, "quality"),
        (
            "write-mode-oov",
            "write_label",
            {"root": r, "episode": 0, "quality": "low", "failure_mode": "wobble"},
            "failure_mode",
        ),
        (
            "write-opinion-str",
            "write_label",
            {"root": r, "episode": 0, "quality": "low", "success_opinion": "yes"},
            "boolean",
        ),
        ("write-note-long", "write_label", {"root": r, "episode": 0, "quality": "low", "note": "x" * 10_001}, "10000"),
        ("write-no-verdict", "write_label", {"root": r, "episode": 4, "quality": "low"}, "verdict"),
    ]


def test_judge_tools_refuse_bad_model_arguments_with_an_error_envelope(root, tmp_path):
    from strands_robots.tools.episode_judge import make_judge_tools

    outside = make_minimal_dataset(tmp_path / "outside", {0: 10})
    tools = make_judge_tools(roots=[root])
    before = digest(root)
    cases = _tool_cases(root, outside)
    for case_id, name, kwargs, fragment in cases:
        result = getattr(tools, name)(**kwargs)
        assert result["status"] == "error", (case_id, result)
        text = "\n".join(block.get("text", "") for block in result["content"])
        assert "Remedy" in text and fragment.lower() in text.lower(), (case_id, text)
        assert digest(root) == before, case_id
    assert len(API_CASES) + len(CLI_CASES) + len(cases) >= 60
