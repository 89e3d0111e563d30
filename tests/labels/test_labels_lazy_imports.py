"""The label API imports no heavy module until an operation needs it.

Importing ``strands_robots.episode_labels`` and working on a labels-only directory (no
LeRobot ``meta/``) must not load the dataset reader's libraries (pyarrow, PyAV, Pillow),
the agents SDK, or numpy for writes; each costs tens of MB and milliseconds per process.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pyarrow", "av", "PIL", "strands", "numpy")


def _loaded_after(code: str, cwd) -> dict[str, bool]:
    script = f"import sys, json\n{code}\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_heavy_module(tmp_path):
    assert _loaded_after("import strands_robots.episode_labels", tmp_path) == dict.fromkeys(HEAVY, False)


def test_writes_and_reads_without_meta_load_no_heavy_module(tmp_path):
    code = (
        "import strands_robots.episode_labels as el\n"
        f"root = {str(tmp_path)!r}\n"
        "el.record_deterministic_verdicts(root, [{'episode': 0, 'success': True}, {'episode': 1, 'success': False}])\n"
        "el.annotate_episode(root, 0, quality='high', model='m')\n"
        "assert el.read_labels(root)['episodes']['0']['judge']['quality'] == 'high'\n"
    )
    assert _loaded_after(code, tmp_path) == dict.fromkeys(HEAVY, False)


def test_filter_without_meta_loads_only_numpy(tmp_path):
    code = (
        "import strands_robots.episode_labels as el\n"
        f"root = {str(tmp_path)!r}\n"
        "el.record_deterministic_verdicts(root, [{'episode': 0, 'success': True}, {'episode': 1, 'success': True}])\n"
        "el.annotate_episode(root, 1, quality='high', model='m')\n"
        "assert el.filter_episodes(root) == [1]\n"
    )
    loaded = _loaded_after(code, tmp_path)
    assert {m for m, present in loaded.items() if present} <= {"numpy"}


def test_stale_checks_beside_meta_load_no_video_library(toy_dataset):
    code = (
        "import strands_robots.episode_labels as el\n"
        f"root = {str(toy_dataset)!r}\n"
        "el.record_deterministic_verdicts(root, [{'episode': 0, 'success': True}, {'episode': 1, 'success': True}])\n"
        "el.annotate_episode(root, 1, quality='high', model='m')\n"
        "assert el.filter_episodes(root) == [1]\n"
        "assert el.stale_episodes(root) == {}\n"
    )
    loaded = _loaded_after(code, toy_dataset)
    assert not loaded["av"] and not loaded["PIL"] and not loaded["strands"]
