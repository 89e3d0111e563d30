"""The metadata change stamp (strands_robots.dataset.cache) and content digest (strands_robots.fingerprint.digest)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from strands_robots.dataset.cache import metadata_files, metadata_signature
from strands_robots.fingerprint import digest as signature
from strands_robots.fingerprint.digest import metadata_digest
from tests.synth import make_v3_dataset, make_v21_dataset


@pytest.fixture(params=["v3.0", "v2.1"])
def dataset(request, tmp_path):
    make = make_v3_dataset if request.param == "v3.0" else make_v21_dataset
    return make(tmp_path / "ds", [5, 7, 3])


def test_the_digest_survives_a_copy_and_a_touch_the_signature_does_not(dataset, tmp_path):
    copy = shutil.copytree(dataset, tmp_path / "copy")
    for path in metadata_files(copy):
        if os.path.exists(path):
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    digest = metadata_digest(dataset)
    assert digest is not None and len(digest) == 16 and int(digest, 16) >= 0
    assert metadata_digest(copy) == digest
    assert metadata_signature(copy) != metadata_signature(dataset)


def test_every_metadata_file_and_its_name_count(dataset):
    before = metadata_digest(dataset)
    files = [path for path in metadata_files(dataset) if os.path.exists(path)]
    assert len(files) >= 2  # info.json and the episodes file(s)
    for path in files:
        data = Path(path).read_bytes()
        with open(path, "ab") as handle:
            handle.write(b" ")
        assert metadata_digest(dataset) != before, path
        with open(path, "wb") as handle:
            handle.write(data)
        assert metadata_digest(dataset) == before
    # the same bytes under another name are other metadata
    renamed = files[-1] + ".parquet" if files[-1].endswith(".parquet") else files[-1].replace(".jsonl", "_x.jsonl")
    os.rename(files[-1], renamed)
    assert metadata_digest(dataset) != before


def test_no_metadata_has_no_digest(tmp_path):
    assert metadata_digest(tmp_path) is None
    (tmp_path / "meta").mkdir()
    assert metadata_digest(tmp_path) is None


def test_an_unreadable_metadata_file_gives_no_digest(dataset):
    info = dataset / "meta" / "info.json"
    info.unlink()
    info.mkdir()  # a directory where the file should be: it cannot be read
    assert metadata_digest(dataset) is None


def test_a_listed_file_that_cannot_be_opened_gives_no_digest(dataset, tmp_path):
    # a dangling symlink is listed (the dataset reader's glob lists it too, and refuses it)
    folder = dataset / "meta" / "episodes" / "chunk-000"
    link = (folder if folder.is_dir() else dataset / "meta") / "file-009.parquet"
    before = metadata_digest(dataset)
    os.symlink(tmp_path / "nowhere.parquet", link)
    assert str(link) in metadata_files(dataset)
    assert metadata_digest(dataset) is None
    link.unlink()
    assert metadata_digest(dataset) == before


def test_other_fingerprint_rules_give_another_digest(dataset, monkeypatch):

    before = metadata_digest(dataset)
    monkeypatch.setattr(signature, "FINGERPRINT_RULES", signature.FINGERPRINT_RULES + 1)
    assert metadata_digest(dataset) not in (before, None)  # labels tagged under the old rules are read again


def test_unchanged_metadata_is_not_read_again(dataset, monkeypatch):
    """A judge checks the digest once per episode: reading every metadata file each time made a
    10,000-episode run quadratic (docs/judge.md, "Throughput (synthetic, 10,000 episodes)")."""
    reads = []
    file_digest = signature.hashlib.file_digest
    monkeypatch.setattr(
        signature.hashlib, "file_digest", lambda handle, name: reads.append(handle.name) or file_digest(handle, name)
    )
    before = metadata_digest(dataset)
    files = len(reads)
    assert files >= 2
    assert [metadata_digest(dataset) for _ in range(3)] == [before] * 3
    assert len(reads) == files  # nothing read again
    info = dataset / "meta" / "info.json"
    info.write_bytes(info.read_bytes() + b" ")  # an edit: read again, another digest
    assert metadata_digest(dataset) not in (before, None)
    assert len(reads) == 2 * files
