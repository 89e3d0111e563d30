"""docs/editing.md's lerobot round trips run as written: each bash block that calls
``lerobot-edit-dataset`` runs, word for word, with lerobot 0.6.1's own console script and this
project's ``strands-labels``, on a labelled copy of a shared dataset (``ROOT``; ``A`` and ``B``
for the merge: two datasets lerobot splits from it). Afterwards every episode of every dataset
the block remaps holds the label of the recording lerobot reads in it (length and
``observation.state`` rows), no label sits on another recording, and the block's remap
commands run again print ``already applied``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from tests.conftest import shared_dataset_path, writable_copy
from tests.docs.test_snippets import blocks_of
from tests.edits.test_lerobot_edits import DATASET, IDENT
from tests.lerobot_env import LEROBOT_PYTHON

DOC = Path(__file__).resolve().parents[2] / "docs" / "editing.md"
MARK = "tests/edits/test_editing_doc.py runs it"
BLOCKS = [b for b in blocks_of(DOC) if MARK in b["marker"]]

IDENTS = (
    IDENT
    + """
emit({name: ident(root) for name, root in ARGS["roots"].items()})
"""
)
#: Two datasets with the shared dataset's features and different recordings (merge's A and B).
PARTS = """
from lerobot.datasets import dataset_tools as T
from lerobot.datasets.lerobot_dataset import LeRobotDataset
W = Path(ARGS["work"])
for name, part in T.split_dataset(LeRobotDataset("local/src", root=W / "src"), {"a": [0, 2], "b": [1, 3]},
                                  output_dir=W / "parts").items():
    part.root.rename(W / name.upper())
"""


def test_every_lerobot_block_is_run_or_says_why_not():
    lerobot_blocks = [b for b in blocks_of(DOC) if "lerobot-edit-dataset " in b["body"]]
    operations = {re.search(r"--operation\.type (\w+)", b["body"])[1] for b in BLOCKS}
    assert operations == {"delete_episodes", "split", "modify_tasks", "merge", "remove_feature"}
    assert all(MARK in b["marker"] or "needs" in b["marker"] for b in lerobot_blocks)


def _label(root: Path, name: str) -> list[str]:
    """Label every episode of ``root`` with a note naming its recording (``name e``)."""
    total = json.loads((root / "meta/info.json").read_text())["total_episodes"]
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(total)])
    notes = [f"{name} {e}" for e in range(total)]
    for e, note in enumerate(notes):
        el.annotate_episode(root, e, quality="high", note=note)
    return notes


def _recording(found: dict) -> tuple:
    return found["length"], found["state"], found["rows"]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"line{b['line']}")
def test_the_round_trip_runs_as_written(lerobot, tmp_path: Path, block: dict) -> None:
    shared = shared_dataset_path(DATASET)
    work = tmp_path / "work"
    work.mkdir()
    body = block["body"]
    sources: dict[str, Path] = {}
    if "MERGED" in body:
        writable_copy(shared, work / "src")
        lerobot(PARTS, work=str(work), timeout=900)
        sources = {"a": work / "A", "b": work / "B"}
        body = re.sub(r"\bA\b", str(work / "A"), re.sub(r"\bB\b", str(work / "B"), body))
        body = body.replace("MERGED", str(work / "merged"))
    else:
        sources = {"src": writable_copy(shared, work / "ds")}
        body = body.replace("ROOT", str(work / "ds"))
    notes = {name: _label(root, name) for name, root in sources.items()}
    before = lerobot(IDENTS, roots={name: str(root) for name, root in sources.items()})
    recordings = {f"{name} {e}": _recording(found) for name in sources for e, found in before[name].items()}

    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "HF_"))}
    env.update(
        PATH=os.pathsep.join([str(bindir), str(LEROBOT_PYTHON.parent), env.get("PATH", "")]),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),
        HF_LEROBOT_HOME=str(tmp_path / "hf-lerobot"),
    )
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, f"{DOC.name}:{block['line']}:\n{body}\n{done.stdout}\n{done.stderr[-4000:]}"

    remaps = re.findall(r"^strands-labels remap .*$", body, re.M)
    targets = [  # as the shell expands them ("${HF_LEROBOT_HOME:-...}/local/ds": lerobot's cache)
        Path(subprocess.run(["bash", "-c", f"printf %s {word}"], env=env, capture_output=True, text=True).stdout)
        for word in (re.match(r"strands-labels remap (\S+)", line)[1] for line in remaps)
    ]
    assert all(t.is_dir() for t in targets), targets
    after = lerobot(IDENTS, roots={str(t): str(t) for t in targets})
    carried = 0
    for target in targets:
        labelled = {int(k): r["judge"]["note"] for k, r in el.read_labels(target)["episodes"].items()}
        for episode, found in after[str(target)].items():
            holds = [note for note, rec in recordings.items() if rec == _recording(found)]
            assert len(holds) == 1, (target, episode, holds)  # the shared dataset's recordings differ
            assert labelled.get(int(episode)) == holds[0], (target, episode, labelled)
        assert set(labelled) == {int(e) for e in after[str(target)]}  # no label on an episode it does not have
        assert el.stale_episodes(target) == {}
        carried += len(labelled)
    assert carried == {"delete_episodes": 3}.get(re.search(r"--operation\.type (\w+)", body)[1], 4)
    for line in remaps:  # the same commands again change nothing
        again = subprocess.run(
            ["bash", "-e", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        assert again.returncode == 0 and "already applied" in again.stdout, (line, again.stdout, again.stderr)
    for name, root in sources.items():  # the sources keep their labels (moved to ROOT_old when edited in place)
        moved = root.with_name(root.name + "_old")
        kept = moved if moved.exists() else root
        assert [r["judge"]["note"] for r in el.read_labels(kept)["episodes"].values()] == notes[name]
    shutil.rmtree(tmp_path / "hf", ignore_errors=True)
