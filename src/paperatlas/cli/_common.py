"""What every ``paperatlas`` command shares.

The ``--db`` option and how an atlas file is found and opened, the search filter options, progress bars (tqdm on
stderr), the query embedder, and the help of options whose choices come from a registry (:func:`choice_help`,
:func:`backend_choices`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import click

from ..settings import settings

DEFAULT_DB = "paperatlas.db"
SAMPLE_LISTING = Path(__file__).resolve().parents[1] / "data" / "iclr2021_sample.md"
SEED_LISTING = Path("../shared/seeds/001_2614e1796f49d7fd.txt")


def resolve_db(db: str | None) -> Path:
    """Find the atlas file a command uses.

    It is ``--db``, else ``$PAPERATLAS_DB``, else ``paperatlas.db``, else the only ``*.db`` atlas in the current
    directory (so ``build --db iclr2021.db`` then ``paperatlas topics`` just works).

    Args:
        db: The ``--db`` value (``None`` when not given).

    Returns:
        The atlas path (it may not exist: then ``paperatlas.db``).

    Raises:
        click.UsageError: Several ``*.db`` files are here and nothing chooses one.
        click.ClickException: ``--db`` or ``$PAPERATLAS_DB`` names a directory (one line, before any work).
    """
    if db:
        return refuse_directory(db)
    if settings.db:
        return refuse_directory(settings.db)
    if Path(DEFAULT_DB).exists():
        return Path(DEFAULT_DB)
    found = sorted(p for p in Path(".").glob("*.db") if p.is_file())
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise click.UsageError(f"several atlases here ({', '.join(map(str, found))}): choose one with --db")
    return Path(DEFAULT_DB)


def refuse_directory(db: str | Path) -> Path:
    """Check that an atlas path is not a directory, before a command does any work.

    Args:
        db: The atlas path as given (``--db``, ``$PAPERATLAS_DB``).

    Returns:
        ``db`` as a :class:`~pathlib.Path`.

    Raises:
        click.ClickException: ``db`` is an existing directory (one line: name a file in it instead).
    """
    path = Path(db)
    if path.is_dir():
        raise click.ClickException(f"{path}: is a directory, not an atlas file; give a file, e.g. "
                                   f"--db {path / DEFAULT_DB}")
    return path


def db_option(f):
    """Add the ``--db FILE`` option every command that reads an atlas takes.

    Args:
        f: The command function.

    Returns:
        ``f`` with the option.
    """
    return click.option("--db", default=None, metavar="FILE",
                        help="Atlas file (default: $PAPERATLAS_DB, ./paperatlas.db, or the only *.db here).")(f)


def open_atlas(db: str | None):
    """Open the atlas a command reads (found by :func:`resolve_db`).

    Args:
        db: The ``--db`` value (``None`` when not given).

    Returns:
        The open :class:`paperatlas.store.Atlas`.

    Raises:
        click.ClickException: There is no atlas at that path, or the file is not a usable atlas (one line naming
            the file and what is wrong, saying how to build or rebuild it).
    """
    from ..store import Atlas, AtlasNotFound, MalformedAtlas

    try:
        return Atlas(resolve_db(db))
    except (AtlasNotFound, MalformedAtlas) as e:
        raise click.ClickException(str(e)) from e


def tqdm_progress(desc: str, total: int):
    """Make a progress bar on stderr for one build stage (tqdm; closed when full).

    Args:
        desc: The stage's name, shown left of the bar.
        total: Number of papers (or steps) of the stage.

    Returns:
        ``update(n)``, which advances the bar by ``n``.
    """
    from tqdm import tqdm

    bar = tqdm(total=total, desc=f"{desc:<11}", unit="paper" if total > 1 else "step", file=sys.stderr,
               dynamic_ncols=True, leave=True)

    def update(n: int) -> None:
        bar.update(n)
        if bar.n >= bar.total:
            bar.close()

    return update


def embed_query_fn():
    """Make the query embedder of semantic search (the atlas's MiniLM model, loaded on first use).

    The model runs in ONNX Runtime when it can (:func:`paperatlas.enrich.query_embed.query_embedder`: ~0.3 s to load
    instead of ~5 s for torch + sentence-transformers, the same vectors within 1e-6).

    Returns:
        ``embed(query) -> (384,) float32``, L2-normalised.
    """
    from ..enrich.query_embed import query_embedder

    def embed(q: str):
        return query_embedder().encode([q])[0]

    return embed


def parse_filters(status, venue, year, author, topic, keyphrase, min_rating=None, affiliation=None, has_code=False,
                  institution=None, decision=None, min_citations=None, min_confidence=None, max_spread=None):
    """Turn the filter options (:func:`filter_options`) into search filters: the web app's, by the same names.

    Args:
        status: Comma-separated statuses, or ``None``.
        venue: Venue substring, or ``None``.
        year: A year or range (``2021``, ``2019-2021``, ``2019-``), or ``None``.
        author: Author-name substring, or ``None``.
        topic: Topic id or label substring, or ``None``.
        keyphrase: A keyphrase, or ``None``.
        min_rating: The lowest mean review rating, or ``None``.
        affiliation: An institution, or whole words of an affiliation
            (:func:`paperatlas.facets.affiliation_matcher`), or ``None``.
        has_code: Only papers with a code link.
        institution: A normalised institution (the web's Institution facet value, case-insensitive), or ``None``.
        decision: A decision as the venue words it (``Accept (Oral)``; case-insensitive), or ``None``.
        min_citations: The fewest citations (int ≥ 0), or ``None``.
        min_confidence: The lowest mean reviewer confidence, or ``None``.
        max_spread: The largest spread of the review ratings (population standard deviation), or ``None``.

    Returns:
        The :class:`paperatlas.search.Filters`.

    Raises:
        click.BadParameter: ``year`` is not a year or a range.
    """
    from ..search import Filters, parse_years

    try:
        years = parse_years(year or "")
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--year") from e
    return Filters(status=[s for s in (status or "").split(",") if s.strip()], venue=venue or "", year=years,
                   author=author or "", topic=topic or "", keyphrase=keyphrase or "", min_rating=min_rating,
                   affiliation=affiliation or "", has_code=bool(has_code), institution=institution or "",
                   decision=decision or "", min_citations=min_citations, min_confidence=min_confidence,
                   max_spread=max_spread)


def filter_options(f):
    """Add the search filter options: the web app's filters (:class:`paperatlas.search.Filters`), by the same names.

    The options: ``--status``, ``--venue``, ``--year``, ``--author``, ``--topic``, ``--keyphrase``,
    ``--min-rating``, ``--affiliation``, ``--has-code``, ``--institution``, ``--decision``, ``--min-citations``,
    ``--min-confidence``, ``--max-spread``.

    Args:
        f: The command function.

    Returns:
        ``f`` with the options.
    """
    for opt in reversed([
        click.option("--status", help="Comma-separated statuses, e.g. Oral,Spotlight."),
        click.option("--venue", help="Venue contains this text, e.g. ICLR."),
        click.option("--year", help="Year or range: 2021, 2019-2021, 2019-."),
        click.option("--author", help="An author's name contains this text."),
        click.option("--topic", help="Topic id or part of its label."),
        click.option("--keyphrase", help="Papers carrying this keyphrase."),
        click.option("--min-rating", type=float, default=None, metavar="X",
                     help="Mean review rating at least X (papers without review scores are left out)."),
        click.option("--affiliation", metavar="TEXT",
                     help="Papers from TEXT's institution (normalised: Google Brain = Google) or with TEXT as whole "
                     "words in an affiliation ('mit' does not match Mitsubishi)."),
        click.option("--has-code", is_flag=True, help="Only papers with a code link."),
        click.option("--institution", metavar="NAME",
                     help="Papers with this normalised institution, the whole name (case-insensitive), as `show` "
                     "and the web app's Institution facet list it, e.g. 'Google' or 'MIT'."),
        click.option("--decision", metavar="TEXT",
                     help="Papers with this decision, the whole text as the venue words it (case-insensitive), "
                     "e.g. 'Accept (Oral)'; papers without one are left out."),
        click.option("--min-citations", type=click.IntRange(min=0), default=None, metavar="N",
                     help="At least N citations (papers without a citation count are left out)."),
        click.option("--min-confidence", type=float, default=None, metavar="X",
                     help="Mean reviewer confidence at least X (papers without confidences are left out)."),
        click.option("--max-spread", type=float, default=None, metavar="X",
                     help="Review ratings spread (standard deviation) at most X: reviewers agree (papers with "
                     "fewer than 2 ratings are left out)."),
    ]):
        f = opt(f)
    return f


def status_tag(p) -> str:
    """Format a paper's status for a result line.

    Args:
        p: The paper.

    Returns:
        ``" [Oral]"`` and the like, or ``""`` when the paper has no status.
    """
    return f" [{p.status}]" if p.status else ""


def find_or_fail(atlas, ref: str):
    """Find the paper ``ref`` names in ``atlas`` (:func:`paperatlas.search.find_paper`), asking when it is several.

    A title fragment that matches several papers lists them, numbered: at a terminal the user picks one; otherwise
    (a script, a pipe) the command fails with the list, so nothing is silently picked.

    Args:
        atlas: The open atlas.
        ref: A paper id, a title, or a fragment of a title.

    Returns:
        The paper.

    Raises:
        click.ClickException: No paper matches ``ref``, or several do and the input is not a terminal.
    """
    import sys

    from ..search import AmbiguousPaper, find_paper

    try:
        return find_paper(atlas, ref)
    except AmbiguousPaper as e:
        shown = e.candidates[:20]
        listing = "\n".join(f"  {i}. {p.title}{status_tag(p)}  ({p.id})" for i, p in enumerate(shown, 1))
        more = f"\n  ... and {len(e.candidates) - len(shown)} more" if len(e.candidates) > len(shown) else ""
        if not sys.stdin.isatty():
            raise click.ClickException(f"{ref!r} matches {len(e.candidates)} papers:\n{listing}{more}\n"
                                       "give more of the title, or the paper id") from e
        click.echo(f"{ref!r} matches {len(e.candidates)} papers:\n{listing}{more}", err=True)
        pick = click.prompt("which one? (number)", type=click.IntRange(1, len(shown)), err=True)
        return shown[pick - 1]
    except LookupError as e:
        raise click.ClickException(str(e)) from e


#: The non-generative TL;DR and topic-label method, the first choice of ``--tldr-backend`` and ``--label-backend``.
EXTRACTIVE = "extractive"


def choice_help(intro: str, choices: Iterable[tuple[str, str]]) -> str:
    """Write the help of an option whose choices come from a registry: ``intro``, then one paragraph per choice.

    Click rewraps each paragraph to the terminal width, so descriptions may be of any length.

    Args:
        intro: What the option does (one or more sentences).
        choices: ``(name, one-line description)`` pairs, in the order to list them.

    Returns:
        The help text: ``intro``, a blank line, then ``name: description`` paragraphs.
    """
    return "\n\n".join([intro, *(f"{name}: {description}" for name, description in choices)])


def backend_choices() -> list[tuple[str, str]]:
    """List the choices of ``--tldr-backend`` and ``--label-backend`` with their descriptions.

    Returns:
        ``extractive`` first, then every generative backend of :data:`paperatlas.llm.backends.BACKENDS` in its
        registry order, each with its one-line description.
    """
    from ..llm.backends import BACKENDS

    return [(EXTRACTIVE, "the built-in extractive method; no model needed"),
            *((name, description) for name, (_factory, description) in BACKENDS.items())]
