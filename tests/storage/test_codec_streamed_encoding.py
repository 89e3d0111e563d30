"""The canonical file is streamed to disk in chunks: the same bytes as one encode.

``iter_canonical`` yields ``dump_canonical``'s bytes in pieces and
``atomic_write_chunks`` writes them as they come, so a large sidecar is never held as
one string plus its UTF-8 copy. These tests hold the streamed bytes to the one-shot
encoding (which is what the other implementation's files are compared against) and
check that an error in the middle of the stream changes nothing on disk.
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots import episode_labels as el
from strands_robots.errors import LabelValidationError
from strands_robots.storage.atomic import atomic_write_chunks
from strands_robots.storage.codec import dump_canonical, iter_canonical
from tests.storage import store_helpers

json_values = store_helpers.json_values(max_leaves=30)


def _python(document) -> bytes:
    """What the canonical form is defined as: Python's own indented encoder."""
    return (json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


@settings(max_examples=400, deadline=None)
@given(document=json_values)
def test_the_encoding_is_pythons_indented_encoding(document):
    assert dump_canonical(document) == _python(document)


documents = st.fixed_dictionaries(
    {
        "schema_version": st.just(1),
        "benchmark": st.text(max_size=5),
        "episodes": st.dictionaries(st.text(max_size=4), json_values, max_size=12),
    },
    optional={"zz": json_values, "": json_values},
)


@settings(max_examples=300, deadline=None)
@given(document=documents, batch=st.sampled_from([1, 2, 5, 1000]))
def test_streamed_chunks_are_the_one_shot_encoding(document, batch):
    chunks = list(iter_canonical(document, batch))
    assert b"".join(chunks) == _python(document)
    if len(document["episodes"]) > batch:
        assert len(chunks) >= len(document["episodes"]) // batch


def test_a_large_document_comes_in_bounded_chunks():
    document = {
        "benchmark": "b",
        "episodes": {str(i): {"episode_index": i, "note": "caf\u00e9 " * 10, "x": [{}, []]} for i in range(5000)},
        "schema_version": 1,
    }
    chunks = list(iter_canonical(document, 100))
    assert len(chunks) > 50
    assert max(len(c) for c in chunks) < 100 * 200
    assert b"".join(chunks) == _python(document)


@pytest.mark.parametrize(
    ("bad", "message"),
    [(math.nan, "NaN or infinite"), (math.inf, "NaN or infinite"), ("\ud800", "not valid Unicode")],
)
def test_an_error_mid_stream_leaves_the_file_and_directory_as_they_were(tmp_path, bad, message):
    target = tmp_path / "episode_labels.json"
    target.write_bytes(b"old\n")
    records = {str(i): {"note": "x" * 100} for i in range(50)}
    records["9999"] = {"value": bad}  # the bad value comes after several chunks
    with pytest.raises(LabelValidationError, match=message):
        atomic_write_chunks(target, iter_canonical({"episodes": records}, 4))
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".strands-labels", "episode_labels.json"]
    assert list((tmp_path / ".strands-labels").iterdir()) == []  # no temp file left


def test_the_digest_returned_is_the_file_written(tmp_path):
    target = tmp_path / "f.json"
    digest = atomic_write_chunks(target, iter_canonical({"k": {str(i): i for i in range(1000)}}, 100))
    assert digest == hashlib.sha256(target.read_bytes()).hexdigest()


def test_a_written_sidecar_is_the_one_shot_encoding_of_what_reads_back(tmp_path):
    verdicts = [{"episode": i, "success": i % 2 == 0, "cumulative_reward": i / 7, "seed": i} for i in range(3000)]
    el.record_deterministic_verdicts(tmp_path, verdicts, benchmark="b\u00e9nch")
    el.flush(tmp_path)
    data = (tmp_path / "episode_labels.json").read_bytes()
    assert data == dump_canonical(json.loads(data))
