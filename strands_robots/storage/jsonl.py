"""fsynced append-only JSON Lines with torn-tail recovery.

A line is written with one ``write`` and fsynced before the call returns, so a record
that returned is durable. A crash can leave only the last line torn (no newline or
invalid JSON): readers ignore it and the next append cuts it off first.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import msgspec

from strands_robots.storage.atomic import check_target, fsync_dir, storage_error
from strands_robots.storage.codec import dump_line, load_json_bytes


def read_jsonl(path: Path, *, offset: int = 0) -> tuple[list[Any], int]:
    """Read complete records from byte ``offset`` on.

    Returns:
        ``(records, end)``: the decoded records and the byte offset just after the last
        complete line (a torn tail is not counted, so appending resumes there).

    Raises:
        SidecarError: a complete (newline-terminated) line is not valid JSON.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return [], 0
    end = data.rfind(b"\n") + 1
    records = []
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if line.strip():
            try:
                records.append(msgspec.json.decode(line))
            except msgspec.DecodeError:  # re-decode strictly for the error message naming the line
                records.append(load_json_bytes(line, f"{path} (line {number} after byte {offset})"))
    return records, offset + end


def append_jsonl(path: Path, records: list[Any], *, valid_end: int | None = None) -> int:
    """Append ``records`` as lines and fsync; returns the new end offset.

    Args:
        path: The JSON Lines file (created if missing).
        records: JSON-serialisable objects.
        valid_end: Byte offset of the end of the last complete line, if known; any torn
            tail after it is cut off first. ``None`` finds it by reading the file.

    Raises:
        SidecarError: ``path`` is a symlink or a directory.
        StorageError: the append failed; the file is cut back to its previous end.
    """
    check_target(path)
    payload = b"".join(dump_line(r) for r in records)
    if valid_end is None:
        _, valid_end = read_jsonl(path)
    created = not path.exists()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    except OSError as exc:
        raise storage_error(exc, path, "open") from exc
    try:
        try:
            if os.fstat(fd).st_size != valid_end:
                os.ftruncate(fd, valid_end)
            os.lseek(fd, valid_end, os.SEEK_SET)
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fdatasync(fd)  # data and the size needed to read it back
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, valid_end)
            raise storage_error(exc, path, "append to") from exc
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)
    return valid_end + len(payload)
