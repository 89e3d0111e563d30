"""Per-episode dataset fingerprints of label records (the rules live in
:mod:`strands_robots.fingerprint`, shared by every label store)."""

from strands_robots.fingerprint import (
    IDENTITY_KEYS,
    Fingerprinter,
    has_dataset_metadata,
    open_dataset_for_checks,
    open_dataset_if_present,
)

__all__ = [
    "IDENTITY_KEYS",
    "Fingerprinter",
    "has_dataset_metadata",
    "open_dataset_for_checks",
    "open_dataset_if_present",
]
