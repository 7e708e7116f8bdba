"""The reader's workflow in a real browser: like three papers, get recommendations with reasons, write a note,
rebuild the atlas, and find the note (and the likes) still there."""

from __future__ import annotations

import pytest

from conftest import SAMPLE
from paperatlas.build import build
from paperatlas.store import Atlas

PRUNING = ["Pruning Neural Networks at Initialization: Why Are We Missing the Mark?",
           "Layer-adaptive Sparsity for the Magnitude-based Pruning",
           "Neural Pruning via Growing Regularization"]


@pytest.mark.browser
def test_like_three_get_reasons_note_rebuild_note_survives(served, browser):
    db, base = served
    atlas = Atlas(db)
    titles = [t for t in PRUNING if any(p.title == t for p in atlas.papers)]
    if len(titles) < 3:  # the sample's pruning papers, else any three
        titles = [p.title for p in atlas.papers[:3]]
    ids = [next(p.id for p in atlas.papers if p.title == t) for t in titles]
    page = browser.new_page()
    for pid in ids:
        page.goto(f"{base}/paper/{pid}")
        page.click("#like")
        assert "Liked" in page.inner_text("#like")
    page.goto(f"{base}/foryou")
    recs = page.locator("#recs li")
    assert recs.count() >= 5
    for i in range(3):
        item = recs.nth(i)
        assert item.locator(".ptitle").inner_text() not in titles  # liked papers are never recommended
        reason = item.locator(".reason").inner_text()
        assert reason.startswith("because you liked ") and any(t in reason for t in titles)
    first = recs.nth(0).locator(".ptitle").inner_text()
    # a note on the first recommendation
    recs.nth(0).locator(".ptitle").click()
    page.fill("#note", "have to check on this in the paper")
    page.click("#savenote")
    assert page.input_value("#note") == "have to check on this in the paper"
    # rebuild the atlas under the running app: the note and the likes are still there
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    page.goto(f"{base}/list")
    text = page.inner_text("#readinglist")
    assert first in text and "have to check on this in the paper" in text
    assert page.locator("#readinglist .mark.liked").count() == 3
    page.close()
