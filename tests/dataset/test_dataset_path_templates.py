"""``data_path``/``video_path`` templates of ``meta/info.json`` (docs/dataset.md, "Path templates"):
only the fields and format specs LeRobot writes are read; anything else is a DatasetError
quoting at most ~200 characters of the template, before any path is formatted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.dataset import open_dataset
from strands_robots.dataset.cache import clear_cache
from strands_robots.errors import QUOTE_CHARS, DatasetError
from tests.synth import make_v3_dataset, make_v21_dataset

HOSTILE_V3 = [
    "data/chunk-{chunk_index:0400000000d}/file-{file_index:03d}.parquet",  # a 400 MB path, formatted per call
    "data/chunk-{chunk_index:021d}/file-{file_index:03d}.parquet",
    "data/{chunk_index.foo}/file-{file_index:03d}.parquet",  # was an AttributeError
    "data/{chunk_index[0]}/file-{file_index:03d}.parquet",  # was a TypeError
    "data/{chunk_index!r}/file-{file_index:03d}.parquet",
    "data/{chunk_index:{file_index}}/x.parquet",
    "data/{chunk_index:>9d}/file-{file_index:03d}.parquet",
    "data/{chunk_index:x}/file-{file_index:03d}.parquet",
    "data/{chunk_index:00d}/file-{file_index:03d}.parquet",
    "data/{episode_index:06d}.parquet",  # a v2 field in a v3 template
    "data/{0}/file.parquet",
    "data/{}/file.parquet",
    "data/{chunk_index/file.parquet",
    "data/chunk_index}/file.parquet",
    "data/{video_key:>1000000}/file.parquet",
    "data/{chunk_index:03d}/" + "x" * 100_000 + "{file_index:03d}/{nope}.parquet",
]


def _set_template(root: Path, key: str, template: str) -> None:
    info_path = root / "meta" / "info.json"
    info = json.loads(info_path.read_text())
    info[key] = template
    info_path.write_text(json.dumps(info))
    clear_cache()


@pytest.fixture
def v3(tmp_path: Path) -> Path:
    root = tmp_path / "v3"
    make_v3_dataset(root, [3, 4])
    return root


@pytest.mark.parametrize("template", HOSTILE_V3, ids=range(len(HOSTILE_V3)))
@pytest.mark.parametrize("key", ["data_path", "video_path"])
def test_a_template_lerobot_would_not_write_is_a_dataset_error(v3: Path, key: str, template: str) -> None:
    _set_template(v3, key, template.replace("data/", "videos/{video_key}/") if key == "video_path" else template)
    with pytest.raises(DatasetError) as caught:
        open_dataset(v3)
    message = str(caught.value)
    assert key in message and "fix the header" in message
    assert "x" * (QUOTE_CHARS + 1) not in message and len(message) < 1000


def test_the_cli_and_the_tools_answer_a_hostile_template_with_a_bounded_error(v3: Path) -> None:
    from strands_robots.tools.episode_judge import make_judge_tools

    _set_template(v3, "data_path", HOSTILE_V3[0])
    result = CliRunner().invoke(app, ["info", str(v3)])
    assert isinstance(result.exception, DatasetError), result.output  # `strands-labels` prints it, exit 2
    assert "only d or a zero-padded width up to 20" in str(result.exception)
    tools = make_judge_tools(roots=[v3.parent])
    for answer in (tools.sample_frames(root=str(v3), episode=0), tools.load_episode(root=str(v3), episode=0)):
        assert answer["status"] == "error"
        assert len(answer["content"][0]["text"]) < 1500 and "chunk_index" in answer["content"][0]["text"]


@pytest.mark.parametrize(
    ("data_path", "video_path"),
    [
        (
            "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
            "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
        ),
        ("data/{chunk_index}/{file_index:d}.parquet", "videos/{video_key}/{chunk_index:3d}/{file_index:020d}.mp4"),
    ],
)
def test_the_templates_lerobot_writes_are_read(v3: Path, data_path: str, video_path: str) -> None:
    _set_template(v3, "video_path", video_path)
    _set_template(v3, "data_path", data_path)
    dataset = open_dataset(v3)
    assert dataset.info.data_path == data_path and dataset.info.video_path == video_path
    expected = data_path.format(chunk_index=0, file_index=0)
    assert dataset.episodes[0].data_file == v3 / expected


def test_a_v21_template_takes_the_v21_fields_only(tmp_path: Path) -> None:
    root = tmp_path / "v21"
    make_v21_dataset(root, [3])
    dataset = open_dataset(root)
    assert dataset.info.data_path == "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
    _set_template(root, "data_path", "data/chunk-{chunk_index:03d}/episode_{episode_index:06d}.parquet")
    with pytest.raises(DatasetError, match="fills only episode_chunk, episode_index, video_key"):
        open_dataset(root)
    _set_template(root, "data_path", "data/chunk-{episode_chunk.real}/episode_{episode_index:06d}.parquet")
    with pytest.raises(DatasetError, match="names the field 'episode_chunk.real'"):
        open_dataset(root)
