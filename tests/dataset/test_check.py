"""``check_dataset`` / ``info --check`` read every data file and decode both ends of every
episode's videos (docs/dataset.md, "Checking the files: info --check")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from strands_robots.dataset import check_dataset
from tests.cli.test_cli_user_facing import cli


def _truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _only(pattern: str, root: Path) -> Path:
    (found,) = sorted(root.glob(pattern))
    return found


def test_a_healthy_dataset_checks_clean(toy_dataset):
    report = check_dataset(toy_dataset)
    assert report.ok and report.data_files == 1 and report.episodes == 3
    assert report.cameras == ("observation.images.front",) or len(report.cameras) == 1


def test_a_half_truncated_parquet_and_a_truncated_mp4_are_named(toy_dataset):
    parquet = _only("data/*/*.parquet", toy_dataset)
    video = _only("videos/*/*/*.mp4", toy_dataset)
    _truncate(parquet, 0.5)
    _truncate(video, 0.6)
    report = check_dataset(toy_dataset)
    names = {d.path: d for d in report.damaged}
    assert str(parquet.relative_to(toy_dataset)) in names
    assert names[str(parquet.relative_to(toy_dataset))].kind == "data"
    assert names[str(parquet.relative_to(toy_dataset))].episodes == (0, 1, 2)
    assert str(video.relative_to(toy_dataset)) in names
    assert names[str(video.relative_to(toy_dataset))].kind == "video"


def test_info_says_problems_none_but_info_check_names_the_files(toy_dataset):
    video = _only("videos/*/*/*.mp4", toy_dataset)
    _truncate(video, 0.6)
    plain = cli("info", toy_dataset)
    assert plain.returncode == 0 and "problems  none" in plain.stdout
    checked = cli("info", toy_dataset, "--check")
    assert checked.returncode == 1, checked.stderr
    assert "damaged   1 file" in checked.stdout
    assert str(video.relative_to(toy_dataset)) in checked.stdout
    as_json = json.loads(cli("info", toy_dataset, "--check", "--json").stdout)
    assert [d["path"] for d in as_json["check"]["damaged"]] == [str(video.relative_to(toy_dataset))]


def test_missing_videos_are_not_counted_as_decoded(toy_dataset):
    """A check that could decode nothing says so: missing videos are problems, never 'decoded'."""
    healthy = check_dataset(toy_dataset)
    assert (healthy.videos, healthy.videos_decoded, healthy.videos_missing, healthy.episodes) == (3, 3, 0, 3)
    _only("videos/*/*/*.mp4", toy_dataset).unlink()
    report = check_dataset(toy_dataset)
    assert report.ok  # nothing damaged: the missing file is a problem, listed once by info
    assert (report.videos, report.videos_decoded, report.videos_missing, report.episodes) == (3, 0, 3, 0)
    done = cli("info", toy_dataset, "--check")
    assert done.returncode == 0, done.stderr
    assert "first and last frame decoded for 0 of 3 episode video(s)" in done.stdout
    assert "3 missing (listed under problems)" in done.stdout
    assert "[missing_video]" in done.stdout
    check = json.loads(cli("info", toy_dataset, "--check", "--json").stdout)["check"]
    assert (check["videos_decoded"], check["videos_missing"], check["episodes"]) == (0, 3, 0)


def test_report_draws_what_it_can_and_names_the_damaged_video(toy_dataset, tmp_path):
    from strands_robots import episode_labels as el
    from strands_robots.report import write_report

    el.record_deterministic_verdicts(toy_dataset, [{"episode": e, "success": True} for e in range(3)])
    el.annotate_episode(toy_dataset, 0, quality="high")
    video = _only("videos/*/*/*.mp4", toy_dataset)
    _truncate(video, 0.3)
    result = write_report(toy_dataset, out=tmp_path / "report", episodes=[0, 2])
    drawn = sorted(p.name for p in (tmp_path / "report" / "episodes").glob("*.png"))
    assert drawn == ["episode_000000.png", "episode_000002.png"]
    damaged = [n for n in result.notes if "video damaged" in n]
    assert damaged and all(str(video.relative_to(toy_dataset)) in n for n in damaged)


def test_judge_groups_identical_errors_into_one_row(toy_dataset):
    from strands_robots import episode_labels as el

    el.record_deterministic_verdicts(toy_dataset, [{"episode": e, "success": True} for e in range(3)])
    el.flush(toy_dataset)
    _truncate(_only("data/*/*.parquet", toy_dataset), 0.5)
    done = cli("judge", toy_dataset)
    assert done.returncode == 1, done.stderr
    rows = [line for line in done.stdout.splitlines() if re.match(r"│\s+0-2 │", line)]
    assert len(rows) == 1, done.stdout
    assert "episode N" in done.stdout and "file-000.parquet" in done.stdout
    failures = done.stdout.split("failed (no label written)", 1)[1]
    assert not re.search(r"│\s+[0-2] │", failures)  # no row per episode
