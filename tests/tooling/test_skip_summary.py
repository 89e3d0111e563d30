"""``make test`` says why tests were skipped: one closing line per cause, with the remedy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_run_without_the_shared_datasets_says_so_and_how_to_point_at_them(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/ssc/test_ssc_template_sets.py::test_ssc_build_and_check_on_a_generic_segmentation",
         "tests/ssc/test_ssc_template_sets.py::test_ssc_check_on_a_label_set_of_your_own"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "STRANDS_LABELS_SHARED": str(tmp_path / "nowhere")},
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    expected = (
        f"2 tests skipped: the shared datasets are not at {tmp_path / 'nowhere' / 'datasets'}: set "
        "STRANDS_LABELS_SHARED=/path/to/shared (the folder holding datasets/; README.md, 'Tests')"
    )
    assert expected in done.stdout
    assert "STRANDS_LABELS_SHARED" in (REPO / "README.md").read_text(encoding="utf-8")
