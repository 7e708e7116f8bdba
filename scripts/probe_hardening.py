"""The issue-13 probes, as an attacker and a careless user would run them, one line of outcome each.

Usage:
    python scripts/probe_hardening.py [--workdir DIR]

Builds a 12-paper atlas from ``tests/fixtures/iclr2021_excerpt.md`` (real embedding model) in ``--workdir`` and
runs every probe through the real command line (click's ``CliRunner``) and the real Flask app (its test client):
code execution from a crafted atlas, cross-site writes, Host and redirect checks, security headers, data loss
from an empty listing, unbounded inputs, output injection and malformed atlases. Each probe prints
``PROBE | OUTCOME``; run it on two commits to fill a before/after table. Nothing here is a test: the tests that
keep each behaviour are in ``tests/``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = ROOT / "tests" / "fixtures" / "iclr2021_excerpt.md"


def cli(*args: str):
    from paperatlas.cli import main

    return CliRunner().invoke(main, list(args))


def outcome(res) -> str:
    tb = "traceback" if res.exception and not isinstance(res.exception, SystemExit) else "no traceback"
    last = (res.output.strip().splitlines() or [""])[-1][:110]
    return f"exit {res.exit_code}, {tb}: {last}"


class _Marker:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (Path(self.path).write_text, ("pwned",))


def _table_x(p: Path) -> None:
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE IF NOT EXISTS x (a)")
    con.commit()
    con.close()


def report(name: str, result: str) -> None:
    print(f"{name} | {result}", flush=True)


def probes(work: Path) -> None:
    base = work / "base.db"
    res = cli("build", str(EXCERPT), "--db", str(base), "--venue", "ICLR 2021", "--year", "2021")
    assert res.exit_code == 0, res.output
    con = sqlite3.connect(base)
    pid = con.execute("SELECT id FROM papers ORDER BY id LIMIT 1").fetchone()[0]
    con.close()

    # 1. code execution from a shared atlas
    evil = work / "evil.db"
    shutil.copy(base, evil)
    marker = work / "PWNED"
    con = sqlite3.connect(evil)
    con.execute("INSERT OR REPLACE INTO models VALUES ('topics', ?)", (pickle.dumps(_Marker(str(marker))),))
    con.commit()
    con.close()
    res = cli("build", str(EXCERPT), "--db", str(evil), "--venue", "ICLR 2021", "--year", "2021")
    report("crafted pickle in models table, incremental build",
           f"code ran: {marker.exists()}; {outcome(res)}")

    # 2. the web app
    from paperatlas.web import create_app

    app = create_app(base, preload_model=False)
    c = app.test_client()
    for label, headers in (("Origin: http://evil.example", {"Origin": "http://evil.example"}),
                           ("Origin: null", {"Origin": "null"}), ("no Origin, no token", {})):
        r = c.post(f"/paper/{pid}/mark", data={"action": "like"}, headers=headers)
        from paperatlas import readinglist as rl

        liked = any(e.paper_id == pid and e.rating > 0 for e in rl.entries(base))
        report(f"cross-site POST like ({label})", f"HTTP {r.status_code}, like stored: {liked}")
        if liked:
            rl.rate(base, pid, 0)
    r = c.get("/list", headers={"Host": "evil.example"})
    report("GET /list with Host: evil.example (DNS rebinding)", f"HTTP {r.status_code}")
    r = c.get(f"/paper/{pid}")
    token = ""
    if b'name="csrf_token"' in r.data:
        token = r.data.split(b'name="csrf_token" value="')[1].split(b'"')[0].decode()
    r = c.post(f"/paper/{pid}/mark", data={"action": "add", "next": "/\t/evil.example", "csrf_token": token},
               headers={"Origin": "http://localhost"})
    report("redirect next=/<TAB>/evil.example", f"HTTP {r.status_code} Location: {r.headers.get('Location')}")
    r = c.get("/")
    wanted = ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options")
    report("security headers on /", ", ".join(f"{h}: {'yes' if h in r.headers else 'no'}" for h in wanted))
    csp = r.headers.get("Content-Security-Policy", "")
    report("CSP allows inline script", str("'unsafe-inline'" in csp.split("script-src")[-1].split(";")[0]
                                          if "script-src" in csp else (not csp or "default-src" not in csp)))
    r = c.get("/?k=abc&q=x")
    report("GET /?k=abc", f"HTTP {r.status_code}")
    r = c.get("/api/search?q=x&k=abc")
    report("GET /api/search?k=abc", f"HTTP {r.status_code}")
    import waitress

    started = []
    real_serve, waitress.serve = waitress.serve, lambda *a, **k: started.append(k.get("host"))
    try:
        res = cli("serve", "--db", str(base), "--host", "0.0.0.0", "--port", "8765")
    finally:
        waitress.serve = real_serve
    report("serve --host 0.0.0.0 without a token", f"served to the network: {bool(started)}; {outcome(res)}")

    # 3. data loss from a mistake
    for label, text, name, fmt in (("empty Markdown file", "", "empty.md", "paperlists-md"),
                                   ("'[]' as JSON", "[]", "empty.json", "paperlists-json")):
        db = work / f"loss-{name}.db"
        shutil.copy(base, db)
        f = work / name
        f.write_text(text)
        res = cli("build", str(f), "--db", str(db), "--format", fmt)
        n = sqlite3.connect(db).execute("SELECT count(*) FROM papers").fetchone()[0]
        report(f"build {label} (--format {fmt}) over a 12-paper atlas", f"{outcome(res)}; papers left: {n}")

    # 4. unbounded work
    from paperatlas.overrides import parse_keyphrases

    t0 = time.perf_counter()
    try:
        n = len(parse_keyphrases("; ".join(f"keyphrase {i}" for i in range(20_000))))
        kp = f"accepted {n}"
    except ValueError as e:
        kp = f"refused ({str(e)[:60]})"
    report("20,000 keyphrases in one edit", f"{kp} in {time.perf_counter() - t0:.2f} s")
    from paperatlas import readinglist as rl

    try:
        rl.set_note(base, pid, "x" * 5_000_000)
        note = "accepted"
    except ValueError as e:
        note = f"refused ({str(e)[:60]})"
    report("5 MB note", note)
    deep = work / "deep.json"
    deep.write_text("[" * 100_000)
    res = cli("build", str(deep), "--db", str(work / "deep.db"), "--format", "paperlists-json")
    report("'[' x 100,000 as a paperlists-json listing", outcome(res))
    bom = work / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"title": "A paper about BOMs", "author": "A. Author",
                                                    "abstract": "We study byte order marks."}]).encode())
    res = cli("build", str(bom), "--db", str(work / "bom.db"))
    report("JSON listing with a UTF-8 BOM", outcome(res))
    cr = work / "cr.md"
    cr.write_bytes(EXCERPT.read_bytes().replace(b"\n", b"\r"))
    res = cli("build", str(cr), "--db", str(work / "cr.db"), "--venue", "ICLR 2021")
    report("Markdown listing with CR-only line ends", outcome(res))

    # 5. output injection
    inj = work / "inj.db"
    shutil.copy(base, inj)
    con = sqlite3.connect(inj)
    links = json.dumps([{"url": "javascript:alert(1)", "kind": "paper", "label": "paper"}])
    con.execute("UPDATE papers SET status = '<script>alert(1)</script>', venue = '<img src=x onerror=alert(1)>', "
                "links = ?, title = '=HYPERLINK(\"http://evil.example\")' WHERE id = ?", (links, pid))
    con.commit()
    con.close()
    out = work / "topics.md"
    cli("publish", "--db", str(inj), "--format", "topics-md", "-o", str(out))
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": True}).render(out.read_text())
    import re

    handler = bool(re.search(r"<[a-z][^>]*\son[a-z]+=", html))
    js_link = 'href="javascript:' in html
    report("topics-md with status <script>, rendered", f"<script> element: {'<script' in html}; "
           f"element with an on*= handler: {handler}; javascript: link: {js_link}")
    out = work / "papers.csv"
    cli("publish", "--db", str(inj), "--format", "csv", "-o", str(out))
    import csv

    with open(out, newline="", encoding="utf-8") as fh:
        # a formula cell: = + @ first, or - before something that is not a number (negative coordinates are data)
        formula = any(cell[:1] in "=+@" and cell or (cell[:1] == "-" and not cell[1:2].isdigit())
                      for row in csv.reader(fh) for cell in row)
    report("CSV cell =HYPERLINK(...)", f"formula cell: {formula}")
    app2 = create_app(inj, preload_model=False)
    r = app2.test_client().get(f"/paper/{pid}")
    live = b'href="javascript:' in r.data
    report("javascript: link on the paper page", f"live link: {live}")

    # 6. malformed atlases
    for label, make in (("not SQLite", lambda p: p.write_bytes(b"hello, not a database" * 100)),
                        ("empty file", lambda p: p.write_bytes(b"")),
                        ("missing tables", _table_x)):
        p = work / f"bad-{label.replace(' ', '-')}.db"
        make(p)
        res = cli("search", "x", "--db", str(p), "--mode", "bm25")
        report(f"search on a malformed atlas ({label})", outcome(res))
    small = work / "small.db"
    res = cli("build", str(EXCERPT), "--db", str(small), "--topics", "4", "--venue", "ICLR 2021")
    two = work / "two.md"
    text = EXCERPT.read_text()
    parts = text.split("\n## ")
    two.write_text("\n## ".join(parts[:3]))
    res = cli("build", str(two), "--db", str(small), "--venue", "ICLR 2021", "--replace")
    if res.exit_code == 2 and "--replace" in res.output:  # a release without --replace
        res = cli("build", str(two), "--db", str(small), "--venue", "ICLR 2021")
    report("2-paper rebuild of an atlas with 4 sub-topics", outcome(res))
    jr = work / ".base.db.x.building-journal"
    jr.write_text("stale")
    cli("build", str(EXCERPT), "--db", str(base), "--venue", "ICLR 2021", "--year", "2021")
    report("stale *.building-journal after the next build", f"still there: {jr.exists()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=None)
    a = ap.parse_args()
    work = a.workdir or Path(tempfile.mkdtemp(prefix="probe13-"))
    work.mkdir(parents=True, exist_ok=True)
    probes(work)


if __name__ == "__main__":
    main()
