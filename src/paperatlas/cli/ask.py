"""The ``ask`` command: a short cited answer to a question, copied sentence by sentence from the atlas's papers."""

from __future__ import annotations

import textwrap

import click

from ._common import (
    EXTRACTIVE,
    backend_choices,
    choice_help,
    db_option,
    filter_options,
    open_atlas,
    parse_filters,
    status_tag,
)

_BACKENDS = backend_choices()


@click.command(name="ask")
@click.argument("question")
@db_option
@filter_options
@click.option("--json", "as_json", is_flag=True, help="Print the answer as one JSON object.")
@click.option("--no-meaning", is_flag=True,
              help="Do not load the embedding model: rank papers and sentences by the question's words only.")
@click.option("--backend", type=click.Choice([name for name, _ in _BACKENDS]), default=EXTRACTIVE, show_default=True,
              help=choice_help("Who writes the answer. A generative backend rewrites the chosen sentences; each "
                               "sentence it writes is kept only when the abstract it cites supports it (numbers, "
                               "words, meaning), otherwise the copied sentence stays. Written sentences are marked *.",
                               _BACKENDS))
@click.option("--base-url", default=None, help="Endpoint of --backend openai, e.g. http://127.0.0.1:11434/v1")
@click.option("--model", "llm_model", default=None, help="Model name for --backend openai.")
@click.option("--verbose", "-v", is_flag=True, help="List the sentences the model wrote that the check dropped.")
def ask_command(question, db, as_json, no_meaning, backend, base_url, llm_model, verbose, **filter_args):
    """Answer QUESTION in 2-5 sentences copied from the atlas's papers, each followed by its paper's [n].

    The sentences come from the TL;DRs and abstracts of the papers a search for QUESTION ranks first, chosen for
    the question's words and meaning without repeating one another, and are followed by the cited papers. When no
    paper addresses the question, it says so and names the nearest topics instead. The same filters as `search`
    narrow the papers read.

    With --backend openai (a local llama.cpp server, Ollama, vLLM) or smollm2, the model rewrites the sentences;
    each sentence it writes is kept only when the abstract (or TL;DR) of the paper it cites supports it, and is
    marked *; a refused sentence is replaced by the copied one, and a failing backend leaves the copied answer
    with a note.

    \b
    Examples:
      paperatlas ask "how do transformers handle images"
      paperatlas ask "what causes double descent" --status Oral,Spotlight
      paperatlas ask "what is a lottery ticket" --json
      paperatlas ask "what are Hopfield networks" --backend openai \\
          --base-url http://127.0.0.1:11434/v1 --model qwen2.5:0.5b
    """
    import json

    from ..ask import ask, check_question
    from ..llm.backends import BackendError, make_backend

    try:
        q = check_question(question)
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    if not q:
        raise click.UsageError("QUESTION is empty")
    chat, note = None, ""
    if backend != EXTRACTIVE:
        missing = [o for o, v in (("--base-url", base_url), ("--model", llm_model)) if not v]
        if backend == "openai" and missing:
            raise click.UsageError(f"--backend openai needs {' and '.join(missing)} "
                                   "(e.g. --base-url http://127.0.0.1:11434/v1 --model qwen2.5:0.5b)")
        try:
            chat = make_backend(backend, base_url=base_url, model=llm_model)
        except ValueError as e:
            raise click.UsageError(str(e)) from e
        except BackendError as e:  # not installed, or the model cannot load: the extractive answer, said so
            note = f"the {backend} backend is unavailable ({e.short}); the answer is extractive"
    atlas = open_atlas(db)
    encode = None
    if not no_meaning and atlas.vectors.size:
        from ..enrich.query_embed import query_embedder

        encode = query_embedder().encode
    ans = ask(atlas, q, filters=parse_filters(**filter_args), encode=encode, backend=chat)
    if note and not ans.miss:
        ans.note = note
    if as_json:
        click.echo(json.dumps(ans.to_json(), ensure_ascii=False))
        return
    if ans.miss:
        click.echo(ans.message)
        if ans.nearest_topics:
            click.echo("Nearest topics: " + "; ".join(f"{t.label} (#{t.id}, {t.size} papers)"
                                                       for t in ans.nearest_topics))
        return
    click.echo(textwrap.fill(" ".join(f"{s.text} [{s.cite}]" + ("*" if s.written else "") for s in ans.sentences),
                             100))
    click.echo()
    by_id = atlas.by_id
    for c in ans.papers:
        p = by_id[c.id]
        authors = ", ".join(c.authors[:4]) + (" et al." if len(c.authors) > 4 else "")
        click.echo(f"[{c.cite}] {click.style(c.title, bold=True)}{status_tag(p)}  ({c.id})")
        click.echo(f"    {authors}" + (f" · {c.url}" if c.url else ""))
    _footer(ans, verbose)


def _footer(ans, verbose: bool) -> None:
    """After the cited papers: who wrote the starred sentences, what the check dropped, and the fallback note."""
    if ans.written_by and any(s.written for s in ans.sentences):
        click.echo()
        click.echo(f"* written by {ans.written_by}; checked against the cited abstract")
    if ans.dropped:
        n = len(ans.dropped)
        click.echo(f"{n} sentence{'s' if n != 1 else ''} the model wrote {'were' if n != 1 else 'was'} dropped (not "
                   f"supported by the abstract {'they' if n != 1 else 'it'} cite{'' if n != 1 else 's'})"
                   + (":" if verbose else "; --verbose lists them"))
        if verbose:
            for d in ans.dropped:
                cite = f" [{d.cite}]" if d.cite else f" [paper {d.paper_id}]" if d.paper_id else ""
                click.echo(textwrap.fill(f"- {d.text}{cite} ({d.reason})", 100, subsequent_indent="  "))
    if ans.note:
        click.echo(f"note: {ans.note}")
