"""Episode leases: two judge runs on one dataset never judge the same episode at once.

A lease is an exclusive ``flock`` (:func:`strands_robots.storage.lock.flock_file`, taken
without waiting) on a small file per episode in the labels directory (:func:`strands_robots.storage.side_files.lease_path`).
A run takes an episode's lease before judging it and gives it back once the label is
written; a run that finds the lease held skips the episode (another run is judging it).
The operating system drops a lock when its holder dies, so the lease of a killed run
expires with it (on a local file system; over NFS ``flock`` is only as good as the mount).
docs/judge.md, "Two runs on one dataset".

Lease files follow the rule of every derived file (docs/architecture.md, "One store
contract"): the state folder and its ``leases/`` folder are created only where no symbolic
link stands, and the lease file is opened ``O_NOFOLLOW``, so a link
planted at any of the three names is refused by name and nothing outside the root is
created or written.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from strands_robots.errors import StorageError
from strands_robots.storage import state_dir
from strands_robots.storage.lock import flock_file
from strands_robots.storage.side_files import LEASES, lease_path


class EpisodeLeases:
    """The leases one run holds in one labels directory (thread-safe).

    Args:
        directory: The directory of the label sidecar (the dataset root or ``labels_dir``).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._held: dict[int, int] = {}  # episode: the descriptor holding its flock
        self._mutex = threading.Lock()

    def take(self, episode: int) -> bool:
        """Take ``episode``'s lease without waiting.

        Returns:
            True when this run now holds it (or already did); False when another run does.

        Raises:
            StorageError: the lease file cannot be created (a read-only labels directory).
            SidecarError: a symbolic link stands where the state folder, the ``leases``
                folder or the lease file goes (nothing is created through it).
        """
        with self._mutex:
            if episode in self._held:
                return True
        path = lease_path(self.directory, episode)
        try:
            state_dir.ensure(self.directory, LEASES)
            fd = flock_file(path, deadline=0)
        except TimeoutError:
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the lease is opened O_NOFOLLOW: a link stands there
                raise state_dir.refuse_link(path) from exc
            raise StorageError(
                f"cannot take the lease of episode {episode} at {path} ({exc}); the labels directory must be "
                "writable (use --labels-dir for a read-only dataset)."
            ) from exc
        with self._mutex:
            self._held[episode] = fd
        return True

    def take_all(self, episodes: Iterable[int]) -> tuple[list[int], list[int]]:
        """``(taken, held elsewhere)`` of taking each of ``episodes`` in turn."""
        taken: list[int] = []
        elsewhere: list[int] = []
        for episode in episodes:
            (taken if self.take(episode) else elsewhere).append(episode)
        return taken, elsewhere

    def give_back(self, episodes: Iterable[int]) -> None:
        """Release the leases of ``episodes`` this run holds (others are ignored)."""
        for episode in episodes:
            with self._mutex:
                fd = self._held.pop(episode, None)
            if fd is not None:
                os.close(fd)

    def give_back_all(self) -> None:
        """Release every lease this run holds (the end of a run, also after Ctrl-C)."""
        self.give_back(self.held)

    @property
    def held(self) -> list[int]:
        """The episodes whose lease this run holds, sorted."""
        with self._mutex:
            return sorted(self._held)
