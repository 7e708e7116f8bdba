"""What an unfinished build has embedded, kept beside the atlas so the next build resumes instead of starting over.

A build works on a private copy of the atlas (:func:`paperatlas.store.sqlite.atomic_rebuild`) that is thrown away
when the build is interrupted. The embeddings are the expensive part (minutes per ten thousand papers), so every
batch of vectors is also committed to ``.<atlas name>.resume`` (SQLite, next to the atlas) as soon as it is made,
keyed by the model and the hash of the embedded text. The next build of that atlas reads it like the atlas's own
embeddings, and a build that finishes deletes it. It holds only vectors (float32 bytes).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np


def resume_path(atlas: str | Path) -> Path:
    """The resume file of ``atlas``: ``.<name>.resume`` in the atlas's folder.

    Args:
        atlas: the atlas file.

    Returns:
        The path (it may not exist).
    """
    p = Path(atlas).resolve()
    return p.parent / f".{p.name}.resume"


class ResumeCache:
    """Vectors of an unfinished build: ``(model, content hash) -> (dim,) float32``.

    Args:
        atlas: the atlas file whose build this is (the cache is :func:`resume_path` of it).

    Raises:
        sqlite3.DatabaseError: never for a damaged resume file: it is deleted and started afresh.
    """

    def __init__(self, atlas: str | Path):
        self.path = resume_path(atlas)
        try:
            self.con = self._open()
        except sqlite3.DatabaseError:  # a damaged resume file only costs the vectors it held
            self.path.unlink(missing_ok=True)
            self.con = self._open()

    def _open(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, check_same_thread=False)
        con.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, content_hash TEXT NOT NULL, "
                    "vector BLOB NOT NULL, PRIMARY KEY (model, content_hash))")
        con.commit()
        return con

    def get(self, model: str) -> dict[str, np.ndarray]:
        """Every vector this cache holds for ``model``.

        Args:
            model: the embedding model's recorded name.

        Returns:
            ``content hash -> (dim,) float32`` (vectors of a wrong size for float32 are left out).
        """
        out = {}
        for h, blob in self.con.execute("SELECT content_hash, vector FROM vectors WHERE model = ?", (model,)):
            if isinstance(blob, bytes) and blob and len(blob) % 4 == 0:
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def add(self, model: str, hashes: list[str], vectors: np.ndarray) -> None:
        """Store one batch of vectors and commit at once (so a kill right after keeps them).

        Args:
            model: the embedding model's recorded name.
            hashes: the content hash of each row.
            vectors: ``(len(hashes), dim)`` float32.
        """
        self.con.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                             [(model, h, np.asarray(v, dtype=np.float32).tobytes())
                              for h, v in zip(hashes, vectors, strict=True)])
        self.con.commit()

    def __len__(self) -> int:
        return int(self.con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def discard(self) -> None:
        """Close and delete the file (the build finished: its vectors are in the atlas)."""
        self.con.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
