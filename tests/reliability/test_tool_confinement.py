"""Dataset metadata inside an allowed root never makes the judge tools read outside it.

A model only chooses the root; the dataset's own ``meta/info.json`` and its symlinks are
untrusted too. Each case builds a dataset inside the allowed root whose metadata points
at a copy of the toy dataset's files OUTSIDE it (with a different state, so a leak would
be visible), and asserts the tools answer with an error envelope naming the file, and
that no file was changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from strands_robots.dataset.cache import clear_cache
from strands_robots.dataset.reader import open_dataset
from strands_robots.errors import DatasetError
from strands_robots.tools.episode_judge import make_judge_tools
from tests.conftest import TOY_DATASET


def tree_hashes(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def layout(tmp_path):
    if not (TOY_DATASET / "meta" / "info.json").is_file():
        pytest.skip("examples/toy_dataset is not built")
    allowed = tmp_path / "allowed"
    outside = tmp_path / "secret"
    allowed.mkdir()
    shutil.copytree(TOY_DATASET, outside)
    ds = allowed / "ds"
    shutil.copytree(TOY_DATASET, ds)
    clear_cache()
    yield allowed, ds, outside
    clear_cache()


def set_info(ds: Path, **fields) -> None:
    info_path = ds / "meta" / "info.json"
    info = json.loads(info_path.read_text())
    info.update(fields)
    info_path.write_text(json.dumps(info))


def relink(ds: Path, name: str, target: Path) -> None:
    shutil.rmtree(ds / name)
    (ds / name).symlink_to(target, target_is_directory=True)


V3_DATA = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
V3_VIDEO = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"


def _escapes(outside: Path) -> dict:
    rel = f"../../{outside.name}/"
    return {
        "data-path-dotdot": lambda ds: set_info(ds, data_path=rel + V3_DATA),
        "data-path-absolute": lambda ds: set_info(ds, data_path=str(outside / V3_DATA)),
        "data-path-home": lambda ds: set_info(ds, data_path="~/" + V3_DATA),
        "data-path-inner-dotdot": lambda ds: set_info(ds, data_path="data/../../../" + outside.name + "/" + V3_DATA),
        "video-path-dotdot": lambda ds: set_info(ds, video_path=rel + V3_VIDEO),
        "video-path-absolute": lambda ds: set_info(ds, video_path=str(outside / V3_VIDEO)),
        "data-symlink": lambda ds: relink(ds, "data", outside / "data"),
        "videos-symlink": lambda ds: relink(ds, "videos", outside / "videos"),
        "meta-symlink": lambda ds: relink(ds, "meta", outside / "meta"),
        "info-json-symlink": lambda ds: (
            (ds / "meta" / "info.json").unlink(),
            (ds / "meta" / "info.json").symlink_to(outside / "meta" / "info.json"),
        ),
        "episodes-chunk-symlink": lambda ds: relink(ds, "meta/episodes", outside / "meta" / "episodes"),
        "data-file-symlink": lambda ds: (
            (ds / "data/chunk-000/file-000.parquet").unlink(),
            (ds / "data/chunk-000/file-000.parquet").symlink_to(outside / "data/chunk-000/file-000.parquet"),
        ),
        "video-file-symlink": lambda ds: (
            (ds / "videos/observation.images.cam_high/chunk-000/file-000.mp4").unlink(),
            (ds / "videos/observation.images.cam_high/chunk-000/file-000.mp4").symlink_to(
                outside / "videos/observation.images.cam_high/chunk-000/file-000.mp4"
            ),
        ),
    }


ESCAPES = sorted(_escapes(Path("x")))
TOOLS = [
    ("load_episode", {}),
    ("sample_frames", {"n_frames": 3, "include_images": True}),
    ("sample_frames", {"n_frames": 3, "include_images": False}),
]


@pytest.mark.parametrize("tool, extra", TOOLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(TOOLS)])
@pytest.mark.parametrize("escape", ESCAPES)
def test_metadata_pointing_outside_the_allowed_root_is_refused(layout, escape, tool, extra):
    allowed, ds, outside = layout
    _escapes(outside)[escape](ds)
    before = tree_hashes(allowed, outside)
    tools = make_judge_tools(roots=[allowed])
    result = getattr(tools, tool)(root=str(ds), episode=0, **extra)
    text = "\n".join(block.get("text", "") for block in result["content"])
    touches_tool = not (
        tool == "load_episode"
        and escape in {"data-symlink", "videos-symlink", "data-file-symlink", "video-file-symlink"}
    )
    touches_tool = touches_tool and not (
        escape in {"videos-symlink", "video-file-symlink"} and extra.get("include_images") is False
    )
    if touches_tool or escape.startswith(("data-path", "video-path")):
        assert result["status"] == "error", (escape, tool, text[:300])
        assert "Remedy" in text
        assert any(word in text for word in ("outside the allowed roots", "leads out of the dataset root")), text
    else:  # this tool never opens that file: it answers from files inside the root
        assert result["status"] == "success", text
    assert tree_hashes(allowed, outside) == before


@pytest.mark.parametrize("escape", [e for e in ESCAPES if e.startswith(("data-path", "video-path"))])
def test_the_reader_refuses_templates_that_leave_the_root(layout, escape):
    _allowed, ds, outside = layout
    _escapes(outside)[escape](ds)
    with pytest.raises(DatasetError, match="leads out of the dataset root"):
        open_dataset(ds)


def test_without_an_allow_list_a_symlink_into_a_system_directory_is_refused(layout, monkeypatch):
    _allowed, ds, _outside = layout
    monkeypatch.delenv("STRANDS_LABELS_ROOTS", raising=False)
    (ds / "meta" / "extra.jsonl").symlink_to("/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd")
    result = make_judge_tools().load_episode(root=str(ds), episode=0)
    assert result["status"] == "error"
    assert "system directory" in result["content"][0]["text"]


def test_symlinks_that_stay_inside_the_allowed_roots_are_fine(layout):
    allowed, ds, _outside = layout
    store = allowed / "store"
    shutil.move(ds / "data", store)
    (ds / "data").symlink_to(store, target_is_directory=True)
    result = make_judge_tools(roots=[allowed]).sample_frames(root=str(ds), episode=0, n_frames=2, include_images=True)
    assert result["status"] == "success", result["content"][0]["text"]


def test_a_file_inside_the_allowed_roots_is_its_realpath(tmp_path):
    """check_file_inside returns realpath's answer for a file inside, and refuses one whose realpath is outside."""
    from strands_robots.errors import UnsafeRootError
    from strands_robots.tools.root_safety import check_file_inside

    root = tmp_path / "allowed" / "ds"
    outside = tmp_path / "outside"
    (root / "data" / "chunk-000").mkdir(parents=True)
    (root / "plain").mkdir()
    (outside / "chunk-000").mkdir(parents=True)
    (root / "data" / "chunk-000" / "file-000.parquet").write_bytes(b"x")
    (outside / "chunk-000" / "file-000.parquet").write_bytes(b"y")
    (root / "inner").symlink_to(root / "plain")  # a symlink that stays inside
    (root / "data" / "chunk-001").symlink_to(outside / "chunk-000")  # one that leads out
    (root / "plain" / "leaf.parquet").symlink_to(outside / "chunk-000" / "file-000.parquet")
    cases = [
        root / "data" / "chunk-000" / "file-000.parquet",
        root / "data" / "chunk-000" / "missing.parquet",
        root / "missing" / "deeper" / "file.parquet",
        root / "inner" / "file.parquet",
        root / "data" / "chunk-001" / "file-000.parquet",
        root / "plain" / "leaf.parquet",
        f"{root}/data/./chunk-000/file-000.parquet",
        f"{root}/data/chunk-000/../chunk-001/file-000.parquet",
        f"{root}/data//chunk-000/file-000.parquet",
    ]
    allowed = [tmp_path / "allowed"]
    for path in cases:
        real = os.path.realpath(path)
        if real.startswith(str(allowed[0]) + os.sep):
            assert check_file_inside(path, root, allowed, "x") == real, path
        else:
            with pytest.raises(UnsafeRootError, match="outside the allowed roots"):
                check_file_inside(path, root, allowed, "x")


def _age(ds: Path, seconds: float = 60.0) -> None:
    """Date every directory and file of ``ds`` back (a dataset written a while ago)."""
    past = time.time() - seconds
    for path in [ds, *ds.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)


@pytest.mark.parametrize("escape", ESCAPES)
def test_a_remembered_root_is_checked_again_when_its_metadata_changes(layout, escape):
    """The per-root check is remembered only while nothing in it changed: the same escapes,
    made after a first successful call, are refused exactly as on a first call."""
    allowed, ds, outside = layout
    _age(ds)
    tools = make_judge_tools(roots=[allowed])
    first = tools.sample_frames(root=str(ds), episode=0, n_frames=3, include_images=True)
    assert first["status"] == "success"  # remembered: the next call stats instead of resolving
    _escapes(outside)[escape](ds)
    clear_cache()
    before = tree_hashes(allowed, outside)
    result = tools.sample_frames(root=str(ds), episode=0, n_frames=3, include_images=True)
    text = "\n".join(block.get("text", "") for block in result["content"])
    assert result["status"] == "error", (escape, text[:300])
    assert any(word in text for word in ("outside the allowed roots", "leads out of the dataset root")), text
    assert tree_hashes(allowed, outside) == before


def test_a_root_whose_path_is_swapped_for_a_symlink_is_checked_again(layout, tmp_path):
    allowed, ds, outside = layout
    parent = allowed / "sets"
    parent.mkdir()
    shutil.move(ds, parent / "ds")
    ds = parent / "ds"
    _age(ds)
    tools = make_judge_tools(roots=[allowed])
    assert tools.load_episode(root=str(ds), episode=0)["status"] == "success"
    shutil.move(parent, tmp_path / "moved")
    (tmp_path / "elsewhere").mkdir()
    shutil.copytree(outside, tmp_path / "elsewhere" / "ds")
    _age(tmp_path / "elsewhere" / "ds")
    parent.symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # the same text now leads outside
    result = tools.load_episode(root=str(ds), episode=0)
    assert result["status"] == "error" and "outside the allowed roots" in result["content"][0]["text"]
