"""Per-episode dataset fingerprints that detect renumbered episodes (every label store).

- :mod:`.rule`: the keys and the stale rule (which stored value no longer matches, and why);
- :mod:`.columns`: the reader of the dataset's fingerprint columns (:class:`~.columns.Fingerprinter`;
  it loads pyarrow and numpy, so it is imported from there, on use);
- :mod:`.digest`: the digest of the metadata files a fingerprint's ``meta`` names;
- :mod:`.stale`: the stale check every label store calls (:func:`stale_records`).

Rules: ``docs/sidecar-format.md``, ``fingerprint``.
"""

from strands_robots.fingerprint.digest import metadata_digest
from strands_robots.fingerprint.rule import IDENTITY_KEYS, META_KEY, stale_reason
from strands_robots.fingerprint.stale import stale_records

__all__ = [
    "IDENTITY_KEYS",
    "META_KEY",
    "metadata_digest",
    "stale_reason",
    "stale_records",
]
