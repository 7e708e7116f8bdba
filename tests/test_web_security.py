"""The local web app refuses what a web page elsewhere sends (issue 13): CSRF (origin + per-session token), Host
check against DNS rebinding, redirects only to its own routes, security headers (CSP without inline scripts, in
Chromium too), the access token of a non-loopback ``serve``, bounded work per request, only http(s)/DOI links, and
a Hypothesis fuzz of every route."""

from __future__ import annotations

import re
import sqlite3
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperatlas import overrides
from paperatlas import readinglist as rl
from paperatlas.cli import main
from paperatlas.model import Link
from paperatlas.overrides import MAX_KEYPHRASES, parse_keyphrases
from paperatlas.store import Atlas
from paperatlas.web import create_app
from paperatlas.web.security import CSP, CSP_MAP, http_href, safe_next

ORIGIN = "http://localhost"  # the Flask test client's own origin
LAN_TOKEN = "s3cret-0123456789"  # an access token as long as serve requires (16+ characters)
TOKEN_RE = re.compile(r'<input type="hidden" name="csrf_token" value="([^"]+)">')


def token_of(client, pid: str) -> str:
    """The CSRF token as a browser reads it: from the hidden input of the paper page's forms."""
    return TOKEN_RE.search(client.get(f"/paper/{pid}").get_data(as_text=True)).group(1)


def version(db) -> tuple:
    """Everything a POST may change: the reader's marks, lists and overrides and the papers' TL;DRs/keyphrases."""
    con = sqlite3.connect(db)
    try:
        return tuple(tuple(map(tuple, con.execute(q).fetchall())) for q in (
            "SELECT * FROM marks ORDER BY paper_id", "SELECT * FROM list_items ORDER BY 1, 2",
            "SELECT * FROM overrides ORDER BY 1, 2", "SELECT id, tldr, keyphrases FROM papers ORDER BY id"))
    finally:
        con.close()


@pytest.fixture
def app_db(copy_atlas):
    db = copy_atlas()
    app = create_app(db, preload_model=False)
    return app, db, Atlas(db).papers[0].id


# --- 1. CSRF ---------------------------------------------------------------------------------------------------


def test_every_form_carries_the_session_token_in_a_strict_httponly_cookie(app_db):
    app, _, pid = app_db
    client = app.test_client()
    res = client.get(f"/paper/{pid}")
    html = res.get_data(as_text=True)
    assert html.count('<form method="post"') == html.count('name="csrf_token"') >= 4
    assert len(set(TOKEN_RE.findall(html))) == 1
    cookie = res.headers["Set-Cookie"]
    assert "SameSite=Strict" in cookie and "HttpOnly" in cookie
    # the token stays the same for the session; another browser (client) gets another one
    assert token_of(client, pid) == TOKEN_RE.search(html).group(1)
    assert token_of(app.test_client(), pid) != token_of(client, pid)


@pytest.mark.parametrize(("headers", "ok"), [
    ({"Origin": ORIGIN}, True),
    ({"Origin": ORIGIN.upper()}, True),
    ({"Referer": ORIGIN + "/paper/x"}, True),
    ({"Sec-Fetch-Site": "same-origin"}, True),
    ({}, False),
    ({"Origin": "http://evil.example"}, False),
    ({"Origin": "null"}, False),
    ({"Origin": "http://localhost:8001"}, False),
    ({"Origin": "https://localhost"}, False),
    ({"Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"}, False),
    ({"Referer": "http://evil.example/paper/x"}, False),
    ({"Referer": "http://localhost.evil.example/"}, False),
    ({"Sec-Fetch-Site": "cross-site"}, False),
    ({"Sec-Fetch-Site": "same-site"}, False),
])
def test_post_needs_the_served_origin(app_db, headers, ok):
    app, db, pid = app_db
    client = app.test_client()
    tok = token_of(client, pid)
    before = version(db)
    res = client.post(f"/paper/{pid}/mark", data={"action": "like", "csrf_token": tok}, headers=headers)
    assert res.status_code == (302 if ok else 403)
    assert (version(db) != before) == ok


@pytest.mark.parametrize("how", ["missing", "wrong", "other session", "empty", "header"])
def test_post_needs_the_session_token(app_db, how):
    app, db, pid = app_db
    client = app.test_client()
    tok = token_of(client, pid)
    other = token_of(app.test_client(), pid)
    data, headers = {"action": "note", "note": "hi"}, {"Origin": ORIGIN}
    if how == "wrong":
        data["csrf_token"] = tok[:-2] + "xx"
    elif how == "other session":
        data["csrf_token"] = other
    elif how == "empty":
        data["csrf_token"] = ""
    elif how == "header":
        headers["X-CSRF-Token"] = tok
    before = version(db)
    res = client.post(f"/paper/{pid}/mark", data=data, headers=headers)
    assert res.status_code == (302 if how == "header" else 403)
    # a client without a session cookie (a page elsewhere: SameSite=Strict) is refused even with a token
    assert app.test_client().post(f"/paper/{pid}/mark", data={**data, "csrf_token": tok},
                                  headers=headers).status_code == 403
    assert (version(db) != before) == (how == "header")
    # the token of one app instance is worthless for another (a random secret per instance)
    app2 = create_app(db, preload_model=False)
    c2 = app2.test_client()
    c2.set_cookie("paperatlas_session", client.get_cookie("paperatlas_session").value)
    assert c2.post(f"/paper/{pid}/mark", data={"action": "like", "csrf_token": tok},
                   headers={"Origin": ORIGIN}).status_code == 403


def test_load_benchmark_interface(app_db):
    """GET /paper/<id>, read the hidden input, POST with Origin = the server's origin: accepted (both routes)."""
    app, db, pid = app_db
    client = app.test_client()
    tok = token_of(client, pid)
    for url, form in ((f"/paper/{pid}/mark", {"action": "add", "list": "bench"}),
                      (f"/paper/{pid}/edit", {"tldr": "Benchmarked.", "keyphrases": "load; test"})):
        assert client.post(url, data={**form, "csrf_token": tok}, headers={"Origin": ORIGIN}).status_code == 302
    assert rl.entries(db)[0].lists == ["bench"] and Atlas(db).by_id[pid].keyphrases == ["load", "test"]


# --- 2. Host check (DNS rebinding) -----------------------------------------------------------------------------


def test_host_header_must_name_this_app(app_db):
    app, db, pid = app_db
    client = app.test_client()
    for host in ("localhost", "localhost:8000", "127.0.0.1:8765", "[::1]:8000", "LOCALHOST:1"):
        assert client.get("/list", headers={"Host": host}).status_code == 200, host
    tok = token_of(client, pid)
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.nip.io:8000", "localhost:abc", "", "[::1"):
        assert client.get("/list", headers={"Host": host}).status_code == 400, host
        res = client.post(f"/paper/{pid}/mark", data={"action": "like", "csrf_token": tok},
                          headers={"Host": host, "Origin": f"http://{host}"})
        assert res.status_code == 400, host
    assert rl.entries(db) == []
    # the bound host is allowed too; any other is not
    lan = create_app(db, preload_model=False, allowed_hosts=("192.168.1.5",)).test_client()
    assert lan.get("/", headers={"Host": "192.168.1.5:8000"}).status_code == 200
    assert lan.get("/", headers={"Host": "192.168.1.6:8000"}).status_code == 400


# --- 3. redirects ----------------------------------------------------------------------------------------------

OFFSITE = ["/\t/evil.example", "//evil.example", "/\\evil.example", "\\/evil.example", "https://evil.example/",
           "javascript:alert(1)", " //evil.example", "/\n/evil.example", "/\x00/evil.example", "http:/evil.example",
           "evil.example", "", "\x7f//evil.example", "/ /evil.example"]


@pytest.mark.parametrize("nxt", OFFSITE)
def test_next_redirects_only_to_own_routes(app_db, nxt):
    app, _, pid = app_db
    client = app.test_client()
    tok = token_of(client, pid)
    res = client.post(f"/paper/{pid}/mark", data={"action": "read", "csrf_token": tok, "next": nxt},
                      headers={"Origin": ORIGIN})
    assert res.status_code == 302 and res.headers["Location"] == f"/paper/{pid}"
    assert safe_next(nxt) is None


def test_next_keeps_an_own_path(app_db):
    app, _, pid = app_db
    client = app.test_client()
    res = client.post(f"/paper/{pid}/mark", data={"action": "read", "csrf_token": token_of(client, pid),
                                                  "next": "/list?list=reading"}, headers={"Origin": ORIGIN})
    assert res.headers["Location"] == "/list?list=reading"


# --- 4. security headers ----------------------------------------------------------------------------------------


def test_security_headers_on_every_response(app_db):
    app, _, pid = app_db
    client = app.test_client()
    tok = token_of(client, pid)
    responses = [client.get(u) for u in ("/", "/map", "/list", "/foryou", "/topics", f"/paper/{pid}", "/api/map",
                                         "/api/search?q=x", "/static/style.css", "/static/mapmount.js",
                                         "/mapview/static/atlasmap.js", "/paper/nope", "/api/search?k=abc")]
    responses += [client.post(f"/paper/{pid}/mark", data={"action": "like"}),
                  client.post(f"/paper/{pid}/mark", data={"action": "like", "csrf_token": tok},
                              headers={"Origin": ORIGIN}),
                  client.get("/", headers={"Host": "evil.example"}), client.delete("/list")]
    assert [r.status_code for r in responses] == [200] * 11 + [404, 400, 403, 302, 400, 403]
    for i, r in enumerate(responses):
        h = r.headers
        assert h["Content-Security-Policy"] == (CSP_MAP if i < 2 else CSP)  # the map's pages: CSP_MAP
        assert h["X-Content-Type-Options"] == "nosniff" and h["X-Frame-Options"] == "DENY"
        assert h["Referrer-Policy"] == "same-origin"
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["default-src"] == "'self'" and directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'none'" and "unsafe-eval" not in CSP
    assert "unsafe-inline" not in directives["script-src"] and "unsafe-inline" not in directives["default-src"]
    # only the pages embedding the map allow eval (Plotly's WebGL layer, regl, compiles with Function)
    assert CSP_MAP == CSP.replace("script-src 'self';", "script-src 'self' 'unsafe-eval';")
    assert "unsafe-inline" not in CSP_MAP.split("script-src", 1)[1].split(";", 1)[0]


def test_pages_have_no_inline_script(app_db):
    app, _, pid = app_db
    client = app.test_client()
    for url in ("/", "/map", f"/paper/{pid}", "/list", "/foryou", "/topics", "/paper/nope"):
        html = client.get(url).get_data(as_text=True)
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert re.search(r'\ssrc="/', tag), (url, tag)
        assert not re.search(r"\son[a-z]+=", html), url  # no inline event handlers either
        assert re.findall(r"<script[^>]*>(.*?)</script>", html, re.S) == [""] * html.count("<script"), url


# --- 5. serve on a non-loopback address needs a token ------------------------------------------------------------


class _NotServing:
    """What the fake ``create_server`` returns: ``serve`` calls ``run()``, which returns at once."""

    effective_port = 8000

    def run(self) -> None:
        pass


@pytest.fixture
def fake_waitress(monkeypatch):
    """The settings ``serve`` gives waitress's ``create_server`` (through ``make_server``), no server started."""
    calls: list[dict] = []

    def create_server(app, map=None, **kw):  # noqa: A002 - waitress's name
        calls.append({"app": app, **kw})
        return _NotServing()

    monkeypatch.setattr("waitress.server.create_server", create_server)
    monkeypatch.delenv("PAPERATLAS_TOKEN", raising=False)
    return calls


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.org"])
def test_serve_refuses_a_non_loopback_host_without_token(sample_atlas, fake_waitress, host):
    res = CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--host", host])
    assert res.exit_code != 0 and fake_waitress == []
    assert "warning" in res.output and "network" in res.output and "--token" in res.output


def test_serve_with_token_requires_it_from_every_browser(sample_atlas, fake_waitress, monkeypatch):
    res = CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--host", "0.0.0.0", "--token", LAN_TOKEN])
    assert res.exit_code == 0, res.output
    assert "warning" in res.output and "?token=" + LAN_TOKEN in res.output
    (call,) = fake_waitress
    assert call["host"] == "0.0.0.0" and call["max_request_body_size"] == 1_000_000
    client = call["app"].test_client()
    lan = {"Host": "192.168.1.5:8000"}
    assert client.get("/", headers=lan).status_code == 401
    assert client.get("/list?token=wrong", headers=lan).status_code == 401
    assert client.get("/static/style.css", headers=lan).status_code == 401
    res = client.get("/list?list=a&token=" + LAN_TOKEN, headers=lan)
    assert res.status_code == 302 and res.headers["Location"] == "/list?list=a"  # token dropped from the URL
    assert client.get("/list", headers=lan).status_code == 200  # once per session
    bearer = {**lan, "Authorization": "Bearer " + LAN_TOKEN}
    assert call["app"].test_client().get("/", headers=bearer).status_code == 200
    assert call["app"].test_client().get("/", headers={**lan, "Authorization": "Bearer nope"}).status_code == 401
    # the token alone does not allow a write: origin and CSRF token are still needed
    pid = Atlas(sample_atlas).papers[0].id
    assert client.post(f"/paper/{pid}/mark", data={"action": "like"}, headers=lan).status_code == 403
    # $PAPERATLAS_TOKEN works as --token
    monkeypatch.setenv("PAPERATLAS_TOKEN", "fromenv-0123456789")
    assert CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--host", "0.0.0.0"]).exit_code == 0
    assert fake_waitress[-1]["app"].test_client().get("/?token=fromenv-0123456789").status_code == 302


def test_serve_on_loopback_without_token_and_checks_host(sample_atlas, fake_waitress):
    res = CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--port", "8123"])
    assert res.exit_code == 0 and "warning" not in res.output
    client = fake_waitress[0]["app"].test_client()
    assert client.get("/", headers={"Host": "127.0.0.1:8123"}).status_code == 200
    assert client.get("/", headers={"Host": "rebind.evil.example:8123"}).status_code == 400
    assert fake_waitress[0]["max_request_body_size"] == 1_000_000


def test_create_app_access_token(sample_atlas):
    client = create_app(sample_atlas, preload_model=False, access_token="tok").test_client()
    assert client.get("/api/search?q=x").status_code == 401
    assert client.get("/api/search?q=x&token=tok").status_code == 302
    assert client.get("/api/search?q=x").status_code == 200


# --- 6. bounded work ---------------------------------------------------------------------------------------------


def test_parse_keyphrases_is_linear_and_bounded(monkeypatch):
    """Only the first MAX_KEYPHRASES distinct phrases are checked and kept, however many the field holds (its time
    on these inputs: ``benchmarks/hostile_inputs.py --only keyphrases``)."""
    checked: list[str] = []
    real_check = overrides.check_keyphrase
    monkeypatch.setattr(overrides, "check_keyphrase", lambda k, paper=None: checked.append(k) or real_check(k, paper))
    with pytest.raises(ValueError, match="more than 50"):
        parse_keyphrases(";".join(f"phrase {i}" for i in range(100_000)))
    many_repeats = ";".join(["same"] * 200_000 + [f"k{i}" for i in range(MAX_KEYPHRASES - 1)])
    assert len(checked) == MAX_KEYPHRASES  # the other 99,950 are only counted
    checked.clear()
    assert len(parse_keyphrases(many_repeats)) == MAX_KEYPHRASES  # repeats do not count
    assert len(checked) == MAX_KEYPHRASES
    with pytest.raises(ValueError, match="longer than 100"):
        parse_keyphrases("ok; " + "x" * 101)
    assert parse_keyphrases("a; b ;A; c   d;;") == ["a", "b", "c d"]


def test_notes_and_edits_are_bounded(app_db):
    app, db, pid = app_db
    client = app.test_client()
    tok = token_of(client, pid)

    def post(url, **form):
        return client.post(url, data={**form, "csrf_token": tok}, headers={"Origin": ORIGIN})

    assert post(f"/paper/{pid}/mark", action="note", note="x" * 100_001).status_code == 400
    assert post(f"/paper/{pid}/mark", action="note", note="é" * 50_001).status_code == 400  # bytes, not chars
    assert post(f"/paper/{pid}/mark", action="note", note="x" * 99_000).status_code == 302
    with pytest.raises(ValueError, match="100 kB"):  # the CLI's path is bounded as well
        rl.set_note(db, pid, "y" * 2_000, append=True)
    assert len(rl.entries(db)[0].note) == 99_000
    assert post(f"/paper/{pid}/mark", action="note", note="x" * 2_000_000).status_code == 413
    assert post(f"/paper/{pid}/mark", action="add", list="l" * 201).status_code == 400
    assert post(f"/paper/{pid}/edit", keyphrases=";".join(f"k{i}" for i in range(51))).status_code == 400
    assert post(f"/paper/{pid}/edit", keyphrases="a; " + "b" * 101).status_code == 400
    assert post(f"/paper/{pid}/edit", tldr="t" * 5001).status_code == 400
    # their time: benchmarks/hostile_inputs.py --only edit
    assert post(f"/paper/{pid}/edit", keyphrases=";".join(f"k{i}" for i in range(100_000))).status_code == 400
    assert post(f"/paper/{pid}/edit", keyphrases=";".join(f"k{i}" for i in range(200_000))).status_code == 413


@pytest.mark.parametrize(("query", "status"), [
    ("/api/search?q=net&k=abc", 400), ("/api/search?q=net&k=-5", 200), ("/api/search?q=net&k=10**9", 400),
    ("/api/search?q=net&k=1000000000", 200), ("/api/search?q=net&k=99999999999999999999", 400),
    ("/api/search?q=net&year=abc", 200), ("/?q=net&year=abc", 200), ("/foryou?k=abc", 400),
    ("/foryou?k=-1", 200), ("/?topic=abc&q=x", 200), ("/?status=%00", 200), ("/api/search?k=", 200),
])
def test_bad_query_parameters_are_400_or_clamped(app_db, query, status):
    app, _, _ = app_db
    res = app.test_client().get(query)
    assert res.status_code == status
    if status == 200 and query.startswith("/api/search") and "k=-5" in query:
        assert len(res.get_json()["results"]) == 1  # clamped to at least 1
    if "k=1000000000" in query:
        assert len(res.get_json()["results"]) <= 500


# --- 7. only http(s)/DOI links -----------------------------------------------------------------------------------


def test_only_http_and_doi_links_are_live(app_db):
    app, _, pid = app_db
    p = app.config["ATLAS"].by_id[pid]
    p.links = [Link("javascript:alert(document.cookie)", "code"), Link("JaVaScRiPt:alert(2)", "pdf"),
               Link("data:text/html,<script>alert(3)</script>", "other"), Link("/list", "other"),
               Link("java\tscript:alert(4)", "other"), Link("https://example.org/p.pdf", "pdf"),
               Link("doi:10.1234/abc.5", "other"), Link("10.5555/xyz", "other")]
    html = app.test_client().get(f"/paper/{pid}").get_data(as_text=True)
    links = html.split("<h2>Links</h2>", 1)[1].split("</ul>", 1)[0]
    hrefs = re.findall(r'href="([^"]*)"', links)
    assert hrefs == ["https://example.org/p.pdf", "https://doi.org/10.1234/abc.5", "https://doi.org/10.5555/xyz"]
    assert "javascript:alert(document.cookie)" in links and "&lt;script&gt;" in links  # shown as text
    assert http_href("https:///nohost") is None and http_href(" http://a.b/ ") == "http://a.b/"


def test_note_links_with_unsafe_schemes_are_text(app_db):
    app, _, pid = app_db
    client = app.test_client()
    note = "[a](javascript:alert(1)) [b](data:text/html,x) [c](vbscript:x) <a href='javascript:y'>d</a>"
    client.post(f"/paper/{pid}/mark", data={"action": "note", "note": note, "csrf_token": token_of(client, pid)},
                headers={"Origin": ORIGIN})
    for url in (f"/paper/{pid}", "/list"):
        html = client.get(url).get_data(as_text=True)
        assert "[a](javascript:alert(1))" in html
        assert not re.search(r'<a [^>]*href="(javascript|data|vbscript):', html, re.I)
        assert "<a href='javascript" not in html


# --- 8. fuzz every route -----------------------------------------------------------------------------------------

ROUTES = ["/", "/api/search", "/paper/{pid}", "/paper/{pid}/edit", "/paper/{pid}/mark", "/list", "/foryou",
          "/topics", "/topic/{tid}", "/map", "/api/map", "/static/{file}", "/mapview/static/{file}", "/{junk}"]
AUTH = ["valid", "no token", "bad token", "evil origin", "null origin", "no origin", "referer", "fetch-site"]
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
FIELDS = ["q", "k", "year", "status", "venue", "author", "topic", "keyphrase", "list", "no_topic", "no_keyphrase",
          "action", "note", "next", "tldr", "keyphrases", "csrf_token", "token"]
VALUES = st.one_of(text, st.sampled_from(["like", "dislike", "unrate", "read", "unread", "add", "remove", "note",
                                         "-5", "abc", "10**9", "0", "2021", "2019-2021", "Oral", "//evil.example",
                                         "/\t/evil", "javascript:x", "a;b;A"]),
                   st.integers(-10**12, 10**12).map(str))
PAIRS = st.lists(st.tuples(st.one_of(st.sampled_from(FIELDS), text), VALUES), max_size=6)
#: Hypothesis examples per route (each with a random method, credentials, path parameters, query and form).
FUZZ_EXAMPLES = 150
FUZZ_COUNTS: dict[str, dict[str, int]] = {}


@pytest.mark.parametrize("route", ROUTES)
def test_fuzz_every_route_never_500_never_unauthorised_write(copy_atlas, route):
    db = copy_atlas()
    app = create_app(db, preload_model=False)
    atlas = app.config["ATLAS"]
    client = app.test_client()
    first = atlas.papers[0].id
    tok = token_of(client, first)
    pids = st.one_of(st.sampled_from([p.id for p in atlas.papers[:5]]), text)
    tids = st.one_of(st.sampled_from([str(t) for t in list(atlas.topics)[:5]]), text)
    counts = FUZZ_COUNTS.setdefault(route, {})

    @settings(max_examples=FUZZ_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(method=st.sampled_from(["GET", "POST", "GET", "POST", "HEAD", "PUT"]),
           auth=st.sampled_from(AUTH), pid=pids, tid=tids, junk=text,
           file=st.sampled_from(["style.css", "mapmount.js", "atlasmap.js", "../app.py", "nope"]),
           query=PAIRS, form=PAIRS)
    def run(method, auth, pid, tid, junk, file, query, form):
        q = lambda s: urllib.parse.quote(s, safe="")  # noqa: E731
        path = route.format(pid=q(pid), tid=q(tid), junk=q(junk), file=file)
        counts[method] = counts.get(method, 0) + 1
        headers = {"Origin": ORIGIN}
        data = dict(form)
        data.setdefault("csrf_token", tok)
        if auth == "no token":
            data.pop("csrf_token")
        elif auth == "bad token":
            data["csrf_token"] = tok[::-1]
        elif auth == "evil origin":
            headers = {"Origin": "http://evil.example"}
        elif auth == "null origin":
            headers = {"Origin": "null"}
        elif auth == "no origin":
            headers = {}
        elif auth == "referer":
            headers = {"Referer": ORIGIN + "/paper/x"}
        elif auth == "fetch-site":
            headers = {"Sec-Fetch-Site": "same-origin"}
        before = version(db)
        res = client.open(path, method=method, query_string=query, data=data if method != "GET" else None,
                          headers=headers)
        assert res.status_code < 500, (method, path, query, data, res.status_code)
        authorised = data.get("csrf_token") == tok and auth not in ("evil origin", "null origin", "no origin")
        if not authorised:
            assert version(db) == before, (method, path, data, auth)
        if method == "POST" and authorised and res.status_code < 400:
            assert res.status_code == 302 and res.headers["Location"].startswith("/")

    run()
    per_method = ", ".join(f"{m} {n}" for m, n in sorted(counts.items()))
    print(f"\nfuzz {route}: {sum(counts.values())} examples ({per_method})")
    assert sum(counts.values()) >= FUZZ_EXAMPLES and {"GET", "POST"} <= set(counts)


# --- in Chromium: pages and the map work under the CSP; a page elsewhere cannot write ----------------------------


@pytest.mark.browser
def test_pages_and_map_work_under_the_csp_in_chromium(served, browser):
    db, base = served
    atlas = Atlas(db)
    pid = atlas.papers[0].id
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
            if m.type == "error" or (m.type == "warning" and "GL Driver" not in m.text) else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.add_init_script("""document.addEventListener('securitypolicyviolation',
        e => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));""")
    for url in ("/map", "/"):
        res = page.goto(base + url)
        assert res.headers["content-security-policy"] == CSP_MAP
        page.wait_for_selector("#atlasmap[data-ready='1']", timeout=30_000)
        assert "WebGL is not supported" not in page.inner_text("#atlasmap")  # drawn, not the fallback
        n = page.evaluate("""() => document.getElementById('atlasmap').atlasMap.gd.data
            .filter(t => t.name !== 'matches' && !String(t.name).startsWith('region:'))
            .reduce((n, t) => n + t.x.length, 0)""")
        assert n == 60
    page.fill(".atlasmap-search", "network")
    page.wait_for_function("document.getElementById('atlasmap').dataset.matches !== ''")
    for url in (f"/paper/{pid}", "/topics", f"/topic/{atlas.papers[0].topic_id}", "/list", "/foryou"):
        assert page.goto(base + url).headers["content-security-policy"] == CSP
    # a real form submission carries the hidden token and the Origin: accepted
    page.goto(f"{base}/paper/{pid}")
    page.click("#like")
    assert "Liked" in page.inner_text("#like")
    page.fill("#note", "under CSP")
    page.click("#savenote")
    assert page.input_value("#note") == "under CSP"
    page.close()
    assert console == [], console
    assert rl.entries(db)[0].note == "under CSP"


@pytest.mark.browser
def test_a_page_elsewhere_cannot_write_in_chromium(served, browser):
    """A page on another origin auto-submits a form (with a token it read earlier) to the app: refused."""
    db, base = served
    pid = Atlas(db).papers[0].id
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(f"{base}/paper/{pid}")  # the reader has the app open: a session cookie exists
    tok = page.get_attribute("input[name=csrf_token]", "value")
    evil_html = (f'<form id="f" method="post" action="{base}/paper/{pid}/mark">'
                 f'<input name="action" value="like"><input name="csrf_token" value="{tok}"></form>'
                 '<script>document.getElementById("f").submit()</script>').encode()

    class Evil(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(evil_html)

        def log_message(self, *args):
            pass

    evil = ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        statuses: list[int] = []
        page.on("response", lambda r: statuses.append(r.status) if r.url.endswith("/mark") else None)
        page.goto(f"http://localhost:{evil.server_address[1]}/")
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)
        assert statuses == [403]
        assert rl.entries(db) == []
    finally:
        evil.shutdown()
        ctx.close()
