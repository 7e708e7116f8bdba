"""What the evaluations share.

The error they raise when they cannot run, the install hint of the ``eval`` extra, and where the public gold data
(``../shared``) is found.
"""

from __future__ import annotations

from pathlib import Path

#: The install command of the optional packages the evaluations need (rouge-score, nltk, YAKE, KeyBERT, BERTopic).
EVAL_EXTRA = "pip install 'paperatlas[eval]'"
_REPO_ROOT = Path(__file__).resolve().parents[3]


class EvalUnavailable(RuntimeError):
    """An evaluation cannot run: an optional package or a gold file is missing or unreadable.

    The message says which one and, for a package, the install command; ``paperatlas eval`` shows it as its
    error message unchanged.
    """


def resolve_shared(rel: str) -> Path:
    """Find a file of the shared public data.

    Args:
        rel: Path inside ``shared/``, e.g. ``"data/paperlists/colm/colm2024.json.gz"``.

    Returns:
        ``../shared/<rel>`` relative to the working directory if it exists there, else ``shared/<rel>`` next to
        the repository root (the path may not exist; callers check).
    """
    cwd = Path.cwd().parent / "shared" / rel
    return cwd if cwd.exists() else _REPO_ROOT.parent / "shared" / rel
