"""The online path: a repo id downloaded from a Hub, here a local fake one over loopback.

``HF_ENDPOINT`` points ``huggingface_hub`` at :class:`FakeHub` (127.0.0.1, a copy of a
shared dataset); the commands run in a subprocess as a user runs them, so the real
network is never touched. Every request is counted: metadata comes first, then the data
and video files of the episodes a command reads, and nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.dataset.fake_hub import FakeHub

G1_CAMERA = "observation.images.cam_high"


@pytest.fixture
def hub(tmp_path, shared_dataset):
    """A fake Hub holding lerobot/g1 (g1-inspire-v21: v2.1, 100 episodes, one mp4 per episode)."""
    repo = tmp_path / "hub-side" / "g1"
    shutil.copytree(shared_dataset("g1-inspire-v21"), repo)
    with FakeHub({"lerobot/g1": repo}, revisions=("main", "v2.1")) as server:
        yield server


@pytest.fixture
def run(hub, tmp_path):
    """Run ``strands-labels ARGS`` (or ``python -c CODE``) online against the fake Hub."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(
        HF_ENDPOINT=hub.endpoint,
        HF_LEROBOT_HOME=str(tmp_path / "lerobot-home"),
        HF_HOME=str(tmp_path / "hf-home"),
        STRANDS_LABELS_HOME=str(tmp_path / "labels"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        AWS_EC2_METADATA_DISABLED="true",
    )
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(proxy, None)
    work = tmp_path / "work"  # no ./lerobot here: lerobot/g1 is a repo id
    work.mkdir()

    def invoke(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "strands_robots.cli.main", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=work, timeout=300)

    return invoke


def test_metadata_first_then_only_the_episodes_a_command_reads(hub, run, tmp_path):
    copy = tmp_path / "lerobot-home" / "lerobot" / "g1"
    result = run("info", "lerobot/g1")
    assert result.returncode == 0, result.stderr
    assert "hub       lerobot/g1 @ main" in result.stdout
    meta = sorted(hub.downloads())
    assert meta == ["meta/episodes.jsonl", "meta/episodes_stats.jsonl", "meta/info.json", "meta/tasks.jsonl"]
    assert not (copy / "data").exists() and not (copy / "videos").exists()
    # the repo info and tree listing were asked for before any file
    first_file = next(i for i, (m, p) in enumerate(hub.requests) if m == "GET" and "/resolve/" in p)
    assert any(p.startswith("/api/datasets/lerobot/g1") for _, p in hub.requests[:first_file])

    hub.requests.clear()  # reading two episodes fetches their two data files, nothing else
    code = (
        "from strands_robots.dataset import open_dataset\n"
        "ds = open_dataset('lerobot/g1')\n"
        "print([len(ds.read_frames(e, ['observation.state'])['observation.state']) for e in (3, 4)])\n"
    )
    result = run(code=code)
    assert result.returncode == 0, result.stderr
    assert sorted(hub.downloads()) == ["data/chunk-000/episode_000003.parquet", "data/chunk-000/episode_000004.parquet"]
    assert sorted(p.name for p in (copy / "data" / "chunk-000").iterdir()) == [
        "episode_000003.parquet",
        "episode_000004.parquet",
    ]

    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps([{"episode": e, "success": True} for e in (3, 4)]))
    hub.requests.clear()
    result = run("verdicts", "lerobot/g1", str(verdicts))
    assert result.returncode == 0, result.stderr
    assert hub.downloads() == []  # recording verdicts reads no episode
    result = run("judge", "lerobot/g1", "--episodes", "3,4")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "2 labelled" in result.stdout
    fetched = hub.downloads()
    assert len(fetched) == len(set(fetched))  # each file once
    # the offline judge profiles the whole dataset (docs/judge.md): every data file but the two already here
    data = {p for p in fetched if p.startswith("data/")}
    assert len(data) == 98 and "data/chunk-000/episode_000003.parquet" not in data
    videos = {p for p in fetched if p.startswith("videos/")}  # video only of the episodes judged
    assert videos <= {f"videos/chunk-000/{G1_CAMERA}/episode_00000{e}.mp4" for e in (3, 4)}
    assert set(fetched) == data | videos
    labels = json.loads((tmp_path / "labels" / "hub" / "lerobot" / "g1" / "main" / "episode_labels.json").read_text())
    assert sorted(labels["episodes"]) == ["3", "4"] and all("judge" in r for r in labels["episodes"].values())
    assert not (copy / "episode_labels.json").exists()  # the download cache is not written

    hub.requests.clear()  # a second run reads the local copy: no file is fetched again
    result = run("judge", "lerobot/g1", "--episodes", "3,4", "--relabel")
    assert result.returncode == 0, result.stderr
    assert hub.downloads() == []


def test_the_python_api_fetches_one_episodes_video_only(hub, run):
    code = (
        "from strands_robots.dataset import open_dataset\n"
        "ds = open_dataset('lerobot/g1')\n"
        f"frames = ds.decode_frames(2, {G1_CAMERA!r}, [0, 1])\n"
        "print(len(frames), frames[0].shape)\n"
    )
    result = run(code=code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "2"
    fetched = [p for p in hub.downloads() if not p.startswith("meta/")]
    assert fetched == [f"videos/chunk-000/{G1_CAMERA}/episode_000002.mp4"]


def test_a_revision_is_downloaded_and_keys_the_labels(hub, run, tmp_path):
    result = run("info", "lerobot/g1@nope")  # a revision the Hub does not have: refused, nothing kept
    assert result.returncode == 2
    assert "check the network and the revision" in result.stderr
    assert not (tmp_path / "lerobot-home" / "lerobot" / "g1" / "meta" / "info.json").exists()
    result = run("info", "lerobot/g1", "--revision", "v2.1", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hub"]["revision"] == "v2.1"
    assert ("GET", "/api/datasets/lerobot/g1/revision/v2.1") in hub.requests
    assert (tmp_path / "labels" / "hub" / "lerobot" / "g1" / "v2.1").is_dir()


def test_a_repo_the_hub_does_not_have_is_a_typed_error_naming_the_remedy(hub, run, tmp_path):
    result = run("info", "lerobot/absent")
    assert result.returncode == 2
    assert "lerobot/absent is not a dataset directory here nor a dataset on the Hub" in result.stderr
    assert not (tmp_path / "lerobot-home" / "lerobot" / "absent" / "meta" / "info.json").exists()
