"""The digest of a dataset's metadata files that a fingerprint's ``meta`` names.

Equal digests mean byte-identical metadata read by the same rules, so the fingerprint
values read from it are unchanged: a stale check whose stored fingerprints all name the
current digest reads nothing more (:mod:`.stale`; ``docs/sidecar-format.md``, ``fingerprint``).
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Any

from strands_robots.dataset.cache import metadata_files, signature_of

#: The version of the rules that read fingerprint values from the metadata
#: (:mod:`strands_robots.fingerprint.columns`).
#: It is part of every metadata digest, so a fingerprint read by other rules is never taken
#: as matching: raise it with any change to the values those rules read from the same bytes.
FINGERPRINT_RULES = 1


def metadata_digest(root: str | Path) -> str | None:
    """16 hex digits of the sha256 of the metadata files' paths and bytes (those of
    :func:`strands_robots.dataset.cache.metadata_signature`), or None when there are none or one that is listed cannot
    be opened (a dangling symlink, a directory, a file removed meanwhile).

    Unlike the signature, it survives a copy of the dataset (``cp -r``, a Hub download):
    equal digests mean byte-identical metadata read by the same :data:`FINGERPRINT_RULES`,
    so the fingerprints read from it are unchanged (``docs/sidecar-format.md``,
    ``fingerprint``: ``meta``).

    The bytes are read again only when the list of files or their signature changed (the
    stamp the dataset cache trusts): a judge checks every episode, and reading all of a
    10,000-episode dataset's metadata each time made a run quadratic (docs/judge.md,
    "Throughput (synthetic, 10,000 episodes)").
    """
    root = os.path.abspath(root)
    files = tuple(metadata_files(root))
    return _digest(root, files, signature_of(files), FINGERPRINT_RULES)


@functools.lru_cache(maxsize=8)
def _digest(root: str, files: tuple[str, ...], signature: tuple[Any, ...], rules: int) -> str | None:
    digest = hashlib.sha256(b"fingerprint rules %d\n" % rules)
    meta = os.path.join(root, "meta")
    count = 0
    for path in files:
        try:
            with open(path, "rb") as handle:
                content = hashlib.file_digest(handle, "sha256").digest()
        except OSError:  # a dangling symlink too: the reader lists it and refuses it
            return None
        name = os.path.relpath(path, meta).encode("utf-8", "surrogateescape")
        digest.update(b"%d:%s:" % (len(name), name) + content)
        count += 1
    return digest.hexdigest()[:16] if count else None
