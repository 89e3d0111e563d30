"""The lerobot environment the round-trip tests run lerobot's own code in (tests/lerobot_env.py)."""

from __future__ import annotations

import pytest

from tests.lerobot_env import REPO, LerobotError


def test_it_runs_lerobot_0_6_1_not_this_repository(lerobot):
    info = lerobot(
        """
        import importlib.metadata as m, lerobot
        from lerobot.datasets.language import LANGUAGE_PERSISTENT
        emit({"version": m.version("lerobot"), "file": lerobot.__file__, "column": LANGUAGE_PERSISTENT,
              "arg": ARGS["x"]})
        """,
        x=[1, "two"],
    )
    assert info["version"] == "0.6.1"
    assert "site-packages" in info["file"] and not info["file"].startswith(str(REPO / "lerobot"))
    assert info["column"] == "language_persistent"
    assert info["arg"] == [1, "two"]


def test_a_failing_script_raises_with_its_stderr(lerobot):
    with pytest.raises(LerobotError, match="ZeroDivisionError"):
        lerobot("1 / 0")
