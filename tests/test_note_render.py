"""A reader's note is shown whatever it holds: Markdown as HTML, and a note of thousands of brackets as plain text.

markdown-it-py's link and emphasis rules take time growing with the square of the brackets in a note (a 99 kB
note of ``[`` took 1.2 s on every page showing it); past :data:`paperatlas.markup.MAX_NOTE_MARKS` marks the note
is shown as escaped text.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest

from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.markup import MAX_NOTE_MARKS, note_html
from paperatlas.store import Atlas
from paperatlas.web import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_build_safety import EXCERPT, HashEmbedder  # noqa: E402


def test_an_ordinary_note_is_markdown():
    out = note_html("Compare with [SAM](https://arxiv.org/abs/2010.01412): *flat minima* <b>not html</b>.")
    assert '<a href="https://arxiv.org/abs/2010.01412">SAM</a>' in out and "<em>flat minima</em>" in out
    assert "<b>" not in out and "&lt;b&gt;" in out


@pytest.mark.parametrize("note", ["[" * 99_000, "![" * 49_000, "**a" * 33_000, "[a](" * 24_000])
def test_a_note_of_brackets_is_shown_as_its_plain_text(note):
    out = note_html(note)
    assert out.startswith('<pre class="note-plain">')
    assert html.unescape(re.sub(r"</?pre[^>]*>", "", out)) == note  # every character shown, nothing rendered


def test_a_note_just_under_the_limit_is_still_markdown():
    note = "[link](https://example.org) " + "*" * (MAX_NOTE_MARKS - 20)
    assert '<a href="https://example.org">link</a>' in note_html(note)


def test_the_paper_and_list_pages_show_a_note_of_brackets(tmp_path):
    db = tmp_path / "atlas.db"
    build([EXCERPT], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    pid = Atlas(db).papers[0].id
    rl.add(db, pid)
    rl.set_note(db, pid, "[" * 99_000)
    client = create_app(db, preload_model=False).test_client()
    for url in (f"/paper/{pid}", "/list"):
        page = client.get(url).get_data(as_text=True)
        assert '<pre class="note-plain">' + "[" * 1000 in page, url
