"""The server holds up (issue 26, part 6): idle and half-open connections do not silence ``paperatlas serve``, a
weak access token is refused, and every response carries the security headers, waitress's own error responses
(413 for a body over the limit, 400, 431) included.

Behaviour only: the socket timeouts below bound how long a test may hang, they are not speed goals.
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner
from flask import request

from paperatlas.cli import main
from paperatlas.store import Atlas
from paperatlas.web import create_app
from paperatlas.web.security import CSP, MAX_BODY_BYTES, MIN_TOKEN_CHARS, SECURITY_HEADERS, SERVER_LIMITS, make_server

ORIGIN = "http://localhost"  # the Flask test client's own origin
TOKEN_RE = re.compile(r'<input type="hidden" name="csrf_token" value="([^"]+)">')
#: Longest a request to a live server may take before the test calls it unanswered, seconds.
ANSWER_TIMEOUT = 20


def assert_secure(headers, what: str) -> None:
    """Every one of :data:`SECURITY_HEADERS` is in ``headers`` (a dict-like with case-insensitive names)."""
    for k, v in SECURITY_HEADERS.items():
        got = headers.get(k)
        assert got is not None, f"{what}: no {k} header"
        assert got == v or (k == "Content-Security-Policy" and got.startswith("default-src 'self'")), (what, k, got)


# --- weak tokens --------------------------------------------------------------------------------------------------


@pytest.fixture
def fake_server(monkeypatch):
    """``serve`` runs up to the server's start; the settings waitress would get are recorded, nothing listens."""
    calls: list[dict] = []

    class NotServing:
        effective_port = 8000

        def run(self) -> None:
            pass

    def create_server(app, map=None, **kw):  # noqa: A002 - waitress's name
        calls.append({"app": app, **kw})
        return NotServing()

    monkeypatch.setattr("waitress.server.create_server", create_server)
    monkeypatch.delenv("PAPERATLAS_TOKEN", raising=False)
    return calls


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "127.0.0.1"])
@pytest.mark.parametrize("token", [" ", "a", "", "x" * (MIN_TOKEN_CHARS - 1), f"  {'y' * (MIN_TOKEN_CHARS - 1)}  ",
                                   "\t" * 40])
def test_a_short_token_is_refused_with_one_line(sample_atlas, fake_server, monkeypatch, host, token):
    for args, env in ((["--token", token], None), ([], token)):  # --token and $PAPERATLAS_TOKEN alike
        if env is None:
            monkeypatch.delenv("PAPERATLAS_TOKEN", raising=False)
        else:
            monkeypatch.setenv("PAPERATLAS_TOKEN", env)
        res = CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--host", host, *args])
        if env is not None and not env:  # click reads an empty variable as unset: loopback serves, LAN refuses
            assert (res.exit_code == 0) == (host == "127.0.0.1"), res.output
            continue
        assert res.exit_code == 1 and fake_server == [], res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
        assert f"at least {MIN_TOKEN_CHARS} characters" in lines[0] and "Traceback" not in res.output


def test_a_long_enough_token_is_used_stripped(sample_atlas, fake_server):
    token = "0123456789abcdef"
    res = CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--host", "0.0.0.0", "--token",
                                    f"  {token}\n"])
    assert res.exit_code == 0, res.output
    assert f"?token={token}  " in res.output
    (call,) = fake_server
    client = call["app"].test_client()
    lan = {"Host": "192.168.1.5:8000"}
    assert client.get("/", headers={**lan, "Authorization": f"Bearer {token}"}).status_code == 200
    assert client.get("/", headers={**lan, "Authorization": f"Bearer {token[:-1]}"}).status_code == 401


def test_serve_gives_waitress_its_limits(sample_atlas, fake_server):
    assert CliRunner().invoke(main, ["serve", "--db", str(sample_atlas), "--port", "0"]).exit_code == 0
    (call,) = fake_server
    for k in ("threads", "channel_timeout", "cleanup_interval", "asyncore_use_poll", "max_request_header_size"):
        assert call[k] == SERVER_LIMITS[k], k
    assert call["max_request_body_size"] == MAX_BODY_BYTES
    assert 200 < call["connection_limit"] <= SERVER_LIMITS["connection_limit"]
    assert call["channel_timeout"] <= 60 and call["asyncore_use_poll"] is True


# --- headers on every response (Flask) ------------------------------------------------------------------------------


@pytest.fixture
def app_db(copy_atlas):
    db = copy_atlas()
    return create_app(db, preload_model=False), Atlas(db).papers[0].id


def test_security_headers_on_error_responses(app_db):
    app, pid = app_db
    client = app.test_client()
    tok = TOKEN_RE.search(client.get(f"/paper/{pid}").get_data(as_text=True)).group(1)
    form = {"action": "note", "csrf_token": tok}
    cases = {
        400: client.get("/", headers={"Host": "evil.example"}),
        "400 argument": client.get("/api/search?k=abc"),
        404: client.get("/no/such/page"),
        "404 paper": client.get("/paper/nope"),
        405: client.get(f"/paper/{pid}/mark"),
        "405 post": client.post("/topics", data={"csrf_token": tok}, headers={"Origin": ORIGIN}),
        413: client.post(f"/paper/{pid}/mark", data={**form, "note": "x" * (MAX_BODY_BYTES + 1)},
                         headers={"Origin": ORIGIN}),
    }
    for what, r in cases.items():
        assert r.status_code == int(str(what)[:3]), (what, r.status_code)
        assert_secure(r.headers, str(what))
        assert r.headers["Content-Security-Policy"] == CSP


def test_security_headers_on_a_500_even_when_a_response_hook_fails(copy_atlas):
    app = create_app(copy_atlas(), preload_model=False)

    @app.get("/boom")
    def boom():
        raise RuntimeError("a view that fails")

    @app.after_request
    def failing_hook(resp):  # registered last, so Flask runs it first, and again on its own 500: the app's header
        if request.path == "/teapot":  # hook never runs
            raise RuntimeError("a response hook that fails")
        return resp

    @app.get("/teapot")
    def teapot():
        return "short and stout", 418

    client = app.test_client()
    for url in ("/boom", "/teapot"):
        r = client.get(url)
        assert r.status_code == 500, url
        assert_secure(r.headers, url)


# --- a real server: idle connections, waitress's own errors ----------------------------------------------------------


def get(port: int, path: str = "/topics", headers: dict | None = None) -> http.client.HTTPResponse:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_TIMEOUT)
    con.request("GET", path, headers=headers or {})
    r = con.getresponse()
    r.body = r.read()  # type: ignore[attr-defined]
    con.close()
    return r


def raw(port: int, data: bytes) -> tuple[int, dict[str, str]]:
    """Send ``data`` as it is and read the answer's status code and headers (waitress's own errors close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT) as s:
        s.sendall(data)
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    head = got.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    return status, {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in head[1:] if ":" in line)}


def idle_sockets(port: int, n: int) -> list[socket.socket]:
    """``n`` connections that never finish a request: silent, a request line cut short, headers never ended."""
    out = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT)
        s.sendall([b"", b"GET /topics HT", b"GET /topics HTTP/1.1\r\nHost: 127.0.0.1\r\n"][i % 3])
        out.append(s)
    return out


@pytest.fixture(scope="module")
def serve_process(tmp_path_factory, sample_atlas):
    """A real ``paperatlas serve`` process on a copy of the sample atlas (``--port 0``): ``(port, process)``."""
    import shutil

    db = tmp_path_factory.mktemp("serve") / "atlas.db"
    shutil.copy(sample_atlas, db)
    proc = subprocess.Popen([sys.executable, "-m", "paperatlas.cli", "serve", "--db", str(db), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    port = None
    deadline = time.monotonic() + 120
    while port is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"Serving .* at http://127\.0\.0\.1:(\d+)/", line)
        port = int(m.group(1)) if m else None
    if port is None:
        proc.kill()
        pytest.fail(f"serve did not start: {proc.stdout.read() if proc.poll() is not None else ''}")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # drain its output
    yield port, proc
    proc.terminate()
    proc.wait(10)


def test_serve_answers_beside_200_idle_connections(serve_process):
    port, proc = serve_process
    assert get(port).status == 200
    idle = idle_sockets(port, 200)
    try:
        for _ in range(3):  # new connections, each after the 200 idle ones
            r = get(port)
            assert r.status == 200 and b"<html" in r.body.lower()
            assert_secure(r.headers, "GET beside idle connections")
        assert proc.poll() is None
    finally:
        for s in idle:
            s.close()


def test_waitress_own_errors_carry_the_security_headers(serve_process):
    port, _ = serve_process
    too_big = (f"POST /paper/x/mark HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: text/plain\r\n"
               f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n").encode()
    status, h = raw(port, too_big)
    assert status == 413 and h.get("content-security-policy") == CSP
    assert_secure({k: h.get(k.lower()) for k in SECURITY_HEADERS}, "waitress 413")
    chunked = (f"POST /paper/x/mark HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\n\r\n"
               f"{MAX_BODY_BYTES + 1:x}\r\n").encode() + b"x" * (MAX_BODY_BYTES + 1) + b"\r\n0\r\n\r\n"
    status, h = raw(port, chunked)
    assert status == 413 and h.get("x-frame-options") == "DENY"
    status, h = raw(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Without Colon\r\n\r\n")
    assert status == 400 and h.get("x-content-type-options") == "nosniff"
    big = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000)
                                                              for i in range(80)) + b"\r\n"
    status, h = raw(port, big)
    assert status == 431 and h.get("content-security-policy") == CSP
    # the app's own 404 through the real server too
    r = get(port, "/no/such/page")
    assert r.status == 404
    assert_secure(r.headers, "404 over HTTP")


@pytest.fixture
def thread_server(copy_atlas):
    """``make_server`` in a thread with short idle timeouts (1 s, swept every 1 s): ``(server, port)``."""
    srv = make_server(create_app(copy_atlas(), preload_model=False), host="127.0.0.1", port=0, threads=2,
                      channel_timeout=1, cleanup_interval=1)
    threading.Thread(target=srv.run, daemon=True).start()
    yield srv, srv.effective_port
    srv.close()


def test_idle_connections_are_closed_by_the_server(thread_server):
    _, port = thread_server
    idle = idle_sockets(port, 30)
    try:
        for s in idle:
            s.settimeout(ANSWER_TIMEOUT)
            try:
                data = s.recv(1024)
            except ConnectionResetError:
                data = b""
            assert data == b"", data  # closed by the server (an idle one without a word)
        assert get(port).status == 200
    finally:
        for s in idle:
            s.close()


def test_waitress_defaults_would_not_answer(copy_atlas):
    """The finding this guards against: with waitress's own connection limit (100), 99 idle connections leave no
    room for a reader's request (it waits in the kernel's queue until an idle one times out)."""
    srv = make_server(create_app(copy_atlas(), preload_model=False), host="127.0.0.1", port=0, threads=2,
                      connection_limit=100, channel_timeout=120, cleanup_interval=30)
    threading.Thread(target=srv.run, daemon=True).start()
    port = srv.effective_port
    idle = idle_sockets(port, 99)
    try:
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while len(srv.active_channels) < 99 and time.monotonic() < deadline:  # waitress has accepted them all
            time.sleep(0.05)
        con = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
        with pytest.raises(TimeoutError):
            con.request("GET", "/topics")
            con.getresponse()
        con.close()
    finally:
        for s in idle:
            s.close()
        srv.close()
