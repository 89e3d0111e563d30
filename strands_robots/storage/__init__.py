"""Durability primitives shared by every sidecar: lock, atomic write, journal.

- :mod:`.atomic`: refuse symlink/directory targets, write-temp-fsync-replace.
- :mod:`.lock`: the inter-process lock beside each sidecar.
- :mod:`.codec`: the canonical JSON encoding (sorted keys, indent 2, UTF-8, no NaN).
- :mod:`.jsonl`: fsynced append-only JSON Lines with torn-tail recovery.
- :mod:`.record_store`: a JSON document of per-episode records with an O(1)
  journal folded into the canonical file (used by ``episode_labels`` and ``segments``).
- :mod:`.textfile`: the one reader of a text file a person names (a label set, a CLI
  JSON argument), with one typed error per way the read fails.
"""
