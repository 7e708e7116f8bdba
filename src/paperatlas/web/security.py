"""What keeps the local web app to its own pages: host and origin checks, CSRF tokens, access token, headers.

A web page elsewhere (another site in the same browser, or a DNS-rebinding name that points at 127.0.0.1) must
not read the reader's notes nor change their atlas. :func:`install` adds to a Flask app:

* a **Host check** (DNS rebinding): the ``Host`` header must name the bound host, ``localhost``, ``127.0.0.1``
  or ``::1`` (any port), else 400;
* an optional **access token** (required by ``serve`` on a non-loopback address): every browser session presents
  it once (``?token=...``, kept as a flag in the session; the URL is then cleaned by a redirect) or every request
  sends ``Authorization: Bearer ...``; else 401;
* **CSRF** protection of every request that is not GET/HEAD/OPTIONS: the request must come from the served origin
  (``Origin`` equal to it; without ``Origin``, a same-origin ``Referer`` or ``Sec-Fetch-Site: same-origin``) and
  carry the session's token (form field ``csrf_token`` or header ``X-CSRF-Token``), else 403. The token lives in
  Flask's signed session cookie (``SameSite=Strict``, ``HttpOnly``), signed with a random secret per app
  instance; templates render it with ``csrf_field()``;
* **security headers** on every response: :data:`CSP`, ``nosniff``, ``Referrer-Policy: same-origin``,
  ``X-Frame-Options: DENY`` (an ``after_request`` hook, and a WSGI wrapper for a response that hook never saw,
  such as a 500 from a failing hook);
* a request body limit (:data:`MAX_BODY_BYTES`, else 413).

:func:`make_server` is the waitress server of ``paperatlas serve``: :data:`SERVER_LIMITS` (idle and half-open
connections are closed, many of them do not stop it answering) and the same headers on the error responses
waitress writes itself (413 for a body over the limit, 400, 431, 500), which never reach the app.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import re
import secrets
from collections.abc import Callable, Iterable
from urllib.parse import urlencode, urlsplit

try:
    import resource
except ImportError:  # Windows: no file-descriptor limit to raise (_connection_limit keeps what was asked)
    resource = None  # type: ignore[assignment]

from flask import Flask, abort, redirect, request, session
from markupsafe import Markup, escape

#: The Content-Security-Policy of every response: scripts and everything else only from the app itself (no inline
#: script, no eval); inline styles are allowed (the templates' topic-colour dots and Plotly's SVG styling); images
#: also as ``data:`` URIs (the page icon).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")

#: The CSP of the pages that embed the map: as :data:`CSP` plus ``'unsafe-eval'`` for scripts. Plotly's WebGL
#: layer (regl) compiles its draw commands with ``Function(...)``; without it the map shows "WebGL is not
#: supported" (checked in Chromium). Still no inline script, so markup injected into a page cannot run.
CSP_MAP = CSP.replace("script-src 'self';", "script-src 'self' 'unsafe-eval';")

SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}

#: Largest request body accepted (bytes); waitress is given the same limit.
MAX_BODY_BYTES = 1_000_000

#: Shortest access token ``serve`` accepts (characters, after surrounding whitespace is stripped).
MIN_TOKEN_CHARS = 16

#: waitress settings of ``paperatlas serve`` (:class:`waitress.adjustments.Adjustments`). waitress's defaults stop
#: accepting at 100 open sockets (its own listening socket and trigger count), so 99 idle or half-open connections
#: silenced the server for up to 2.5 min (120 s ``channel_timeout`` swept every 30 s).
SERVER_LIMITS: dict[str, object] = {
    "threads": 4,  # requests answered at once
    "connection_limit": 1000,  # open connections before waitress stops accepting (lowered to the process's fd limit)
    "channel_timeout": 30,  # seconds a connection with no request in progress may stay silent before it is closed
    "cleanup_interval": 5,  # seconds between two sweeps for such connections
    "asyncore_use_poll": True,  # poll(), not select(), which cannot watch a socket numbered 1024 or more
    "backlog": 1024,  # connections the kernel queues while waitress is not accepting
    "max_request_header_size": 64 * 1024,  # bytes of request line and headers (else 431)
    "max_request_body_size": MAX_BODY_BYTES,  # bytes of body (else 413, written by waitress itself)
}
#: File descriptors kept for everything but connections (the atlas file, the model, logs) when the process's
#: limit bounds :data:`SERVER_LIMITS`'s ``connection_limit``.
_SPARE_FDS = 64

#: Host names that always reach the app from this machine.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name stays on this machine.

    Args:
        host: e.g. ``127.0.0.1``, ``localhost``, ``::1``, ``0.0.0.0``, ``192.168.1.5``.

    Returns:
        True for ``localhost`` and loopback IP addresses (``127.0.0.0/8``, ``::1``).
    """
    h = host.strip().strip("[]").lower()
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """The host part of a ``Host`` header (port dropped, IPv6 brackets removed, lower case).

    Args:
        host_header: e.g. ``localhost:8000``, ``[::1]:8000``, ``example.org``.

    Returns:
        The host name, e.g. ``localhost``, ``::1``; ``""`` when the header is malformed.
    """
    h = host_header.strip().lower()
    if h.startswith("["):
        name, _, rest = h[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else rest
    else:
        name, _, port = h.partition(":")
    return name if port == "" or port.isdigit() else ""


def safe_next(target: str | None) -> str | None:
    """A redirect target that stays on the app: an absolute path, else None.

    Control characters and whitespace are removed and backslashes read as slashes (as browsers do); what remains
    must start with a single ``/`` and have neither a scheme nor a host.

    Args:
        target: The requested target (e.g. a form's ``next`` field), or None.

    Returns:
        The cleaned path (with its query), or None when ``target`` could lead elsewhere or is empty.
    """
    if not target:
        return None
    t = _CONTROL_OR_SPACE.sub("", target).replace("\\", "/")
    if not t.startswith("/") or t.startswith("//"):
        return None
    try:
        parts = urlsplit(t)
    except ValueError:
        return None
    return t if not parts.scheme and not parts.netloc else None


def http_href(url: str | None) -> str | None:
    """The URL a page may link to: http(s) URLs as they are, DOIs (``doi:10.…``, ``10.…/…``) via doi.org.

    Args:
        url: A stored link (from a listing; anything may be in it).

    Returns:
        The href, or None for anything else (``javascript:``, ``data:``, relative links, ...): shown as text.
    """
    u = (url or "").strip()
    low = u.lower()
    if _CONTROL_OR_SPACE.search(u):
        return None
    if low.startswith(("http://", "https://")):
        return u if urlsplit(u).netloc else None
    doi = u[4:] if low.startswith("doi:") else u
    if re.fullmatch(r"10\.\d{4,9}/\S+", doi):
        return "https://doi.org/" + doi
    return None


def check_access_token(token: str) -> str:
    """The access token ``serve`` will require, or why it is refused.

    Args:
        token: As given (``--token`` or ``$PAPERATLAS_TOKEN``).

    Returns:
        The token without surrounding whitespace.

    Raises:
        ValueError: Shorter than :data:`MIN_TOKEN_CHARS` characters once stripped (one line, with a random token
            to use instead).
    """
    t = token.strip()
    if len(t) < MIN_TOKEN_CHARS:
        raise ValueError(f"the access token must be at least {MIN_TOKEN_CHARS} characters, not {len(t)} "
                         f"(anyone on the network could guess it); for example --token {secrets.token_urlsafe(18)}")
    return t


def _own_origin() -> str:
    return f"{request.scheme}://{request.host}".lower()


def _origin_ok() -> bool:
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin.strip().lower() == _own_origin()
    referer = request.headers.get("Referer")
    if referer:
        try:
            parts = urlsplit(referer.strip())
        except ValueError:
            return False
        return f"{parts.scheme}://{parts.netloc}".lower() == _own_origin()
    return request.headers.get("Sec-Fetch-Site", "").strip().lower() == "same-origin"


def csrf_token() -> str:
    """The session's CSRF token, made (and stored in the signed session cookie) on first use.

    Returns:
        The token (URL-safe text).
    """
    tok = session.get("csrf")
    if not isinstance(tok, str) or not tok:
        tok = session["csrf"] = secrets.token_urlsafe(32)
    return tok


def csrf_field() -> Markup:
    """The hidden form input carrying :func:`csrf_token` (every POST form renders it).

    Returns:
        ``<input type="hidden" name="csrf_token" value="...">``.
    """
    return Markup(f'<input type="hidden" name="csrf_token" value="{escape(csrf_token())}">')


def _same(got: object, want: object) -> bool:
    """Constant-time comparison of two non-empty strings (anything else: False)."""
    if not (isinstance(got, str) and isinstance(want, str) and got and want):
        return False
    return hmac.compare_digest(got.encode("utf-8", "replace"), want.encode("utf-8", "replace"))


def _token_ok() -> bool:
    return _same(request.headers.get("X-CSRF-Token") or request.form.get("csrf_token"), session.get("csrf"))


def install(app: Flask, allowed_hosts: Iterable[str] | None = LOOPBACK_HOSTS, access_token: str | None = None,
            secret_key: bytes | None = None, eval_endpoints: Iterable[str] = (),
            feed_endpoints: Iterable[str] = ()) -> None:
    """Add the checks and headers described in the module docstring to ``app``.

    Args:
        app: The Flask app.
        allowed_hosts: Host names the ``Host`` header may name (any port); the loopback names are always added.
            None: any host (only for a wildcard bind address, where ``serve`` requires ``access_token``).
        access_token: When given, every request must present it (``?token=``, then a session flag, or
            ``Authorization: Bearer``).
        secret_key: The session-signing secret; default a random one per app instance.
        eval_endpoints: Endpoints whose pages embed the map: they get :data:`CSP_MAP`.
        feed_endpoints: Endpoints a feed reader fetches (``/feed.atom``): a reader cannot log in or keep a
            session, so ``?token=`` is checked on every request there and answered directly (no session flag,
            no redirect to the URL without it).
    """
    app.secret_key = secret_key or secrets.token_bytes(32)
    app.config.update(SESSION_COOKIE_NAME="paperatlas_session", SESSION_COOKIE_SAMESITE="Strict",
                      SESSION_COOKIE_HTTPONLY=True, MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
                      MAX_FORM_MEMORY_SIZE=MAX_BODY_BYTES)
    hosts = None if allowed_hosts is None else \
        {host_name(h) or h.strip("[]").lower() for h in allowed_hosts} | set(LOOPBACK_HOSTS)
    eval_pages = set(eval_endpoints)
    feeds = set(feed_endpoints)
    app.jinja_env.globals.update(csrf_field=csrf_field, csrf_token=csrf_token)
    app.jinja_env.filters["http_href"] = http_href

    @app.before_request
    def check_request():
        if hosts is not None and host_name(request.host) not in hosts:
            abort(400, "unknown Host header (this app answers only to the address it is served at)")
        if access_token is not None and not session.get("auth"):
            bearer = request.headers.get("Authorization", "")
            if not (bearer.startswith("Bearer ") and _same(bearer[7:].strip(), access_token)):
                if not _same(request.args.get("token"), access_token):
                    abort(401, "this atlas needs its access token: open the URL with ?token=... once")
                if request.endpoint in feeds and request.method in _SAFE_METHODS:
                    return None  # a feed reader: the token stays in its URL, no session
                session["auth"] = True
                if request.method in _SAFE_METHODS:  # drop the token from the address bar and history
                    rest = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
                    return redirect(request.path + ("?" + urlencode(rest) if rest else ""))
        if request.method not in _SAFE_METHODS:
            if not _origin_ok():
                abort(403, "cross-site request refused (Origin/Referer is not this app)")
            if not _token_ok():
                abort(403, "missing or wrong CSRF token (reload the page)")
        return None

    @app.after_request
    def add_headers(resp):
        for k, v in SECURITY_HEADERS.items():
            resp.headers.setdefault(k, v)
        if request.endpoint in eval_pages and resp.status_code == 200 and resp.mimetype == "text/html":
            resp.headers["Content-Security-Policy"] = CSP_MAP
        return resp

    app.wsgi_app = with_security_headers(app.wsgi_app)  # type: ignore[method-assign]


def _missing_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The :data:`SECURITY_HEADERS` absent from ``headers`` (names compared case-insensitively)."""
    have = {k.lower() for k, _ in headers}
    return [(k, v) for k, v in SECURITY_HEADERS.items() if k.lower() not in have]


def with_security_headers(wsgi_app: Callable) -> Callable:
    """A WSGI app answering as ``wsgi_app`` does, with any of :data:`SECURITY_HEADERS` it left out added.

    Flask's ``after_request`` hooks do not all run when one of them fails (Flask then answers 500 with the
    response as it stands); this wrapper sees every response the app makes.

    Args:
        wsgi_app: The WSGI callable (a Flask app's ``wsgi_app``).

    Returns:
        The wrapped callable.
    """

    def app(environ, start_response):
        def start(status, headers, exc_info=None):
            return start_response(status, [*headers, *_missing_headers(headers)], exc_info)

        return wsgi_app(environ, start)

    return app


@functools.cache
def _headered_channel() -> type:
    """A waitress connection class that writes :data:`SECURITY_HEADERS` on waitress's own error responses.

    Those are body too large (413), malformed request (400), headers too large (431) and a failure after the app
    started answering (500): none reaches the app.
    """
    from waitress.channel import HTTPChannel
    from waitress.task import ErrorTask

    class HeaderedErrorTask(ErrorTask):
        def execute(self):  # ErrorTask.execute, with the headers added before the body is written
            e = self.request.error
            status, headers, body = e.to_response(self.channel.server.adj.ident)
            self.status = status
            self.response_headers.extend(headers)
            self.response_headers.extend(_missing_headers(self.response_headers))
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    class HeaderedChannel(HTTPChannel):
        error_task_class = HeaderedErrorTask

    return HeaderedChannel


def _connection_limit(wanted: int) -> int:
    """``wanted`` connections, or fewer when the process may not open that many files.

    The process's soft limit of open files is first raised as far as its hard limit allows (1,024 soft by default
    on many Linux systems).
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = wanted + _SPARE_FDS
        if soft != resource.RLIM_INFINITY and soft < need:
            new = need if hard == resource.RLIM_INFINITY else min(need, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
            soft = new
    except (OSError, ValueError, AttributeError):  # AttributeError: no resource module
        return wanted
    return wanted if soft == resource.RLIM_INFINITY else max(16, min(wanted, soft - _SPARE_FDS))


def make_server(app: Callable, host: str = "127.0.0.1", port: int = 8000, **overrides: object):
    """The waitress server of ``paperatlas serve``, bound and ready to ``run()``.

    Args:
        app: The WSGI app (:func:`paperatlas.web.create_app`).
        host: The address to listen on.
        port: The TCP port (0: a free one, see the server's ``effective_port``).
        **overrides: waitress settings replacing those of :data:`SERVER_LIMITS` (tests shorten the timeouts).

    Returns:
        The server (``waitress.server.create_server``'s): ``run()`` serves until interrupted, ``close()`` stops.
    """
    from waitress.server import BaseWSGIServer, create_server

    settings = {**SERVER_LIMITS, **overrides}
    settings["connection_limit"] = _connection_limit(int(settings["connection_limit"]))  # type: ignore[arg-type]
    sockets: dict = {}
    server = create_server(app, map=sockets, host=host, port=port, **settings)
    for listener in list(sockets.values()):  # one server per address the host resolves to, and waitress's trigger
        if isinstance(listener, BaseWSGIServer):
            listener.channel_class = _headered_channel()
    return server
