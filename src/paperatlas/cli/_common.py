"""What every ``paperatlas`` command shares: the ``--db`` option and how an atlas file is found and opened, the
search filter options, progress bars (tqdm on stderr) and the query embedder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

DEFAULT_DB = "paperatlas.db"
SAMPLE_LISTING = Path(__file__).resolve().parents[1] / "data" / "iclr2021_sample.md"
SEED_LISTING = Path("../shared/seeds/001_2614e1796f49d7fd.txt")


def resolve_db(db: str | None) -> Path:
    """The atlas file to use: ``--db``, else ``$PAPERATLAS_DB``, else ``paperatlas.db``, else the only ``*.db``
    atlas in the current directory (so ``build --db iclr2021.db`` then ``paperatlas topics`` just works)."""
    if db:
        return Path(db)
    if os.environ.get("PAPERATLAS_DB"):
        return Path(os.environ["PAPERATLAS_DB"])
    if Path(DEFAULT_DB).exists():
        return Path(DEFAULT_DB)
    found = sorted(p for p in Path(".").glob("*.db") if p.is_file())
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise click.UsageError(f"several atlases here ({', '.join(map(str, found))}): choose one with --db")
    return Path(DEFAULT_DB)


def db_option(f):
    """The ``--db FILE`` option every command that reads an atlas takes."""
    return click.option("--db", default=None, metavar="FILE",
                        help="Atlas file (default: $PAPERATLAS_DB, ./paperatlas.db, or the only *.db here).")(f)


def open_atlas(db: str | None):
    from ..store import Atlas, AtlasNotFound

    try:
        return Atlas(resolve_db(db))
    except AtlasNotFound as e:
        raise click.ClickException(str(e)) from e


def tqdm_progress(desc: str, total: int):
    from tqdm import tqdm

    bar = tqdm(total=total, desc=f"{desc:<11}", unit="paper" if total > 1 else "step", file=sys.stderr,
               dynamic_ncols=True, leave=True)

    def update(n: int) -> None:
        bar.update(n)
        if bar.n >= bar.total:
            bar.close()

    return update


def embed_query_fn():
    from ..enrich.embed import get_embedder

    def embed(q: str):
        return get_embedder().encode([q])[0]

    return embed


def parse_filters(status, venue, year, author, topic, keyphrase):
    from ..search import Filters, parse_years

    try:
        years = parse_years(year or "")
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--year") from e
    return Filters(status=[s for s in (status or "").split(",") if s.strip()], venue=venue or "", year=years,
                   author=author or "", topic=topic or "", keyphrase=keyphrase or "")


def filter_options(f):
    """The search filter options (``--status``, ``--venue``, ``--year``, ``--author``, ``--topic``, ``--keyphrase``)."""
    for opt in reversed([
        click.option("--status", help="Comma-separated statuses, e.g. Oral,Spotlight."),
        click.option("--venue", help="Venue contains this text, e.g. ICLR."),
        click.option("--year", help="Year or range: 2021, 2019-2021, 2019-."),
        click.option("--author", help="An author's name contains this text."),
        click.option("--topic", help="Topic id or part of its label."),
        click.option("--keyphrase", help="Papers carrying this keyphrase."),
    ]):
        f = opt(f)
    return f


def status_tag(p) -> str:
    return f" [{p.status}]" if p.status else ""


def find_or_fail(atlas, ref: str):
    """The paper ``ref`` (an id or a title) names in ``atlas`` (:func:`paperatlas.search.find_paper`); none is a
    :class:`click.ClickException`."""
    from ..search import find_paper

    try:
        return find_paper(atlas, ref)
    except LookupError as e:
        raise click.ClickException(str(e)) from e
