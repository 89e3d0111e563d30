"""Run a check as a new process would: in a forked child.

A forked child starts with empty store registries (``storage/registry.py``: no store
instance, no cached document, its own file locks), so what it reads comes from the files,
as in a process started later. Tests use it instead of emptying a module's private caches.
"""

from __future__ import annotations

import os
import pickle
import traceback
import warnings
from collections.abc import Callable
from typing import Any


class ChildFailed(AssertionError):
    """The check raised in the child; the message is the child's traceback."""


def in_new_process(check: Callable[[], Any]) -> Any:
    """``check()`` run in a forked child; returns its (picklable) result.

    Raises:
        ChildFailed: ``check`` raised (the child's traceback is the message) or the child
            died without answering.
    """
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a threaded process
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which answers through the pipe
        os.close(read_end)
        try:
            answer = (True, check())
        except BaseException:
            answer = (False, traceback.format_exc())
        try:
            data = pickle.dumps(answer)
        except Exception:
            data = pickle.dumps((False, "the result of the check cannot be pickled:\n" + traceback.format_exc()))
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as source:
        data = source.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise ChildFailed(f"the child exited with status {os.waitstatus_to_exitcode(status)} without answering")
    ok, value = pickle.loads(data)
    if not ok:
        raise ChildFailed(value)
    return value
