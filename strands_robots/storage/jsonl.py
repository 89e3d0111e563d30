"""fsynced append-only JSON Lines with torn-tail recovery.

A line is written with one ``write`` and fsynced before the call returns, so a record
that returned is durable. A crash can leave only the last line torn (no newline or
invalid JSON): readers ignore it and the next append cuts it off first.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import msgspec

from strands_robots.errors import SidecarError, StorageError
from strands_robots.storage.atomic import check_target, fsync_dir, storage_error
from strands_robots.storage.codec import dump_line, load_json_bytes


def read_jsonl(
    path: Path, *, offset: int = 0, bad_lines: list[tuple[int, bytes]] | None = None
) -> tuple[list[Any], int]:
    """Read complete records from byte ``offset`` on.

    Args:
        path: The JSON Lines file (missing = empty).
        offset: Byte offset of a line start to read from.
        bad_lines: When given, complete lines that are not valid JSON are skipped and
            appended here as ``(line_number, raw_bytes)`` instead of raising; the
            records returned are then ``(line_number, record)`` pairs.

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
    records: list[Any] = []
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if line.strip():
            try:
                record = msgspec.json.decode(line)
            except (msgspec.DecodeError, RecursionError):  # re-decode strictly for the message naming the line
                if bad_lines is not None:
                    bad_lines.append((number, line))
                    continue
                record = load_json_bytes(line, f"{path} (line {number} after byte {offset})")
            records.append((number, record) if bad_lines is not None else record)
    return records, offset + end


def _double_fault(exc: OSError, second: OSError, path: Path, fd: int, valid_end: int, payload: bytes) -> StorageError:
    """The append failed and cutting the file back failed too: say exactly what is stored.

    A write's records are one line when they must be stored together (see
    ``storage.journal``), so whatever reached the file is either every line of it
    or a torn last line that readers ignore and the next append cuts off.
    """
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, max(0, size - valid_end), valid_end) if size > valid_end else b""
    except OSError:
        tail = b""
    complete = tail[: tail.rfind(b"\n") + 1]
    lines = complete.count(b"\n")
    total = payload.count(b"\n")
    if not complete:
        stored = "none of the new records is stored (an incomplete last line, if any, is ignored by readers"
        stored += " and cut off by the next write)"
    elif complete == payload:
        stored = "all of the new records reached the file and are read back, but they are not confirmed durable"
    else:
        stored = f"{lines} of the {total} new lines reached the file and are read back"
    err = StorageError(
        f"could not append to {path}: {exc.strerror or exc}, and cutting it back failed too "
        f"({second.strerror or second}); {stored}. Check the file system (free disk space) and retry."
    )
    err.errno = exc.errno
    return err


def append_jsonl(path: Path, records: list[Any], *, valid_end: int | None = None) -> int:
    """Append ``records`` as lines and fsync; returns the new end offset.

    Args:
        path: The JSON Lines file (created if missing).
        records: JSON-serialisable objects.
        valid_end: Byte offset of the end of the last complete line, if known; any torn
            tail after it is cut off first. ``None`` finds it by reading the file.

    Raises:
        SidecarError: ``path`` is a symlink or a directory.
        LabelValidationError: a record holds NaN, infinity or text that is not valid Unicode;
            nothing was written.
        StorageError: the append failed; the file is cut back to its previous end.
    """
    return append_encoded(path, b"".join(dump_line(r) for r in records), valid_end=valid_end)[0]


def append_encoded(path: Path, payload: bytes, *, valid_end: int | None = None) -> tuple[int, os.stat_result]:
    """:func:`append_jsonl` of lines already encoded (each by :func:`~.codec.dump_line`).

    Args:
        path: The JSON Lines file (created if missing).
        payload: Complete lines, each ending in a newline.
        valid_end: As :func:`append_jsonl`.

    Returns:
        ``(end, stat)``: the new end offset, and the file's ``os.fstat`` after the fsync
        (its identity as this append left it).

    Raises:
        SidecarError, StorageError: as :func:`append_jsonl`.
    """
    try:  # never through a link; non-blocking: a FIFO put there cannot hang the open
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        check_target(path)  # a link, a directory or a FIFO is refused by name
        raise storage_error(exc, path, "open") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            check_target(path)
            raise SidecarError(f"{path} is not a regular file; move it away and retry.")
        if valid_end is None:
            _, valid_end = read_jsonl(path, bad_lines=[])
        after = _write_at(fd, path, payload, valid_end, st.st_size)
    finally:
        os.close(fd)
    if st.st_size == 0:  # (maybe) created by this append
        fsync_dir(path.parent)
    return valid_end + len(payload), after


def _write_at(fd: int, path: Path, payload: bytes, valid_end: int, size: int) -> os.stat_result:
    """Cut any torn tail past ``valid_end`` (``size``: the file's size now), write ``payload``
    there (``fd`` is opened ``O_APPEND``) and fsync; returns the file's ``fstat`` after. On an
    error the file is cut back to ``valid_end`` (or the error says what is stored)."""
    try:
        if size != valid_end:
            os.ftruncate(fd, valid_end)
        written = os.write(fd, payload)  # one call writes it all on a regular file
        if written < len(payload):
            view = memoryview(payload)[written:]
            while view:
                view = view[os.write(fd, view) :]
        os.fdatasync(fd)  # data and the size needed to read it back
        return os.fstat(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, valid_end)
        except OSError as second:
            raise _double_fault(exc, second, path, fd, valid_end, payload) from exc
        raise storage_error(exc, path, "append to") from exc
