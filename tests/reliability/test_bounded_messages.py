"""Bounded messages (docs/architecture.md, "One store contract"): a message quotes at most
``QUOTE_CHARS`` characters of an input, and every entry point bounds what it shows."""

from __future__ import annotations

import shutil
import sys

import pytest

from strands_robots.errors import (
    MESSAGE_CHARS,
    QUOTE_CHARS,
    DatasetError,
    bounded_message,
    clipped,
    quoted,
)
from tests.conftest import TOY_DATASET


def test_quoted_is_repr_for_short_values_and_bounded_for_long_ones():
    assert quoted("lerobot/pusht") == "'lerobot/pusht'"
    assert quoted(42) == "42" and quoted([1, 2]) == "[1, 2]" and quoted({"a": None}) == "{'a': None}"
    long_text = quoted("x" * 1_000_000)
    assert len(long_text) <= QUOTE_CHARS and long_text.startswith("'xxx") and "..." in long_text
    assert quoted(10**5000) == "<an integer of about 5001 digits>"  # str() of it raises
    assert len(quoted([["y" * 500] * 50] * 50)) <= QUOTE_CHARS
    assert len(quoted({i: "z" * 300 for i in range(100)}, 60)) <= 60


def test_quoted_never_raises():
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert quoted(Hostile()).startswith("<Hostile instance at 0x")


def test_clipped_keeps_both_ends_of_a_path():
    path = "/data/" + "d" * 5000 + "/episode_labels.json"
    shown = clipped(path)
    assert len(shown) <= QUOTE_CHARS and shown.startswith("/data/ddd") and shown.endswith("episode_labels.json")
    assert clipped("short") == "short"


def test_bounded_message_keeps_the_remedy_at_the_end():
    message = "bad value " + "v " * 1_000_000 + "; fix the header."
    shown = bounded_message(DatasetError(message))
    assert len(shown) <= MESSAGE_CHARS and shown.endswith("; fix the header.") and "characters left out" in shown
    path = "/data/" + "p" * 100_000 + "/meta"  # a token longer than QUOTE_CHARS is clipped, the rest kept
    shown = bounded_message(f"{path} is not a dataset; pass the root.")
    assert (
        len(shown) < 2 * QUOTE_CHARS
        and shown.startswith("/data/ppp")
        and shown.endswith("/meta is not a dataset; pass the root.")
    )
    assert bounded_message("ok") == "ok"

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("Exceeds the limit (4300 digits)")

    assert bounded_message(Unprintable()) == "Unprintable"


def test_the_cli_prints_a_bounded_error(tmp_path, monkeypatch, capsys):
    if not (TOY_DATASET / "meta" / "info.json").is_file():
        pytest.skip("examples/toy_dataset is not built")
    from strands_robots.cli.main import run

    root = tmp_path / "ds"
    shutil.copytree(TOY_DATASET, root)
    monkeypatch.setattr(sys, "argv", ["strands-labels", "info", f"{root}@{'r' * 100_000}"])
    with pytest.raises(SystemExit) as exited:
        run()
    assert exited.value.code != 0
    err = capsys.readouterr().err
    assert "error:" in err and "r" * (QUOTE_CHARS + 1) not in err.replace("\n", "")
    assert len(err) <= MESSAGE_CHARS + 200
