"""A local stub of an OpenAI-compatible chat-completions server, for the generative-backend tests.

Shared by tests/test_tldr_llm.py (generated TL;DRs) and tests/test_ask_llm.py (generated answers); not a conftest
fixture so that each test file says where its server comes from.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    """A real HTTP server on 127.0.0.1 speaking the chat-completions protocol with canned answers.

    ``answers`` is consumed in order; an ``int`` answer is sent as that HTTP status with an error body, a
    ``bytes`` answer is sent raw (for malformed JSON), a ``str`` becomes choices[0].message.content, and a callable
    is called with the request body (a dict) and its result answered as above.
    Every request body is recorded in ``requests``, every path in ``paths``."""

    def __init__(self):
        self.answers: list = []
        self.requests: list[dict] = []
        self.paths: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.paths.append(self.path)
                fake.requests.append(json.loads(body))
                answer = fake.answers.pop(0) if fake.answers else "no canned answer left"
                if callable(answer):
                    answer = answer(fake.requests[-1])
                if isinstance(answer, int):
                    data, status = b'{"error": {"message": "model exploded"}}', answer
                elif isinstance(answer, bytes):
                    data, status = answer, 200
                else:
                    data, status = json.dumps({
                        "id": "chatcmpl-1", "object": "chat.completion", "model": fake.requests[-1].get("model"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": answer}}],
                    }).encode(), 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def dead_base_url() -> str:
    """A base URL on a port nothing listens on (bound, then closed): connecting is refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"
