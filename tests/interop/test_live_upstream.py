"""Round trips with strands-robots 0.5.3 itself, running in its own environment.

The other distribution ships a package of the same name, so it lives in a separate venv
(``make test`` creates ``.venv-upstream`` with ``strands-robots==0.5.3``; set
``STRANDS_LABELS_UPSTREAM_PYTHON`` to use another interpreter). Each step of the other
tool runs in a subprocess of that interpreter, in isolated mode from a directory outside
this repository, so it imports its own ``strands_robots``.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.episode_labels.document import open_store
from strands_robots.storage.side_files import conflicts_path, journal_path

REPO = Path(__file__).resolve().parents[2]
EPISODES = 4
UPSTREAM = Path(os.environ.get("STRANDS_LABELS_UPSTREAM_PYTHON", REPO / ".venv-upstream" / "bin" / "python"))

pytestmark = pytest.mark.skipif(
    not UPSTREAM.exists(),
    reason=f"no strands-robots 0.5.3 environment at {UPSTREAM} (make test creates .venv-upstream; "
    "or set STRANDS_LABELS_UPSTREAM_PYTHON)",
)


def upstream(root: Path, code: str) -> object:
    """Run ``code`` under 0.5.3 with ``e`` bound to its ``episode_labels``; return what it prints (JSON)."""
    script = "import json, strands_robots.episode_labels as e\nfrom pathlib import Path\n"
    script += f"root = Path({str(root)!r})\nEPISODES = {EPISODES}\n" + textwrap.dedent(code)
    done = subprocess.run(
        [str(UPSTREAM), "-I", "-c", script], cwd=root.parent, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_the_upstream_package_is_the_other_one(tmp_path):
    info = upstream(
        tmp_path,
        "import strands_robots, importlib.metadata as m\n"
        "print(json.dumps([strands_robots.__file__, m.version('strands-robots')]))",
    )
    assert info[1] == "0.5.3" and not info[0].startswith(str(REPO / "strands_robots"))


def journaled(root: Path) -> None:
    """Make this process journal every write to ``root`` (small files are written through)."""
    open_store(root).write_through_bytes = 0


def test_files_round_trip_both_ways_with_a_pending_journal(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    upstream(
        root,
        """
        e.record_deterministic_verdicts(root, [{"episode": i, "success": i % 2 == 0, "steps": 10 + i}
                                               for i in range(EPISODES)], benchmark="pick")
        e.annotate_episode(root, 0, quality="high", model="upstream-judge")
        """,
    )
    # 0.5.3 -> ours: the same document and the same training selection
    theirs = upstream(root, "print(json.dumps(e.read_labels(root)))")
    assert el.read_labels(root)["episodes"] == theirs["episodes"]
    assert el.filter_episodes(root, min_quality="medium") == [0]

    # ours writes while 0.5.3 rewrites the file under our pending journal
    journaled(root)
    el.annotate_episode(root, 1, quality="medium", failure_mode="near_miss", success_opinion=True, model="ours")
    journal = journal_path(root / "episode_labels.json")
    assert journal.exists()  # acknowledged, not yet folded: invisible to 0.5.3 until then
    assert upstream(root, "print(json.dumps(e.read_labels(root)['episodes']['1'].get('judge')))") is None
    upstream(root, 'e.annotate_episode(root, 2, quality="low", failure_mode="jerky_motion", model="upstream-judge")')

    document = el.read_labels(root)["episodes"]
    assert document["1"]["judge"]["quality"] == "medium" and document["1"]["judge"]["disputes_verdict"] is True
    assert document["2"]["judge"]["failure_mode"] == "jerky_motion"
    assert document["0"]["judge"]["model"] == "upstream-judge"
    el.flush(root)
    assert not journal.exists()
    assert not (conflicts_path(root / "episode_labels.json")).exists()

    # ours -> 0.5.3: it reads every label, both tools', and selects what we select
    answers = upstream(
        root,
        """
        doc = e.read_labels(root)["episodes"]
        print(json.dumps({
            "qualities": {k: (v.get("judge") or {}).get("quality") for k, v in sorted(doc.items())},
            "disputed": doc["1"]["judge"]["disputes_verdict"],
            "filter": e.filter_episodes(root, require_success=False, min_quality="low"),
            "clean": e.filter_episodes(root, require_success=False, min_quality="low", exclude_disputed=True),
        }))
        """,
    )
    assert {k: answers["qualities"][k] for k in "0123"} == {"0": "high", "1": "medium", "2": "low", "3": None}
    assert answers["disputed"] is True
    assert answers["filter"] == el.filter_episodes(root, require_success=False, min_quality="low") == [0, 1, 2]
    assert (
        answers["clean"]
        == el.filter_episodes(root, require_success=False, min_quality="low", exclude_disputed=True)
        == [0, 2]
    )


def test_a_record_both_tools_changed_is_kept_as_a_conflict_not_lost(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True, "steps": 5} for i in range(EPISODES)])
    journaled(root)
    el.annotate_episode(root, 0, quality="high", model="ours")
    assert (journal_path(root / "episode_labels.json")).exists()  # pending in our journal
    upstream(root, 'e.annotate_episode(root, 0, quality="low", failure_mode="other", model="upstream-judge")')
    judge = el.read_labels(root)["episodes"]["0"]["judge"]
    assert judge["model"] == "upstream-judge"  # the file's word stands for a real conflict
    el.flush(root)
    conflicts = (conflicts_path(root / "episode_labels.json")).read_text().splitlines()
    assert len(conflicts) == 1 and '"ours"' in conflicts[0]  # ours is kept beside it, not lost
    assert upstream(root, "print(json.dumps(e.read_labels(root)['episodes']['0']['judge']['quality']))") == "low"
