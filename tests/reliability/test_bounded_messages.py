"""Bounded messages (docs/architecture.md, "One store contract"): a message quotes at most
``QUOTE_CHARS`` characters of an input, and every entry point bounds what it shows."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots import outcomes as oc
from strands_robots import segments as sg
from strands_robots.errors import (
    MESSAGE_CHARS,
    QUOTE_CHARS,
    DatasetError,
    LabelsError,
    bounded_message,
    clipped,
    quoted,
)
from tests.conftest import toy_copy


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


def test_the_cli_prints_a_bounded_error(toy_dataset, monkeypatch, capsys):
    from strands_robots.cli.main import run

    root = toy_dataset
    monkeypatch.setattr(sys, "argv", ["strands-labels", "info", f"{root}@{'r' * 100_000}"])
    with pytest.raises(SystemExit) as exited:
        run()
    assert exited.value.code != 0
    err = capsys.readouterr().err
    assert "error:" in err and "r" * (QUOTE_CHARS + 1) not in err.replace("\n", "")
    assert len(err) <= MESSAGE_CHARS + 200


# --- every surface, with inputs far longer than a message may quote ---------------------------------

LONG = "q" * 50_000
DIGITS = "9" * 50_000


def _assert_bounded(text: str) -> None:
    """At most ~QUOTE_CHARS characters of any one input (no longer run of one character) and
    at most about MESSAGE_CHARS characters in all (plus a usage line)."""
    longest_run = max((len(m.group()) for m in re.finditer(r"(.)\1*", text)), default=0)
    assert longest_run <= QUOTE_CHARS, (longest_run, text[:300])
    assert len(text) <= MESSAGE_CHARS + 600, (len(text), text[:300])


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    root = toy_copy(tmp_path_factory.mktemp("bounded") / "ds")
    el.record_deterministic_verdicts(root, [{"episode": e, "success": e != 1} for e in range(3)])
    el.flush(root)
    return root


CLI_REFUSALS = {
    "choice option": ["annotate", "{ds}", "0", "--quality", LONG],
    "choice option, failure mode": ["annotate", "{ds}", "0", "--quality", "high", "--failure-mode", LONG],
    "choice option, filter": ["filter", "{ds}", "--min-quality", LONG],
    "choice option, decision": ["resolve", "{ds}", "0", "--decision", LONG, "--reviewer", "a"],
    "extra argument": ["outcome", "set", "{ds}", "0", LONG],
    "unknown option": ["filter", "{ds}", "--" + LONG],
    "unknown command": [LONG],
    "unknown subcommand": ["segments", LONG],
    "number argument": ["show", "{ds}", DIGITS],
    "feature name": ["verdicts", "{ds}", "--from-column", LONG],
    "model spec": ["judge", "{ds}", "--model", LONG],
    "episode list": ["judge", "{ds}", "--episodes", LONG],
    "host": ["review", "{ds}", "--host", LONG, "--port", "0"],
    "revision": ["info", "{ds}@" + LONG],
}


@pytest.mark.parametrize("argv", CLI_REFUSALS.values(), ids=CLI_REFUSALS.keys())
def test_every_cli_refusal_quotes_a_long_input_within_bounds(toy, monkeypatch, capsys, argv):
    """Usage errors (click's) and LabelsErrors alike, as the console script prints them."""
    from strands_robots.cli.main import run

    monkeypatch.setattr(sys, "argv", ["strands-labels", *(a.replace("{ds}", str(toy)) for a in argv)])
    with pytest.raises(SystemExit) as exited:
        run()
    assert exited.value.code not in (0, None)
    captured = capsys.readouterr()
    assert "rror" in captured.err and "Traceback" not in captured.err
    _assert_bounded(captured.err)
    _assert_bounded(captured.out)


API_REFUSALS = {
    "quality": lambda r: el.annotate_episode(r, 0, quality=LONG),
    "failure mode": lambda r: el.annotate_episode(r, 0, quality="high", failure_mode=LONG),
    "decision": lambda r: el.review_episode(r, 0, decision=LONG, reviewer="a"),
    "filter outcome": lambda r: el.filter_episodes(r, outcomes=[LONG]),
    "unknown key": lambda r: el.annotate_episodes(r, [{"episode": 0, "quality": "low", LONG: 1}]),
    "success": lambda r: el.record_deterministic_verdicts(r, [{"episode": 0, "success": LONG}]),
    "feature name": lambda r: el.verdicts_from_dataset(r, column=LONG),
    "outcome field": lambda r: oc.set_outcome(r, 0, outcome="expert_success", **{LONG: 1}),
    "segment label": lambda r: sg.save_segmentation(r, 0, [{"start": 0, "end": 90, "label": LONG}], annotator="a"),
    "template id": lambda r: sg.save_segmentation(
        r, 0, [{"start": 0, "end": 90, "template_id": LONG, "slots": {}}], annotator="a"
    ),
    "agreement key": lambda r: el.measure_agreement(r, {LONG: {"quality": "high"}}),
}


@pytest.mark.parametrize("call", API_REFUSALS.values(), ids=API_REFUSALS.keys())
def test_an_error_message_is_bounded_where_it_is_made(toy, call):
    """The Python API's own messages keep the rule, not only the entry points that show them."""
    with pytest.raises(LabelsError) as refused:
        call(toy)
    _assert_bounded(str(refused.value))


def test_every_labels_error_bounds_its_message_and_keeps_its_other_arguments():
    error = DatasetError("bad template " + "x" * 1_000_000 + "; use LeRobot's.", remedy="fix it")
    _assert_bounded(str(error))
    assert str(error).endswith("; use LeRobot's.") and error.remedy == "fix it"
    assert LabelsError("short", 5).args == ("short", 5)
    assert LabelsError(7).args == (7,)


@pytest.mark.parametrize("path", ["/api/segment/episodes/0", "/api/segment/episodes/0/check"])
def test_the_segment_page_answers_a_long_label_within_bounds(toy, path):
    """The whole answer, its findings included, not only its ``error``."""
    from tests.web.conftest import WRITE, client_for

    with client_for(toy) as client:
        response = client.post(path, json={"segments": [{"start": 0, "end": 90, "label": LONG}]}, headers=WRITE)
    assert response.status_code in (200, 422), response.text[:300]
    assert response.json()["findings"]
    _assert_bounded(response.text)
