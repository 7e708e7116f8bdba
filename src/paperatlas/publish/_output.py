"""Where ``publish`` may write, and replacing what it wrote there without touching anything else.

A folder output (``site``) carries a marker file, ``.paperatlas-<format>`` (:func:`marker_name`): JSON naming the
format, the paperatlas version and every file the output holds (POSIX paths relative to the folder). A later publish
into that folder knows it as its own and replaces it (:func:`replace_folder`); it refuses (:class:`OutputRefused`)

* a non-empty folder without that marker (a project folder, the atlas's own folder, a site published before the
  marker existed), or one holding a file the marker does not list (``CNAME``, ``.git``, the atlas);
* a folder output at an existing file, or at a folder that holds the atlas (:func:`check_folder_output`);
* a file output at a folder, at the atlas or one of its companion files, or over any SQLite database
  (:func:`check_file_output`).

Replacing removes only the files the old marker lists (and the folders that are then empty): a file that appears in
the folder while a publish runs is kept in the hidden ``.NAME.*.old`` folder beside it instead of being deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from .. import __version__
from ..files import OutputRefused, check_file_output

#: Names of an atlas's companion files, from the atlas file's name (SQLite's journals, the build and swap locks,
#: resume).
_COMPANIONS = ("{}", "{}-wal", "{}-shm", "{}-journal", "{}.lock", "{}.swap-lock", ".{}.resume")


def marker_name(fmt: str) -> str:
    """The name of the marker file that a folder output of format ``fmt`` carries.

    Args:
        fmt: A directory format's name, e.g. ``"site"``.

    Returns:
        E.g. ``".paperatlas-site"``.
    """
    return f".paperatlas-{fmt}"


def atlas_files(db: str | Path) -> list[Path]:
    """The atlas file and its companions (SQLite's ``-wal``/``-shm``/``-journal``, the locks, ``.NAME.resume``).

    Args:
        db: The atlas file.

    Returns:
        Their absolute paths (whether they exist or not).
    """
    db = Path(os.path.abspath(db))
    return [db.with_name(c.format(db.name)) for c in _COMPANIONS]


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it (symbolic links resolved)."""
    p, f = path.resolve(), folder.resolve()
    return p == f or f in p.parents


def _work_name(fmt: str) -> re.Pattern[str]:
    """Names of the work folders an in-place publish makes inside the folder (left behind only by a crash)."""
    return re.compile(re.escape(marker_name(fmt)) + r"\.[^/]*\.(?:tmp|old)")


def _manifest(folder: Path, fmt: str) -> set[str] | None:
    """The files the marker in ``folder`` lists, or None when it has no valid marker of format ``fmt``."""
    try:
        doc = json.loads((folder / marker_name(fmt)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = doc.get("files") if isinstance(doc, dict) and doc.get("format") == fmt else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return set(files)


def _ancestors(files: Iterable[str]) -> set[str]:
    return {str(parent) for f in files for parent in PurePosixPath(f).parents if str(parent) != "."}


def _first_foreign(folder: Path, fmt: str) -> str | None:
    """The first entry of ``folder`` an earlier publish of ``fmt`` did not write (relative path), or None."""
    files = _manifest(folder, fmt)
    if files is None:
        return next((e.name for e in os.scandir(folder)), None)
    files = files | {marker_name(fmt)}
    dirs = _ancestors(files)
    work = _work_name(fmt)
    for dirpath, dirnames, filenames in os.walk(folder):  # symbolic links are never followed
        rel_dir = Path(dirpath).relative_to(folder)
        for name in sorted(dirnames + filenames):
            full = Path(dirpath, name)
            rel = (rel_dir / name).as_posix()
            if rel_dir == Path(".") and work.fullmatch(name):
                continue  # an in-place publish's work folder: never walked, never removed
            owned = rel in dirs if full.is_dir() and not full.is_symlink() else rel in files
            if not owned:
                return rel
        dirnames[:] = [d for d in dirnames if not (rel_dir == Path(".") and work.fullmatch(d))]
    return None


def check_folder_output(path: str | Path, fmt: str, protect: Iterable[str | Path] = ()) -> None:
    """Refuse a folder output that would replace anything ``publish`` did not write there.

    Args:
        path: The folder ``publish --format fmt`` is about to (re)write.
        fmt: The directory format, e.g. ``"site"``.
        protect: Files that must not be inside it (the atlas, :func:`atlas_files`).

    Raises:
        OutputRefused: ``path`` is an existing file; it is or holds one of ``protect``; or it is a non-empty folder
            that is not an earlier output of ``fmt`` or holds files that output did not write.
    """
    target = Path(path)
    shown = str(path) or "."
    if target.exists() and not target.is_dir():
        raise OutputRefused(f"{shown} exists and is not a folder; choose a new or empty folder for --format {fmt}")
    for x in protect:
        if Path(x).exists() and _within(Path(x), target):
            raise OutputRefused(f"{shown} holds the atlas {x}; choose a new or empty folder for --format {fmt}")
    if not target.is_dir():
        return
    foreign = _first_foreign(target, fmt)
    if foreign is None:
        return
    if _manifest(target, fmt) is None:
        raise OutputRefused(f"{shown} is not empty and is not an earlier --format {fmt} output (it has no "
                            f"{marker_name(fmt)}); choose a new or empty folder")
    raise OutputRefused(f"{shown} holds {foreign}, which publish did not write; move it out or choose a new or "
                        "empty folder")


def _write_marker(folder: Path, fmt: str) -> None:
    files = sorted(Path(dirpath, name).relative_to(folder).as_posix()
                   for dirpath, dirnames, filenames in os.walk(folder)
                   for name in filenames + [d for d in dirnames if Path(dirpath, d).is_symlink()])
    doc = {"format": fmt, "generator": "paperatlas", "version": __version__, "files": files}
    (folder / marker_name(fmt)).write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")


def _remove_owned(folder: Path, files: set[str]) -> None:
    """Remove the listed files of ``folder`` and then every folder left empty (never anything else)."""
    for dirpath, dirnames, filenames in os.walk(folder, topdown=False):
        rel_dir = Path(dirpath).relative_to(folder)
        for name in filenames + [d for d in dirnames if Path(dirpath, d).is_symlink()]:
            if (rel_dir / name).as_posix() in files:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(Path(dirpath, name))
        with contextlib.suppress(OSError):
            os.rmdir(dirpath)  # only when empty


def replace_folder(path: str | Path, fmt: str, build: Callable[[Path], None]) -> Path:
    """(Re)write the folder output ``path`` of format ``fmt``: ``build`` fills a new folder that replaces the old.

    The new folder is built beside ``path`` and renamed into place, so a failure leaves an earlier output untouched.
    When ``path`` is the current directory (``-o .``), which cannot be renamed, it is built in a hidden work folder
    inside it and its entries are moved in (and the old ones back on a failure). Only files the old marker lists are
    then removed (see the module docstring).

    Args:
        path: The output folder (created with its parents when missing).
        fmt: The directory format (its marker is :func:`marker_name`).
        build: Writes the output into the empty folder it is given.

    Returns:
        ``path`` as a Path.

    Raises:
        OutputRefused: As :func:`check_folder_output` (nothing is written).
        OSError: The folder cannot be written.
        Exception: Whatever ``build`` raises propagates (the earlier output is kept).
    """
    check_folder_output(path, fmt)
    target = Path(path).resolve()
    old_files = (_manifest(target, fmt) or set()) | {marker_name(fmt)} if target.is_dir() else set()
    if target.is_dir() and target == Path.cwd().resolve():
        _replace_in_place(target, fmt, build, old_files)
        return Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    old: Path | None = None
    try:
        tmp.chmod(0o755)
        build(tmp)
        _write_marker(tmp, fmt)
        if target.exists():
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            old.rmdir()
            target.rename(old)
        tmp.rename(target)
    except BaseException:
        if old is not None and not target.exists():
            old.rename(target)
        shutil.rmtree(tmp, ignore_errors=True)  # all of it written by build
        raise
    if old is not None:
        _remove_owned(old, old_files)
    return Path(path)


def _replace_in_place(target: Path, fmt: str, build: Callable[[Path], None], old_files: set[str]) -> None:
    """:func:`replace_folder` for the current directory: build in a work folder inside it, then swap entries."""
    prefix = marker_name(fmt) + "."
    tmp = Path(tempfile.mkdtemp(dir=target, prefix=prefix, suffix=".tmp"))
    trash = Path(tempfile.mkdtemp(dir=target, prefix=prefix, suffix=".old"))
    work = _work_name(fmt)
    moved_out: list[str] = []
    moved_in: list[str] = []
    try:
        build(tmp)
        _write_marker(tmp, fmt)
        for name in sorted(os.listdir(target)):
            if not work.fullmatch(name):
                os.rename(target / name, trash / name)
                moved_out.append(name)
        for name in sorted(os.listdir(tmp)):
            os.rename(tmp / name, target / name)
            moved_in.append(name)
    except BaseException:
        for name in moved_in:
            os.rename(target / name, tmp / name)
        for name in moved_out:
            os.rename(trash / name, target / name)
        shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.suppress(OSError):
            trash.rmdir()
        raise
    tmp.rmdir()
    _remove_owned(trash, old_files)


__all__ = ["OutputRefused", "atlas_files", "check_file_output", "check_folder_output", "marker_name",
           "replace_folder"]
