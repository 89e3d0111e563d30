"""``run_judge`` and ``strands-labels judge``: resumable, relabel history, retries, failures."""

from __future__ import annotations

import pytest
from strands.types.exceptions import ModelThrottledException
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.episode_labels import labels_path, read_labels
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError
from strands_robots.judges import HeuristicJudgeModel, RetryPolicy, run_judge
from strands_robots.judges.heuristic import judge_prompt, parse_request
from strands_robots.judges.retry import is_transient
from strands_robots.judges.runner import NoVerdictsError
from strands_robots.model_spec import ModelSpecError
from tests.judges.judge_fakes import ScriptedModel

FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.02)


def test_offline_judge_labels_every_episode_then_resumes(toy_with_verdicts):
    first = run_judge(toy_with_verdicts, limit=2)  # as if interrupted after two episodes
    assert [r.episode for r in first.results] == [0, 1] and not first.failed
    assert len(first.warnings) == 1 and "only 3 episode(s) could be profiled, fewer than 8" in first.warnings[0]
    assert first.judge_model == "heuristic-v1"
    second = run_judge(toy_with_verdicts)
    assert [r.episode for r in second.results] == [2] and second.already_labelled == 2
    records = read_labels(toy_with_verdicts)["episodes"]
    for key in ("0", "1", "2"):
        judge = records[key]["judge"]
        assert judge["model"] == "heuristic-v1"
        assert judge["success_opinion"] is None and judge["disputes_verdict"] is False
        # three episodes are too few for dataset-relative claims: absolute thresholds, said in the note
        assert judge["quality"] == "high", judge["note"]
        assert "Only 3 episode(s) in the dataset, fewer than 8: too few to compare" in judge["note"]
        assert "judge_history" not in records[key]
    assert run_judge(toy_with_verdicts).results == []


def test_relabel_keeps_the_replaced_blocks(toy_with_verdicts):
    run_judge(toy_with_verdicts)
    again = run_judge(toy_with_verdicts, relabel=True, workers=2)
    assert sorted(r.episode for r in again.labelled) == [0, 1, 2]
    records = read_labels(toy_with_verdicts)["episodes"]
    for key in ("0", "1", "2"):
        history = records[key]["judge_history"]
        assert len(history) == 1 and history[0]["model"] == "heuristic-v1"
        assert history[0]["labeled_at"] <= records[key]["judge"]["labeled_at"]


def test_requested_episode_without_verdict_is_a_reported_failure(toy_with_verdicts):
    report = run_judge(toy_with_verdicts, episodes=[1, 7])
    assert [r.episode for r in report.labelled] == [1]
    assert [(r.episode, r.error) for r in report.failed] == [(7, "no deterministic verdict recorded; nothing to judge")]


def test_no_sidecar_is_a_typed_error(toy_dataset):
    with pytest.raises(NoVerdictsError, match="strands-labels verdicts"):
        run_judge(toy_dataset)
    with pytest.raises(LabelValidationError):
        run_judge(toy_dataset, workers=0)
    with pytest.raises(ModelSpecError, match="unknown provider"):
        run_judge(toy_dataset, model="nope:x")  # checked before anything else


def test_transient_model_errors_are_retried_with_backoff(toy_with_verdicts):
    root = str(toy_with_verdicts)
    model = ScriptedModel(
        [
            ("raise", ModelThrottledException("slow down")),
            ("raise", ConnectionError("reset by peer")),
            ("tool", "read_predicate_verdict", {"root": root, "episode": 0}),
            ("tool", "write_label", {"root": root, "episode": 0, "quality": "low", "failure_mode": "jerky_motion"}),
            ("text", "done"),
        ]
    )
    report = run_judge(toy_with_verdicts, model=model, episodes=[0], retry=FAST_RETRY)
    assert [(r.episode, r.ok, r.quality) for r in report.results] == [(0, True, "low")]
    assert model.calls == 5
    assert read_labels(toy_with_verdicts)["episodes"]["0"]["judge"]["model"] == "scripted-test-model"


def test_a_failing_episode_does_not_stop_the_run(toy_with_verdicts):
    class BrokenOnEpisodeTwo(HeuristicJudgeModel):
        def next_events(self, messages):
            if "episode 2 " in messages[0]["content"][0]["text"]:
                raise ValueError("model output could not be parsed")
            return super().next_events(messages)

    report = run_judge(toy_with_verdicts, model=BrokenOnEpisodeTwo(), retry=FAST_RETRY)
    assert [r.episode for r in report.labelled] == [0, 1]
    assert [(r.episode, r.error) for r in report.failed] == [(2, "ValueError: model output could not be parsed")]
    assert not is_transient(ValueError("x")) and is_transient(TimeoutError("x"))


def test_a_model_that_writes_nothing_is_a_failure(toy_with_verdicts):
    report = run_judge(toy_with_verdicts, model=ScriptedModel([("text", "I refuse.")]), episodes=[0])
    assert report.failed[0].error.startswith("the judge wrote no label") and "I refuse." in report.failed[0].error


def test_judge_prompt_round_trips():
    text = judge_prompt('/data/my "odd" set', [3, 10], 6, images=True)
    request = parse_request(text)
    assert request.root == '/data/my "odd" set' and request.episodes == (3, 10)
    assert request.n_frames == 6 and request.images is True
    assert parse_request("Label episode 4 of the dataset at /tmp/x.").root == "/tmp/x"
    assert parse_request("hello") is None


def test_cli_judge(toy_with_verdicts):
    runner = CliRunner()
    result = runner.invoke(app, ["judge", str(toy_with_verdicts)])
    assert result.exit_code == 0, result.output
    assert "quality high" in result.output and "3 labelled" in result.output
    assert '"judge"' in labels_path(toy_with_verdicts).read_text()  # flushed into the canonical file
    again = runner.invoke(app, ["judge", str(toy_with_verdicts)])
    assert again.exit_code == 0 and "nothing to judge: 3 episode(s) already labelled" in again.output
    # an episode the dataset does not have is refused up front, by name, before any label changes
    missing = runner.invoke(app, ["judge", str(toy_with_verdicts), "--episodes", "1,7", "--relabel"])
    assert isinstance(missing.exception, EpisodeNotFoundError), missing.output
    assert "does not have: 7" in str(missing.exception) and "--episodes 1" in str(missing.exception)
    assert "judge_history" not in read_labels(toy_with_verdicts)["episodes"]["1"]
    relabel = runner.invoke(app, ["judge", str(toy_with_verdicts), "--episodes", "1", "--relabel"])
    assert relabel.exit_code == 0, relabel.output
    assert len(read_labels(toy_with_verdicts)["episodes"]["1"]["judge_history"]) == 1
