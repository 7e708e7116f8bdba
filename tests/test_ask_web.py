"""The Ask page (``/ask``), ``/api/ask`` and the feed links of the web app, on the 60-paper ICLR 2021 sample atlas.

Issue 29 parts 1 and 4: a question answered with cited sentences each copied from its paper, the search's filters
narrowing the cited papers, an honest miss with the nearest topics, 400 for an empty or too long question, the
answer's [n] links in a real browser, and a feed link on the pages (carrying the access token on a LAN host).
"""

from __future__ import annotations

import re
from html import unescape

import feedparser
import numpy as np
import pytest

from paperatlas.store import Atlas
from paperatlas.text import split_sentences
from paperatlas.web import create_app

QUESTIONS = ["how do neural ODEs relate to residual networks", "what are Hopfield networks",
             "how can reinforcement learning be made robust to adversarial observations", "graph neural networks"]
TOKEN = "ask-page-token-0123456789"


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


@pytest.fixture(scope="module")
def words_client(sample_atlas):
    """A client of the app before its query model is loaded (answers by the question's words)."""
    return create_app(sample_atlas, preload_model=False).test_client()


@pytest.fixture(scope="module")
def meaning_client(sample_atlas):
    """A client of the app with its query model loaded, as after ``serve``'s warm-up."""
    from paperatlas.enrich.query_embed import query_embedder

    app = create_app(sample_atlas, preload_model=False)
    app.extensions["paperatlas"].state["embedder"] = query_embedder()
    return app.test_client()


def _verbatim(atlas: Atlas, s: dict) -> bool:
    p = atlas.by_id[s["paper_id"]]
    return s["text"] == p.tldr if s["source"] == "tldr" else s["text"] in split_sentences(p.abstract)


@pytest.mark.parametrize("meaning", [False, True], ids=["words", "meaning"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_api_ask_answers_with_sentences_copied_from_the_cited_papers(atlas, words_client, meaning_client,
                                                                     question, meaning):
    res = (meaning_client if meaning else words_client).get("/api/ask", query_string={"q": question})
    assert res.status_code == 200 and res.mimetype == "application/json"
    d = res.get_json()
    assert d["question"] == question and d["miss"] is False
    assert 2 <= len(d["sentences"]) <= 6
    assert [c["cite"] for c in d["papers"]] == list(range(1, len(d["papers"]) + 1))
    by_cite = {c["cite"]: c for c in d["papers"]}
    assert {s["cite"] for s in d["sentences"]} == set(by_cite)
    for s in d["sentences"]:
        assert by_cite[s["cite"]]["id"] == s["paper_id"]
        assert _verbatim(atlas, s), s["text"]
    for c in d["papers"]:
        p = atlas.by_id[c["id"]]
        assert (c["title"], c["authors"], c["status"]) == (p.title, list(p.authors), p.status)
    if question.startswith("what are Hopfield"):
        assert "Hopfield" in d["papers"][0]["title"]


def test_the_apps_sentence_encoder_gives_the_models_vectors_and_the_same_answers(atlas, meaning_client):
    from paperatlas.ask import ask
    from paperatlas.enrich.query_embed import query_embedder
    from paperatlas.web.ask_views import SentenceEncoder

    model = query_embedder()
    calls: list[int] = []
    enc = SentenceEncoder(lambda texts: calls.append(len(texts)) or model.encode(texts), chunk=4, cache_size=30)
    hopfield = next(p for p in atlas.papers if "Hopfield" in p.title)
    texts = split_sentences(hopfield.abstract)[:9]
    texts = texts + texts[:2]  # a repeat within one call is encoded once
    got = enc(texts)
    assert got.shape == (len(texts), 384) and got.dtype == np.float32
    assert np.abs(got - model.encode(texts)).max() < 1e-5
    assert sum(calls) == len(set(texts)) and max(calls) <= 4
    calls.clear()
    assert np.array_equal(enc(texts[::-1]), got[::-1]) and calls == []  # all from the cache
    for q in QUESTIONS:  # the app answers as ask does with the model itself
        d = meaning_client.get("/api/ask", query_string={"q": q}).get_json()
        want = ask(atlas, q, encode=model.encode).to_json()
        assert [s["text"] for s in d["sentences"]] == [s["text"] for s in want["sentences"]], q


def test_filters_narrow_the_cited_papers(atlas, words_client):
    q = "graph neural networks"
    every = words_client.get("/api/ask", query_string={"q": q}).get_json()
    assert {c["status"] for c in every["papers"]} - {"Spotlight"}  # unfiltered, it cites posters too
    spot = words_client.get("/api/ask", query_string={"q": q, "status": "Spotlight"}).get_json()
    assert not spot["miss"] and spot["papers"]
    assert {c["status"] for c in spot["papers"]} == {"Spotlight"}
    assert all(_verbatim(atlas, s) for s in spot["sentences"])
    # a topic: every cited paper is filed under it (or under one of its sub-topics)
    first = atlas.by_id[every["papers"][0]["id"]]
    area = atlas.area_of(first.topic_id)
    under = {area.id, *(t.id for t in atlas.subtopics(area.id))}
    narrowed = words_client.get("/api/ask", query_string={"q": q, "topic": str(area.id)}).get_json()
    assert narrowed["papers"] and {atlas.by_id[c["id"]].topic_id for c in narrowed["papers"]} <= under
    assert {c["id"] for c in every["papers"]} - {c["id"] for c in narrowed["papers"]}
    # no Spotlight paper is about Hopfield networks: the filtered question is a miss
    assert words_client.get("/api/ask", query_string={"q": "what are Hopfield networks",
                                                      "status": "Spotlight"}).get_json()["miss"] is True
    # the page keeps the filter checked in its form
    page = words_client.get("/ask", query_string={"q": q, "status": "Spotlight"}).get_data(as_text=True)
    assert re.search(r'value="Spotlight"\s+checked', page)


@pytest.mark.parametrize("meaning", [False, True], ids=["words", "meaning"])
def test_an_off_topic_question_is_a_miss_with_the_nearest_topics_linked(atlas, words_client, meaning_client,
                                                                         meaning):
    client = meaning_client if meaning else words_client
    d = client.get("/api/ask", query_string={"q": "best pizza dough hydration"}).get_json()
    assert d["miss"] is True and not d["sentences"] and not d["papers"] and d["message"]
    assert 1 <= len(d["nearest_topics"]) <= 3 and all(t["id"] in atlas.topics for t in d["nearest_topics"])
    page = client.get("/ask", query_string={"q": "best pizza dough hydration"}).get_data(as_text=True)
    assert 'id="askmiss"' in page and 'id="paragraph"' not in page
    near = page[page.index('id="neartopics"'):]
    assert [int(x) for x in re.findall(r'href="/topic/(\d+)"', near)] == [t["id"] for t in d["nearest_topics"]]


def test_an_empty_or_too_long_question_is_refused_readably(words_client):
    for q in ["", "   "]:
        res = words_client.get("/api/ask", query_string={"q": q})
        assert res.status_code == 400 and "empty" in res.get_json()["error"]
    assert words_client.get("/api/ask").status_code == 400
    long_q = "why " * 1_000  # 4,000 characters; the limit is 1,000
    res = words_client.get("/api/ask", query_string={"q": long_q})
    assert res.status_code == 400 and "longer than 1,000 characters" in res.get_json()["error"]
    page = words_client.get("/ask", query_string={"q": long_q})
    assert page.status_code == 400
    text = page.get_data(as_text=True)
    assert 'id="askerror"' in text and "longer than 1,000 characters" in text and "Traceback" not in text
    # an empty question: the box and example questions, each a link that answers it
    empty = words_client.get("/ask").get_data(as_text=True)
    examples = [unescape(x) for x in re.findall(r'<li><a href="/ask\?q=[^"]+">([^<]+)</a>', empty)]
    assert 2 <= len(examples) <= 3 and 'id="askq"' in empty
    for e in examples:
        assert words_client.get("/api/ask", query_string={"q": e}).get_json()["miss"] is False


def test_the_page_shows_the_paragraph_with_links_then_the_cited_papers(atlas, meaning_client):
    q = QUESTIONS[0]
    d = meaning_client.get("/api/ask", query_string={"q": q}).get_json()
    page = meaning_client.get("/ask", query_string={"q": q}).get_data(as_text=True)
    para = page[page.index('id="paragraph"'):page.index("</p>", page.index('id="paragraph"'))]
    got = re.findall(r'<span class="sentence"[^>]*>(.*?)</span> <a class="cite" href="/paper/(\w+)"[^>]*>\[(\d+)\]</a>',
                     para)
    assert [(unescape(t), pid, int(n)) for t, pid, n in got] == \
        [(s["text"], s["paper_id"], s["cite"]) for s in d["sentences"]]
    cited = page[page.index('id="cited"'):]
    assert re.findall(r'<li class="paper[^"]*" data-id="(\w+)"', cited) == [c["id"] for c in d["papers"]]
    assert re.findall(r'value="(\d+)"', cited)[:len(d["papers"])] == [str(c["cite"]) for c in d["papers"]]
    for c in d["papers"]:
        assert f'<a class="ptitle" href="/paper/{c["id"]}">' in cited
    assert "ODE" in unescape(cited)


def test_every_page_has_the_ask_box_and_a_feed_link_fitting_the_page(atlas, words_client):
    topic = next(t for t in atlas.topics.values() if t.level == 1)
    for url, feed in [("/", "/feed.atom"), ("/papers", "/feed.atom"),
                      (f"/topic/{topic.id}", f"/feed.atom?topic={topic.id}"),
                      ("/?q=pruning+networks", "/feed.atom?q=pruning+networks")]:
        page = words_client.get(url).get_data(as_text=True)
        assert re.search(r'<link rel="alternate" type="application/atom\+xml" title="[^"]*" href="'
                         + re.escape(feed) + '">', page), url
        assert f'id="pagefeed" href="{feed}"' in page, url
        assert 'class="navask"' in page and 'action="/ask"' in page
    new = words_client.get("/new").get_data(as_text=True)
    assert 'id="newfeed" href="/feed.atom"' in new
    for feed in ["/feed.atom", f"/feed.atom?topic={topic.id}", "/feed.atom?q=pruning+networks"]:
        res = words_client.get(feed)
        assert res.status_code == 200 and feedparser.parse(res.data).bozo == 0, feed
    assert 'class="navask"' not in words_client.get("/ask").get_data(as_text=True)  # the page's own box instead


def test_on_a_lan_host_the_feed_link_carries_the_token_for_a_logged_in_reader(sample_atlas):
    app = create_app(sample_atlas, preload_model=False, allowed_hosts=("192.168.1.5",), access_token=TOKEN)
    host = {"Host": "192.168.1.5:8000"}
    browser = app.test_client()
    assert browser.get("/new", headers=host).status_code == 401  # no page, so no link, without the token
    assert browser.get("/new", query_string={"token": TOKEN}, headers=host).status_code == 302  # logs in
    page = browser.get("/new", headers=host).get_data(as_text=True)
    link = unescape(re.search(r'id="newfeed" href="([^"]+)"', page).group(1))
    assert link == f"/feed.atom?token={TOKEN}"
    assert f'id="pagefeed" href="/feed.atom?token={TOKEN}"' in page
    reader = app.test_client(use_cookies=False)  # the feed reader the link is pasted into: no session
    res = reader.get(link, headers=host)
    assert res.status_code == 200 and feedparser.parse(res.data).bozo == 0
    ask = browser.get("/api/ask", query_string={"q": QUESTIONS[1]}, headers=host)
    assert ask.status_code == 200 and not ask.get_json()["miss"]
    # on loopback without a token the links carry none
    plain = create_app(sample_atlas, preload_model=False).test_client().get("/new").get_data(as_text=True)
    assert 'id="newfeed" href="/feed.atom"' in plain and "token=" not in plain


@pytest.mark.browser
def test_ask_in_the_nav_box_then_follow_a_citation_to_the_paper(served, browser):
    db, base = served
    atlas = Atlas(db)
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{base}/papers")
    page.fill("form.navask input[name=q]", "what are Hopfield networks")
    page.press("form.navask input[name=q]", "Enter")
    page.wait_for_selector("#paragraph")
    assert "/ask?q=what+are+Hopfield+networks" in page.url
    first = page.locator("#paragraph a.cite").first
    assert first.inner_text() == "[1]"
    cited_id = first.get_attribute("href").rsplit("/", 1)[1]
    assert page.locator("#cited li.paper").first.get_attribute("data-id") == cited_id
    # the page's own box: a second question, answered in place
    page.fill("#askq", "how do neural ODEs relate to residual networks")
    page.click("#askform button[type=submit]")
    page.wait_for_url("**/ask?q=how+do+neural+ODEs*")
    first = page.locator("#paragraph a.cite").first
    cited_id = first.get_attribute("href").rsplit("/", 1)[1]
    first.click()
    page.wait_for_url(f"**/paper/{cited_id}")
    assert atlas.by_id[cited_id].title in page.inner_text("h1")
    assert problems == []
    page.close()
