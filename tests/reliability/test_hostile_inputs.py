"""Hostile input, everywhere a caller can reach: the Python API, the CLI, the judge tools
and the web server. Every case must be refused with a typed error (a ``LabelsError``, a
tool error envelope naming a remedy, an HTTP 4xx with a JSON error, a non-zero CLI exit
without a traceback), and every file of the dataset and the label sidecars must hash the
same before and after.

One labelled copy of the toy dataset is shared by the module (nothing may change it);
each case hashes every file under the module's directory before and after.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots import outcomes as oc
from strands_robots import segments as sg
from strands_robots.cli.main import app
from strands_robots.errors import MESSAGE_CHARS, QUOTE_CHARS, LabelsError
from tests.conftest import toy_copy

SEGMENTS = [
    {"start": 0, "end": 30, "template_id": "P1", "slots": {"theme": "yellow bottle", "source": "table"}},
    {"start": 30, "end": 60, "template_id": "L2", "slots": {"theme": "yellow bottle", "destination": "table"}},
    {"start": 60, "end": 90, "template_id": "TASK_COMPLETE", "slots": {}, "modifiers": {}, "note": None},
]
BASE = "http://127.0.0.1:8765"
TOKEN = "hostile-token-0123456789"
WRITE = {"origin": BASE, "x-labels-token": TOKEN}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hostile")
    ds = toy_copy(base / "ds")
    el.record_deterministic_verdicts(ds, [{"episode": i, "success": i != 1} for i in range(3)], benchmark="toy")
    el.annotate_episode(ds, 0, quality="high", success_opinion=False, model="judge")  # a dispute on 0
    el.annotate_episode(ds, 2, quality="low", model="judge")
    oc.set_outcome(ds, 0, outcome="expert_success", labeled_by="tester")
    sg.save_segmentation(ds, 0, SEGMENTS, annotator="tester")
    el.flush(ds)
    el.stale_episodes(ds)  # builds the fingerprint cache a read may create (a cache, not labels)
    files = base / "inputs"
    files.mkdir()
    (files / "bad.json").write_text("[{")
    (files / "bad.jsonl").write_text('{"episode": 0, "success": true}\n{"episode": 1,\n')
    (files / "latin1.json").write_bytes(b'[{"episode": 0, "success": true, "note": "\xe9"}]')
    (files / "object.json").write_text('{"episode": 0}')
    (files / "number.json").write_text("5")
    (files / "numbers.json").write_text("[1, 2]")
    (files / "unknown.json").write_text(json.dumps([{"episode": 42, "success": True}]))
    (files / "nan.json").write_text('[{"episode": 0, "success": true, "cumulative_reward": NaN}]')
    (files / "huge.json").write_text('[{"episode": 0, "success": true, "cumulative_reward": 1e400}]')
    (files / "string-success.json").write_text('[{"episode": 0, "success": "yes"}]')
    (files / "bool-episode.json").write_text('[{"episode": true, "success": true}]')
    (files / "float-episode.json").write_text('[{"episode": 1.0, "success": true}]')
    (files / "negative.json").write_text('[{"episode": -1, "success": true}]')
    (files / "empty.json").write_text("[]")
    (files / "collide.json").write_text(json.dumps({"0": 1, "2": 1}))
    (files / "holdout.json").write_text(json.dumps({"0": {"quality": "fine"}}))
    (files / "holdout-bad-key.json").write_text(json.dumps({"zero": {"quality": "high"}}))
    (files / "empty-mapping.json").write_text("{}")
    (files / "outcome-bad.json").write_text(json.dumps({"outcome": "triumph"}))
    (files / "dir.json").mkdir()
    return {"base": base, "ds": ds, "files": files}


def hashes(base: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, names in os.walk(base):
        for name in names:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    out[os.path.relpath(path, base)] = hashlib.sha256(handle.read()).hexdigest()
    return out


@pytest.fixture
def unchanged(world):
    before = hashes(world["base"])
    yield
    assert hashes(world["base"]) == before


# --- the Python API -------------------------------------------------------------------------

SURROGATE = "\ud800"
LONG = "x" * 20_000
NOT_TEXT = [5, 1.5, b"bytes", ["a"], {"a": 1}, object()]
NOT_BOOL = ["no", "true", 0, 1, 1.0, [], "False", None]
NOT_EPISODE = [True, False, -1, -(10**30), 1.0, 0.5, "0", "zero", None, [0], {"0": 0}, 10**400, math.nan, 99, 4]
NOT_QUALITY = ["excellent", "High", "", None, 1, ["high"], SURROGATE, "high "]
NOT_MODE = ["slip", "", 3, ["collision"], SURROGATE, True]
NOT_ROOT = [5, None, 1.5, b"ds", ["ds"], "ds\x00", "ds" + SURROGATE]


def _api_cases() -> list[tuple[str, Any]]:
    cases: list[tuple[str, Any]] = []

    def add(name: str, call: Any) -> None:
        cases.append((name, call))

    for i, v in enumerate(NOT_EPISODE):
        add(f"annotate-episode-{i}", lambda r, v=v: el.annotate_episode(r, v, quality="high"))
        add(f"verdict-episode-{i}", lambda r, v=v: el.deterministic_verdict(r, v))
        add(f"review-episode-{i}", lambda r, v=v: el.review_episode(r, v, decision="grade_only", reviewer="a"))
        add(
            f"record-episode-{i}", lambda r, v=v: el.record_deterministic_verdicts(r, [{"episode": v, "success": True}])
        )
        add(f"outcome-episode-{i}", lambda r, v=v: oc.set_outcome(r, v, outcome="expert_success"))
        add(f"segment-episode-{i}", lambda r, v=v: sg.save_segmentation(r, v, SEGMENTS, annotator="a"))
    for i, v in enumerate(NOT_QUALITY):
        add(f"annotate-quality-{i}", lambda r, v=v: el.annotate_episode(r, 0, quality=v))
        add(f"filter-min-quality-{i}", lambda r, v=v: el.filter_episodes(r, min_quality=v))
        add(f"batch-quality-{i}", lambda r, v=v: el.annotate_episodes(r, [{"episode": 0, "quality": v}]))
    for i, v in enumerate(NOT_MODE):
        add(f"annotate-mode-{i}", lambda r, v=v: el.annotate_episode(r, 0, quality="high", failure_mode=v))
    for i, v in enumerate([*NOT_TEXT, SURROGATE, "n" * 10_001]):
        add(f"annotate-note-{i}", lambda r, v=v: el.annotate_episode(r, 0, quality="high", note=v))
        add(
            f"review-note-{i}",
            lambda r, v=v: el.review_episode(r, 2, decision="grade_only", reviewer="a", note=v),
        )
    for i, v in enumerate([*NOT_TEXT, SURROGATE, "m" * 256]):
        add(f"annotate-model-{i}", lambda r, v=v: el.annotate_episode(r, 0, quality="high", model=v))
        add(f"review-reviewer-{i}", lambda r, v=v: el.review_episode(r, 2, decision="grade_only", reviewer=v))
        add(
            f"record-benchmark-{i}",
            lambda r, v=v: el.record_deterministic_verdicts(r, [{"episode": 0, "success": True}], benchmark=v),
        )
    for i, v in enumerate(NOT_BOOL):
        if v is not None:  # None: no opinion
            add(f"annotate-opinion-{i}", lambda r, v=v: el.annotate_episode(r, 0, quality="high", success_opinion=v))
        add(f"annotate-keep-history-{i}", lambda r, v=v: el.annotate_episode(r, 0, quality="high", keep_history=v))
        add(f"filter-require-success-{i}", lambda r, v=v: el.filter_episodes(r, require_success=v))
        add(f"filter-exclude-disputed-{i}", lambda r, v=v: el.filter_episodes(r, exclude_disputed=v))
        if v is not None:
            add(
                f"record-success-{i}",
                lambda r, v=v: el.record_deterministic_verdicts(r, [{"episode": 0, "success": v}]),
            )
    for i, v in enumerate([5, None, 1.5, "abc", {"episode": 0}, b"x", [3], [None], [[0]], [{"quality": "high"}]]):
        add(f"batch-shape-{i}", lambda r, v=v: el.annotate_episodes(r, v))
    for i, key in enumerate(["qualty", "grade", "episdoe", "Quality", SURROGATE]):
        add(
            f"batch-unknown-key-{i}", lambda r, k=key: el.annotate_episodes(r, [{"episode": 0, "quality": "low", k: 1}])
        )
    for i, v in enumerate([5, "triumph", ["triumph"], [5], {"a"}, [None], "expert success"]):
        add(f"filter-outcomes-{i}", lambda r, v=v: el.filter_episodes(r, outcomes=v))
        add(f"filter-membership-{i}", lambda r, v=v: el.filter_episodes(r, evaluation_membership=v))
    for i, v in enumerate([[], 5, None, "list", {"episode": 0}, [{"episode": 0}], [{"success": True}], [7]]):
        add(f"record-shape-{i}", lambda r, v=v: el.record_deterministic_verdicts(r, v))
    for i, v in enumerate([math.nan, math.inf, "1", [1], 10**400, True]):
        add(
            f"record-reward-{i}",
            lambda r, v=v: el.record_deterministic_verdicts(
                r, [{"episode": 0, "success": True, "cumulative_reward": v}]
            ),
        )
    for i, v in enumerate(["approve", "", None, 3, SURROGATE]):
        add(f"review-decision-{i}", lambda r, v=v: el.review_episode(r, 0, decision=v, reviewer="a"))
    for i, v in enumerate([{}, None, 5, "x", {"zero": {"quality": "high"}}, {0: {"quality": "superb"}}, {0: 5}]):
        add(f"agreement-{i}", lambda r, v=v: el.measure_agreement(r, v))
    for i, v in enumerate(NOT_ROOT + ["d" * 5000, "/nonexistent/dataset/root"]):
        add(f"read-root-{i}", lambda r, v=v: el.read_labels(v))
        add(f"filter-root-{i}", lambda r, v=v: el.filter_episodes(v))
        add(f"outcome-root-{i}", lambda r, v=v: oc.get_outcome(v, 0))
        add(f"segment-root-{i}", lambda r, v=v: sg.get_segmentation(v, 0))
    for i, v in enumerate([5, b"x", ["d"], "ld\x00", "ld" + SURROGATE]):
        add(f"labels-dir-{i}", lambda r, v=v: el.filter_episodes(r, labels_dir=v))
    for i, fields in enumerate(
        [
            {"outcome": "triumph"},
            {"outcome": "expert_success", "progress": 10**400},
            {"outcome": "expert_success", "progress": math.nan},
            {"outcome": "expert_success", "labeled_by": SURROGATE},
            {"outcome": "expert_success", "source_metadata": {SURROGATE: 1}},
            {"outcome": "expert_success", "source_metadata": {"k": 10**400}},
            {"outcome": "expert_success", "qualty": 3},
            {"outcome": "expert_success", "quality": 9},
            {},
            {"outcome": None},
        ]
    ):
        add(f"outcome-fields-{i}", lambda r, f=fields: oc.set_outcome(r, 0, **f))
    for i, (segments, kwargs) in enumerate(
        [
            (SEGMENTS, {"annotator": SURROGATE}),
            (SEGMENTS, {"annotator": "a", "note": SURROGATE}),
            ([{**SEGMENTS[0], "note": SURROGATE}, *SEGMENTS[1:]], {"annotator": "a"}),
            ([{**SEGMENTS[0], "slots": {"theme": SURROGATE, "source": "table"}}, *SEGMENTS[1:]], {"annotator": "a"}),
            ([{"start": 0, "end": 90, "label": "pick up the " + SURROGATE}], {"annotator": "a"}),
            (5, {"annotator": "a"}),
            (None, {"annotator": "a"}),
            ([{"start": 0, "end": 10**400, "label": "TASK_COMPLETE"}], {"annotator": "a"}),
            ([{"start": 30, "end": 10, "label": "TASK_COMPLETE"}], {"annotator": "a"}),
            (SEGMENTS[:2], {"annotator": "a"}),
            (SEGMENTS, {"annotator": "a", "reference": "yes"}),
            (SEGMENTS, {"annotator": "a", "cohort": "nope"}),
        ]
    ):
        add(f"segment-save-{i}", lambda r, s=segments, k=kwargs: sg.save_segmentation(r, 0, s, **k))
    for i, v in enumerate(["next.sucess", "", 5, None if False else "observation.state.x", SURROGATE]):
        add(f"verdicts-from-column-{i}", lambda r, v=v: el.verdicts_from_dataset(r, column=v))
    return cases


API_CASES = _api_cases()


@pytest.mark.parametrize("case", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_refuses_hostile_input_with_a_typed_error(world, unchanged, case):
    _name, call = case
    with pytest.raises(LabelsError) as caught:
        call(world["ds"])
    assert len(str(caught.value)) > 20


# --- the CLI ---------------------------------------------------------------------------------

runner = CliRunner()
CLI_CASES = [
    ["annotate", "{ds}", "1.0", "--quality", "high"],
    ["annotate", "{ds}", "1e0", "--quality", "high"],
    ["annotate", "{ds}", "0x1", "--quality", "high"],
    ["annotate", "{ds}", "-1", "--quality", "high"],
    ["annotate", "{ds}", "", "--quality", "high"],
    ["annotate", "{ds}", "zero", "--quality", "high"],
    ["annotate", "{ds}", "99", "--quality", "high"],
    ["annotate", "{ds}", "0", "--quality", "superb"],
    ["annotate", "{ds}", "0", "--quality", "high", "--failure-mode", "oops"],
    ["annotate", "{ds}", "0", "--quality", "high", "--note", "n" * 10_001],
    ["annotate", "{ds}", "0", "--quality", "high", "--note", SURROGATE],
    ["annotate", "{ds}", "0", "--quality", "high", "--model", SURROGATE],
    ["annotate", "{ds}/nope", "0", "--quality", "high"],
    ["annotate", "{ds}/meta", "0", "--quality", "high"],
    *[
        ["verdicts", "{ds}", "{files}/" + name]
        for name in (
            "nope.json",
            "bad.json",
            "bad.jsonl",
            "latin1.json",
            "object.json",
            "number.json",
            "numbers.json",
            "unknown.json",
            "nan.json",
            "huge.json",
            "string-success.json",
            "bool-episode.json",
            "float-episode.json",
            "negative.json",
            "empty.json",
            "dir.json",
        )
    ],
    ["verdicts", "{ds}"],
    ["verdicts", "{ds}", "{files}/empty.json", "--from-column", "next.success"],
    ["verdicts", "{ds}", "--from-column", "next.sucess"],
    ["verdicts", "{ds}", "--from-column", ""],
    ["verdicts", "{ds}", "{files}/unknown.json", "--benchmark", SURROGATE],
    ["filter", "{ds}", "--min-quality", "great"],
    ["filter", "{ds}", "--outcome", "triumph"],
    ["filter", "{ds}", "--membership", "everyone"],
    ["filter", "{ds}", "--format", "yaml"],
    ["filter", "{ds}/nope"],
    ["show", "{ds}", "0.0"],
    ["show", "{ds}", "x"],
    ["show", "{ds}", "77"],
    ["resolve", "{ds}", "2", "--decision", "uphold_verdict", "--reviewer", "a"],
    ["resolve", "{ds}", "0", "--decision", "approve", "--reviewer", "a"],
    ["resolve", "{ds}", "0", "--decision", "grade_only", "--reviewer", " "],
    ["resolve", "{ds}", "1.5", "--decision", "grade_only", "--reviewer", "a"],
    ["agreement", "{ds}", "{files}/holdout.json"],
    ["agreement", "{ds}", "{files}/holdout-bad-key.json"],
    ["agreement", "{ds}", "{files}/nope.json"],
    ["agreement", "{ds}", "{files}/bad.json"],
    ["remap", "{ds}", "{files}/collide.json"],
    ["remap", "{ds}", "{files}/numbers.json"],
    ["remap", "{ds}", "{files}/bad.json"],
    ["remap", "{ds}", "{files}/nope.json"],
]


@pytest.mark.parametrize("argv", CLI_CASES, ids=[f"cli-{i}-{a[0]}" for i, a in enumerate(CLI_CASES)])
def test_cli_refuses_hostile_input_without_a_traceback(world, unchanged, argv):
    args = [a.format(ds=world["ds"], files=world["files"]) for a in argv]
    result = runner.invoke(app, args)
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit | LabelsError), repr(result.exception)
    text = result.output + (str(result.exception) if isinstance(result.exception, LabelsError) else "")
    assert text.strip() and "Traceback" not in text


# --- the judge tools -----------------------------------------------------------------------------


def _tool_cases() -> list[tuple[str, str, dict[str, Any]]]:
    cases = []
    for i, root in enumerate(
        [
            None,
            5,
            "",
            " ",
            "ds\x00",
            "ds" + SURROGATE,
            "a" * 5000,
            "/" + "a/" * 3000,
            "/",
            "/etc",
            "/proc/self",
            "{base}/../{base_name}",
            "{ds}/..",
            "relative/ds",
            "{ds}/meta",
            "{ds}/meta/info.json",
            "{base}/outside",
        ]
    ):
        for tool in ("load_episode", "sample_frames", "read_predicate_verdict", "write_label"):
            args: dict[str, Any] = {"root": root, "episode": 0}
            if tool == "write_label":
                args["quality"] = "low"
            cases.append((f"tool-root-{i}-{tool}", tool, args))
    for i, episode in enumerate([True, -1, 1.5, "0", None, 99, 10**400, [0], 10**5000, "9" * 100_000]):
        for tool in ("load_episode", "sample_frames", "read_predicate_verdict", "write_label"):
            args = {"root": "{ds}", "episode": episode}
            if tool == "write_label":
                args["quality"] = "low"
            cases.append((f"tool-episode-{i}-{tool}", tool, args))
    for i, extra in enumerate(
        [
            {"n_frames": 0},
            {"n_frames": -3},
            {"n_frames": 10**6, "include_images": True},  # clamped without images (as 0.5.3); refused with
            {"n_frames": "4"},
            {"n_frames": True},
            {"n_frames": 2.5},
            {"include_images": "yes"},
            {"include_images": 1},
        ]
    ):
        cases.append((f"tool-sample-{i}", "sample_frames", {"root": "{ds}", "episode": 0, **extra}))
    for i, extra in enumerate(
        [
            {"quality": "awesome"},
            {"quality": None},
            {"quality": SURROGATE},
            {"quality": "low", "failure_mode": "x"},
            {"quality": "low", "success_opinion": "yes"},
            {"quality": "low", "note": "x" * 10_001},
            {"quality": "low", "note": SURROGATE},
            {"quality": "low", "note": 5},
            {"quality": "low", "judge_model": {"name": "m"}},  # never stored as ""
            {"quality": "low", "judge_model": ["m"]},
            {"quality": "low", "judge_model": 5},
            {"quality": "q" * 1_000_000},
            {"quality": "low", "failure_mode": "f" * 1_000_000},
        ]
    ):
        cases.append((f"tool-write-{i}", "write_label", {"root": "{ds}", "episode": 0, **extra}))
    cases.append(("tool-write-no-verdict", "write_label", {"root": "{ds}", "episode": 7, "quality": "low"}))
    return cases


TOOL_CASES = _tool_cases()


def _fill(value: Any, world: dict[str, Path]) -> Any:
    if isinstance(value, str) and "{" in value:
        return value.format(ds=world["ds"], base=world["base"], base_name=world["base"].name)
    return value


@pytest.mark.parametrize("case", TOOL_CASES, ids=[c[0] for c in TOOL_CASES])
def test_judge_tools_answer_hostile_arguments_with_an_error_envelope(world, unchanged, case):
    from strands_robots.tools.episode_judge import make_judge_tools

    _name, tool, args = case
    tools = make_judge_tools(roots=[world["ds"]])
    result = getattr(tools, tool)(**{k: _fill(v, world) for k, v in args.items()})
    assert result["status"] == "error", result
    text = "\n".join(block.get("text", "") for block in result["content"])
    assert "Remedy" in text, text
    assert_bounded(text)


def assert_bounded(text: str) -> None:
    """A message quotes at most ~QUOTE_CHARS characters of any input (no longer run of one character)."""
    assert len(text) <= MESSAGE_CHARS + 600, len(text)
    longest_run = max((len(m.group()) for m in re.finditer(r"(.)\1*", text)), default=0)
    assert longest_run <= QUOTE_CHARS, longest_run


# --- the web server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(world):
    from strands_robots.web.app import create_app

    application = create_app(world["ds"], host="127.0.0.1", port=8765, token=TOKEN, reviewer="tester")
    with TestClient(application, base_url=BASE) as test_client:
        yield test_client


GOOD_REVIEW = {"decision": "grade_only", "reviewer": "a", "quality": "medium", "verdict_seen": None, "judge_seen": None}
WEB_CASES: list[tuple[str, str, str, Any, dict[str, str] | None]] = [
    # (id, method, path, JSON body or raw bytes, headers)
    ("review-no-token", "POST", "/api/episodes/0/review", GOOD_REVIEW, {"origin": BASE}),
    ("review-wrong-token", "POST", "/api/episodes/0/review", GOOD_REVIEW, {"origin": BASE, "x-labels-token": "x"}),
    ("review-foreign-origin", "POST", "/api/episodes/0/review", GOOD_REVIEW, {**WRITE, "origin": "http://evil"}),
    ("segment-no-token", "POST", "/api/segment/episodes/0", {"segments": SEGMENTS}, {"origin": BASE}),
    ("review-unknown-episode", "POST", "/api/episodes/99/review", GOOD_REVIEW, WRITE),
    ("segment-unknown-episode", "POST", "/api/segment/episodes/99", {"segments": SEGMENTS}, WRITE),
    ("get-unknown-episode", "GET", "/api/episodes/99", None, None),
    ("get-unknown-segment-episode", "GET", "/api/segment/episodes/99", None, None),
    ("get-bad-cohort", "GET", "/api/segment/episodes/0?cohort=nope", None, None),
    ("get-unknown-api", "GET", "/api/nothing", None, None),
    ("get-frame-bad-camera", "GET", "/api/episodes/0/frames/9/0.jpg", None, None),
    ("get-frame-bad-frame", "GET", "/api/episodes/0/frames/0/100000.jpg", None, None),
    ("get-state-unknown", "GET", "/api/episodes/99/state", None, None),
    ("get-queue-bad-limit", "GET", "/api/segment/episodes?limit=-5", None, None),
    ("get-plot-unknown", "GET", "/plots/nope.png", None, None),
    # a number in the path too long for int() (past 4300 digits it raises): a 404 JSON, never a 500
    ("get-episode-5000-digits", "GET", "/api/episodes/" + "9" * 5000, None, None),
    ("get-state-5000-digits", "GET", "/api/episodes/" + "9" * 5000 + "/state", None, None),
    ("get-frame-5000-digits", "GET", "/api/episodes/0/frames/0/" + "9" * 5000 + ".jpg", None, None),
    ("get-segment-5000-digits", "GET", "/api/segment/episodes/" + "9" * 5000, None, None),
    ("review-5000-digits", "POST", "/api/episodes/" + "9" * 5000 + "/review", GOOD_REVIEW, WRITE),
    ("get-plot-5000-digits", "GET", "/plots/episodes/" + "9" * 5000 + ".png", None, None),
]
for _i, _body in enumerate(
    [
        {**GOOD_REVIEW, "decision": "approve"},
        {**GOOD_REVIEW, "reviewer": SURROGATE},
        {**GOOD_REVIEW, "note": SURROGATE},
        {**GOOD_REVIEW, "quality": "superb"},
        {**GOOD_REVIEW, "failure_mode": "wobble"},
        {**GOOD_REVIEW, "qualty": "high"},
        {**GOOD_REVIEW, "note": "n" * 10_001},
        {**GOOD_REVIEW, "decision": 5},
        {"decision": "overrule_verdict", "reviewer": "a", "episode": 2},
        [GOOD_REVIEW],
        "grade_only",
        5,
        None,
        b'{"decision": "grade_only", "reviewer": "a", "note": "\\ud800"}',
        b'{"decision": "grade_only", "reviewer": "a", "quality": 1e400}',
        b'{"decision": "grade_only", "reviewer": "a", "note": NaN}',
        b'{"decision": "grade_only", "reviewer": "a"',
        b"\xff\xfe not utf-8",
        b"",
        b"[" * 60_000,  # deeper than the JSON parser recurses: a 400, never a 500
        b'{"decision": ' + b"[" * 40 + b"]" * 40 + b"}",  # parses, but deeper than a body may nest
        b"{" * 30_000,
    ]
):
    WEB_CASES.append((f"review-body-{_i}", "POST", "/api/episodes/0/review", _body, WRITE))
for _i, _body in enumerate(
    [
        {"segments": SEGMENTS, "annotator": SURROGATE},
        {"segments": SEGMENTS, "note": SURROGATE},
        {"segments": [{**SEGMENTS[0], "note": SURROGATE}, *SEGMENTS[1:]]},
        {"segments": [{**SEGMENTS[0], "slots": {"theme": SURROGATE, "source": "table"}}, *SEGMENTS[1:]]},
        {"segments": [{"start": 0, "end": 90, "label": "pick up the " + SURROGATE}]},
        {"segments": SEGMENTS, "annotator": 5},
        {"segments": SEGMENTS, "reference": "yes"},
        {"segments": SEGMENTS, "cohort": "nope"},
        {"segments": SEGMENTS, "extra": 1},
        {"segments": 5},
        {"segments": None},
        {"segments": [5]},
        {"segments": [{"start": "0", "end": 90, "label": "TASK_COMPLETE"}]},
        {"segments": [{"start": 0, "end": 90, "label": "TASK_COMPLETE", "colour": "red"}]},
        {"segments": SEGMENTS[:2]},
        [SEGMENTS],
        b'{"segments": [{"start": 0, "end": 1e400, "label": "TASK_COMPLETE"}]}',
        b'{"segments": [{"start": 0, "end": 90, "label": "pick up the \\udc00"}]}',
        b'{"segments": ',
        b'{"segments": ' + b"[" * 60_000,  # a 60 KB nested body: a 400 JSON, never a 500
        b'{"segments": [{"start": 0, "end": 90, "label": "TASK_COMPLETE", "note": ' + b"[" * 40 + b"]" * 40 + b"}]}",
    ]
):
    WEB_CASES.append((f"segment-save-{_i}", "POST", "/api/segment/episodes/0", _body, WRITE))
    if _i < 12:
        WEB_CASES.append((f"segment-check-{_i}", "POST", "/api/segment/episodes/0/check", _body, WRITE))


@pytest.mark.parametrize("case", WEB_CASES, ids=[c[0] for c in WEB_CASES])
def test_web_server_answers_hostile_requests_with_a_4xx_json_error(world, unchanged, client, case):
    _name, method, path, body, headers = case
    if method == "GET":
        response = client.get(path)
    elif isinstance(body, bytes):
        response = client.post(path, content=body, headers={**(headers or {}), "content-type": "application/json"})
    else:  # JSON as a browser sends it; lone surrogates travel as \ud800 escapes
        content = json.dumps(body).encode()
        response = client.post(path, content=content, headers={**(headers or {}), "content-type": "application/json"})
    if path.endswith("/check") and response.status_code == 200:  # a check only reports; it stores nothing
        assert "findings" in response.json()
        return
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    if path.startswith("/api/"):
        assert response.json().get("error"), response.text[:300]
        assert_bounded(response.json()["error"])


def test_the_suite_has_at_least_300_cases():
    assert len(API_CASES) + len(CLI_CASES) + len(TOOL_CASES) + len(WEB_CASES) >= 300
