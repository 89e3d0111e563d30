"""The report: summary counts, PNG files and their titles (docs/review.md, "Report")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from strands_robots import episode_labels as el
from strands_robots.errors import LabelValidationError
from strands_robots.report import NoLabelsError, write_report
from strands_robots.report.figures import agreement_title, judge_vs_human
from strands_robots.report.summary import counts_by_verdict, dispute_timeline, summaries, summarize

SUMMARY_FILES = [
    "quality_by_verdict.png",
    "failure_modes_by_verdict.png",
    "judge_vs_human.png",
    "disputes_over_time.png",
]


def _rows(root: Path) -> list[dict]:
    return summaries(el.read_labels(root))


def test_summaries_follow_the_labels(labelled_toy):
    rows = {r["episode"]: r for r in _rows(labelled_toy)}
    assert [rows[e]["dispute"] for e in (0, 1, 2)] == [None, "open", "open"]
    assert rows[1]["verdict"] == "success" and rows[1]["opinion"] == "failure"
    assert rows[2]["quality"] == "low" and rows[2]["failure_mode"] == "incomplete"
    assert summarize(5, None)["verdict"] is None


def test_counts_by_verdict_and_reviews(labelled_toy):
    quality = counts_by_verdict(_rows(labelled_toy), "quality")
    assert quality == {"success": {"low": 0, "medium": 1, "high": 1}, "failure": {"low": 1, "medium": 0, "high": 0}}
    modes = counts_by_verdict(_rows(labelled_toy), "failure_mode")
    assert modes["success"]["none"] == 1 and modes["success"]["near_miss"] == 1
    assert modes["failure"]["incomplete"] == 1 and sum(modes["failure"].values()) == 1

    # overruling episode 2 moves it to the success column; a graded review replaces quality and mode
    el.review_episode(labelled_toy, 2, decision="overrule_verdict", reviewer="r", quality="high")
    quality = counts_by_verdict(_rows(labelled_toy), "quality")
    assert quality == {"success": {"low": 0, "medium": 1, "high": 2}, "failure": {"low": 0, "medium": 0, "high": 0}}
    modes = counts_by_verdict(_rows(labelled_toy), "failure_mode")
    assert modes["success"]["none"] == 2 and modes["success"]["incomplete"] == 0
    with pytest.raises(ValueError, match="quality"):
        counts_by_verdict([], "note")


def test_dispute_timeline_counts_raised_and_decided(labelled_toy):
    timeline = dispute_timeline(el.read_labels(labelled_toy))
    assert len(timeline["raised"]) == 2 and timeline["resolved"] == []
    el.review_episode(labelled_toy, 1, decision="uphold_verdict", reviewer="r")
    el.review_episode(labelled_toy, 0, decision="grade_only", reviewer="r", quality="low")  # not a dispute
    timeline = dispute_timeline(el.read_labels(labelled_toy))
    assert len(timeline["raised"]) == 2 and len(timeline["resolved"]) == 1
    assert timeline["resolved"][0] >= max(timeline["raised"])


def test_confusion_title_carries_kappa_and_baseline(labelled_toy):
    # judge: high, medium, low; humans: high, medium, high
    # p_o = 2/3, p_e = (1*2 + 1*1) / 9 = 1/3, kappa = (2/3 - 1/3) / (2/3) = 0.5; baseline = 2/3
    agreement = el.measure_agreement(
        labelled_toy, {0: {"quality": "high"}, 1: {"quality": "medium"}, 2: {"quality": "high"}}
    )
    assert agreement_title(agreement, "quality") == "quality: kappa 0.50, baseline 0.67, agreement 0.67 (n=3)"
    figure = judge_vs_human(agreement)
    titles = [ax.get_title() for ax in figure.axes]
    assert "quality: kappa 0.50, baseline 0.67, agreement 0.67 (n=3)" in titles


def test_write_report_files(labelled_toy, tmp_path):
    el.review_episode(labelled_toy, 1, decision="uphold_verdict", reviewer="r", quality="medium")
    out = tmp_path / "report"
    result = write_report(labelled_toy, out)
    names = sorted(str(p.relative_to(out)) for p in result.files)
    assert names == sorted(
        SUMMARY_FILES + ["episodes/episode_000000.png", "episodes/episode_000001.png", "episodes/episode_000002.png"]
    )
    sizes = {}
    for path in result.files:
        assert path.stat().st_size > 5000, path
        with Image.open(path) as image:
            assert image.format == "PNG"
            sizes[path.name] = image.size
    assert sizes["quality_by_verdict.png"] == (640, 400)
    assert sizes["judge_vs_human.png"] == (1000, 460)
    # 26 state channels -> 4 name groups (left/right arm, left/right hand), panels of 1.6 in, a 1.8 in strip of sampled frames, 1 in of titles
    assert sizes["episode_000002.png"] == (1100, 920)
    # open disputes are drawn first
    assert [p.name for p in result.files[4:]] == ["episode_000002.png", "episode_000000.png", "episode_000001.png"]
    assert result.notes == []


def test_write_report_cap_and_choice(labelled_toy, tmp_path):
    result = write_report(labelled_toy, tmp_path / "a", max_episodes=1)
    assert [p.name for p in result.files if p.parent.name == "episodes"] == ["episode_000001.png"]
    assert result.skipped_episodes == [2, 0]
    assert any("not drawn" in note for note in result.notes)
    result = write_report(labelled_toy, tmp_path / "b", episodes=[0])
    assert [p.name for p in result.files if p.parent.name == "episodes"] == ["episode_000000.png"]
    with pytest.raises(LabelValidationError, match=r"episodes \[7\]"):
        write_report(labelled_toy, tmp_path / "c", episodes=[7])


def test_report_without_human_grades_says_so_and_writes_no_error_png(labelled_toy, tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "judge_vs_human.png").write_bytes(b"from an earlier run")
    calls = []
    result = write_report(labelled_toy, tmp_path / "r", max_episodes=1, on_progress=lambda *a: calls.append(a))
    assert sorted(p.name for p in result.files) == sorted(
        ["quality_by_verdict.png", "failure_modes_by_verdict.png", "disputes_over_time.png", "episode_000001.png"]
    )
    assert not (tmp_path / "r" / "judge_vs_human.png").exists()
    assert any(note.startswith("judge_vs_human.png not written: no human_labels given") for note in result.notes)
    # one call per summary plot tried and per episode plot, the total known from the start
    assert [c[:2] for c in calls] == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)] and calls[-1][2] == "episode 1"


def test_episode_plot_panels_follow_the_state_names(labelled_toy):
    from strands_robots.dataset import open_dataset
    from strands_robots.report.write import episode_plot

    figure, _ = episode_plot(open_dataset(labelled_toy), 0, None)
    panels = [ax for ax in figure.axes if ax.get_legend() is not None]
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in panels]
    assert [ax.get_title(loc="left") for ax in panels] == [
        "kLeft Shoulder/Elbow/Wrist",
        "kRight Shoulder/Elbow/Wrist",
        "kLeftHand Pinky/Ring/Middle/…",
        "kRightHand Pinky/Ring/Middle/…",
    ]
    assert legends[1][0] == "kRightShoulderPitch" and len(legends[1]) == 7  # no left channel in the right panel
    assert all(name.startswith("kLeftHand") for name in legends[2]) and len(legends[2]) == 6


def test_disputes_over_time_draws_the_last_step():
    from strands_robots.report.figures import disputes_over_time

    figure = disputes_over_time({"raised": [1000.0, 2000.0], "resolved": [3000.0]})
    ax = figure.axes[0]
    decided = next(line for line in ax.get_lines() if line.get_label().startswith("decided"))
    x = decided.get_xdata()
    assert len(x) == 4 and x[-1] > x[-2]  # the step after the last event has a width
    assert list(decided.get_ydata()) == [0, 0, 1, 1]


def test_report_without_sidecar_is_refused(toy_dataset, tmp_path):
    with pytest.raises(NoLabelsError, match="record verdicts first"):
        write_report(toy_dataset, tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_report_without_videos_still_plots_state(labelled_no_video, tmp_path):
    result = write_report(labelled_no_video, tmp_path / "r", episodes=[1])
    path = tmp_path / "r" / "episodes" / "episode_000001.png"
    assert path in result.files and path.stat().st_size > 5000
    assert any("video missing" in note for note in result.notes)


def test_cli_report(labelled_toy, tmp_path):
    out = tmp_path / "cli"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "strands_robots.cli.main",
            "report",
            str(labelled_toy),
            "--out",
            str(out),
            "--episode",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote 3 summary plots and 1 episode plot" in done.stdout
    assert "judge_vs_human.png not written: no human_labels given" in done.stdout
    written = [name for name in SUMMARY_FILES if name != "judge_vs_human.png"]
    assert sorted(p.name for p in out.iterdir()) == sorted([*written, "episodes"])


def test_cli_report_without_labels(mixed_lengths, tmp_path):
    """A dataset with no sidecar is told to record verdicts; a folder that is not a dataset is named as such."""

    def report(root: Path):
        argv = [sys.executable, "-m", "strands_robots.cli.main", "report", str(root), "--out", str(tmp_path / "x")]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)

    unlabelled = report(mixed_lengths)
    assert unlabelled.returncode == 2
    assert "no episode_labels.json" in unlabelled.stderr
    not_a_dataset = tmp_path / "plain"
    not_a_dataset.mkdir()
    refused = report(not_a_dataset)
    assert refused.returncode == 2
    assert "is not a LeRobot dataset" in refused.stderr and "meta/info.json not found" in refused.stderr
    assert not (tmp_path / "x").exists() and list(not_a_dataset.iterdir()) == []


def test_core_imports_without_the_web_extra():
    code = (
        "import sys\n"
        "for name in ('matplotlib', 'starlette', 'uvicorn', 'jinja2'):\n"
        "    sys.modules[name] = None  # what an import sees where the web extra is not installed\n"
        "import strands_robots, strands_robots.report, strands_robots.web, strands_robots.cli.main\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("link_at", ["report", "report/episodes", "report/quality_by_verdict.png"])
def test_report_files_are_never_written_through_a_symbolic_link(labelled_toy, tmp_path, link_at):
    from strands_robots.errors import SidecarError

    outside = tmp_path / "outside"
    outside.mkdir()
    link = labelled_toy / link_at
    link.parent.mkdir(parents=True, exist_ok=True)
    target = outside / ("planted.png" if link_at.endswith(".png") else "planted")  # dangling for a file
    if not link_at.endswith(".png"):
        target.mkdir()
    link.symlink_to(target)
    with pytest.raises(SidecarError, match="symbolic link"):
        write_report(labelled_toy, episodes=[0])
    assert sorted(p.name for p in outside.rglob("*")) == ([] if link_at.endswith(".png") else ["planted"])
    assert list(target.iterdir()) == [] if target.is_dir() else not target.exists()


def test_no_plot_uses_the_subplot_parameters_its_constrained_layout_ignores(labelled_toy, monkeypatch):
    """Every figure has a constrained layout: a call of ``subplots_adjust`` (``autofmt_xdate``
    makes one on matplotlib before 3.10) is ignored with a UserWarning ("This figure was using a
    layout engine that is incompatible with subplots_adjust ..."), one per plot in the server log."""
    from matplotlib.figure import FigureBase

    from strands_robots.report.figures import disputes_over_time, png_bytes
    from strands_robots.report.write import SUMMARY_PLOTS, summary_figure

    calls = []
    monkeypatch.setattr(FigureBase, "subplots_adjust", lambda self, *a, **k: calls.append("subplots_adjust"))
    monkeypatch.setattr(FigureBase, "autofmt_xdate", lambda self, *a, **k: calls.append("autofmt_xdate"))
    figures = [disputes_over_time({"raised": [1000.0, 2000.0, 90000.0], "resolved": [3000.0]})]
    document = el.read_labels(labelled_toy)
    for name in SUMMARY_PLOTS:
        if name != "judge_vs_human":  # needs human grades, which the toy labels do not have
            figures.append(summary_figure(name, labelled_toy, document, episodes=[0, 1, 2])[0])
    for figure in figures:
        assert png_bytes(figure)[:4] == b"\x89PNG"
    assert calls == []
