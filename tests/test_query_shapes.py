"""Query words are read as the search index holds them: a word may start with digits (``16x16``, ``3D``).

FTS5's unicode61 tokenizer indexes ``16x16`` as one token, but the query side used to drop a token's leading
digits: on ICLR 2021, ``image worth 16x16 words`` answered "No paper mentions “x16”" although ViT is in the atlas.
The ViT entry here is cut from seed 001 (the ICLR 2021 listing), beside the 12 papers of the excerpt.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, SEEDS, need
from paperatlas.build import build
from paperatlas.search import search_results
from paperatlas.store import Atlas
from paperatlas.text import query_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_build_safety import HashEmbedder  # noqa: E402


def test_query_words_keep_leading_digits_and_drop_bare_numbers():
    assert query_tokens("An image is worth 16x16 words") == ["An", "image", "is", "worth", "16x16", "words"]
    assert query_tokens("1x1 convolution, 3D point clouds, ResNet-50, GPT-3 in 2021") == [
        "1x1", "convolution", "3D", "point", "clouds", "ResNet-50", "GPT-3", "in"]


@pytest.fixture(scope="module")
def atlas(tmp_path_factory) -> Atlas:
    seed = need(SEEDS / "001_2614e1796f49d7fd.txt").read_text(encoding="utf-8")
    start = seed.index("## [An Image is Worth 16x16 Words")
    vit = seed[start:seed.index("\n## ", start + 1)]
    listing = tmp_path_factory.mktemp("vit") / "iclr2021_vit.md"
    listing.write_text((FIXTURES / "iclr2021_excerpt.md").read_text(encoding="utf-8") + "\n" + vit + "\n",
                       encoding="utf-8")
    db = listing.with_suffix(".db")
    build([listing], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    return Atlas(db)


@pytest.mark.parametrize("query", ["image worth 16x16 words", "16x16"])
def test_a_query_with_16x16_finds_vit(atlas, query):
    res = search_results(atlas, query, mode="bm25")
    assert [h.paper.title for h in res.hits][:1] == [
        "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale"], res.message
    assert "x16" not in (res.message or "")
