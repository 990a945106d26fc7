"""A fake Anthropic Messages API on 127.0.0.1, for driving the real SDK in tests.

It answers ``POST /v1/messages`` from a script (a queue of replies: tool calls, plain text,
HTTP errors with optional ``retry-after``, malformed bodies) and records every request it
receives, so a test can assert what the SDK actually sent. Standard library only: a
threading HTTP server, started and stopped by a context manager on a free port.

    with FakeAnthropic() as fake:
        fake.script(HttpError(429, retry_after="1"), ToolUse({"verdict": "APPROVE"}))
        gateway = ModelGateway(SecretStr("k"), fake.base_url, {...})

Concurrent calls arrive in no fixed order, so a queue cannot say which gets which reply.
Routes can: ``fake.route(fn)`` adds a function that picks the reply from the request body
(``on_tool`` builds one from a tool name and a text the request must contain). Precedence:
the queue first while it holds replies, then the routes in the order added (the first that
answers wins), else a 500 saying nothing was scripted.

A reply with ``usage=None`` reports usage derived from the sizes involved (input tokens a
quarter of the request's bytes, output tokens a quarter of the answer's), so recorded
numbers grow with the prompt as real ones do.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def usage(input_tokens: int = 100, output_tokens: int = 20, cache_creation: int = 0,
          cache_read: int = 0) -> dict[str, int]:
    """A usage block as the Messages API reports it."""
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_creation,
            "cache_read_input_tokens": cache_read}


@dataclass
class ToolUse:
    """The model calls a tool: ``name`` defaults to the tool the request offered."""

    input: Any
    name: str | None = None
    text: str | None = None
    """Prose before the call, as models sometimes write."""
    usage: dict[str, int] | None = field(default_factory=usage)
    """None: derived from the request's and the answer's sizes."""
    stop_reason: str = "tool_use"


@dataclass
class Text:
    """The model answers in prose instead of calling the tool."""

    text: str
    usage: dict[str, int] | None = field(default_factory=usage)
    """None: derived from the request's and the answer's sizes."""
    stop_reason: str = "end_turn"


@dataclass
class HttpError:
    """An error response: status, message and optional ``retry-after`` header."""

    status: int
    message: str = "scripted error"
    retry_after: str | None = None


@dataclass
class Malformed:
    """A response whose body is not the JSON the SDK expects."""

    body: bytes = b'{"id": "msg_truncated", "content": [{"type": "tool_'
    status: int = 200


Reply = ToolUse | Text | HttpError | Malformed
Route = Callable[[dict[str, Any]], "Reply | None"]
"""Picks the reply to a request from its JSON body, or None to leave it to the next route."""


def tool_of(body: dict[str, Any]) -> str:
    """The name of the (first) tool a request offers: the output schema's name."""
    tools: list[dict[str, Any]] = body.get("tools") or [{}]
    return str(tools[0].get("name", ""))


def text_of(body: dict[str, Any]) -> str:
    """Everything a request says (system prompt and messages), as one JSON text."""
    return json.dumps([body.get("system"), body.get("messages")], ensure_ascii=False)


@dataclass(frozen=True)
class SeenRequest:
    """One request as the fake received it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body."""
        body: dict[str, Any] = json.loads(self.raw)
        return body


class FakeAnthropic:
    """A scripted Messages API server; use as a context manager."""

    def __init__(self) -> None:
        self._replies: deque[Reply] = deque()
        self._routes: list[Route] = []
        self._seen: list[SeenRequest] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._sockets: set[socket.socket] = set()

    @property
    def base_url(self) -> str:
        """The URL to hand the SDK (``base_url=``)."""
        assert self._server is not None, "the fake server is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[SeenRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._seen)

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one (none left: a 500 saying so)."""
        with self._lock:
            self._replies.extend(replies)

    def route(self, fn: Route) -> None:
        """Answer requests the queue does not with ``fn(body)`` (see the module docstring)."""
        with self._lock:
            self._routes.append(fn)

    def on_tool(self, name: str, reply: Reply, *, containing: str = "") -> None:
        """Answer ``reply`` to every request offering tool ``name`` and saying ``containing``."""

        def pick(body: dict[str, Any]) -> Reply | None:
            if tool_of(body) == name and containing in text_of(body):
                return reply
            return None

        self.route(pick)

    def start(self) -> FakeAnthropic:
        """Listen on a free port of 127.0.0.1."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        # A short poll interval makes stop() quick (shutdown waits for the next poll).
        self._thread = threading.Thread(target=server.serve_forever, args=(0.02,),
                                        name="fake-anthropic", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut open keep-alive connections (clients see the server gone)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self._sockets.clear()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _next(self, seen: SeenRequest, sock: socket.socket) -> tuple[Reply | None, int]:
        """The reply to ``seen`` (queue first, then routes) and its number (1-based)."""
        with self._lock:
            self._seen.append(seen)
            self._sockets.add(sock)
            number = len(self._seen)
            if self._replies:
                return self._replies.popleft(), number
            routes = list(self._routes)
        try:
            body = seen.body
        except ValueError:
            return None, number
        for fn in routes:
            reply = fn(body)
            if reply is not None:
                return reply, number
        return None, number


class _Server(ThreadingHTTPServer):
    """The HTTP server, knowing the fake it serves."""

    daemon_threads = True
    fake: FakeAnthropic


class _Handler(BaseHTTPRequestHandler):
    """Serves one connection; HTTP/1.1 so the SDK's connection pool keeps it alive."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    request_number = 0

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests assert on recorded requests, not on logs."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        seen = SeenRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                           raw)
        fake = cast(_Server, self.server).fake
        reply, n = fake._next(seen, self.connection)  # pyright: ignore[reportPrivateUsage]
        self.request_number = n
        if self.path != "/v1/messages":
            self._send(404, _error_body(404, f"no route {self.path}"))
        elif reply is None:
            self._send(500, _error_body(500, "fake server: no scripted reply left"))
        elif isinstance(reply, HttpError):
            headers = {"retry-after": reply.retry_after} if reply.retry_after else {}
            self._send(reply.status, _error_body(reply.status, reply.message), headers)
        elif isinstance(reply, Malformed):
            self._send(reply.status, reply.body)
        else:
            self._send(200, json.dumps(_message(reply, seen, n)).encode())

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", f"req_fake_{self.request_number}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def _error_body(status: int, message: str) -> bytes:
    kind = ERROR_TYPES.get(status, "api_error")
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _message(reply: ToolUse | Text, seen: SeenRequest, n: int) -> dict[str, Any]:
    """A Messages API response body for a scripted answer."""
    request = seen.body
    content: list[dict[str, Any]] = []
    if isinstance(reply, Text):
        content.append({"type": "text", "text": reply.text})
    else:
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        tools: list[dict[str, Any]] = request.get("tools") or [{"name": "answer"}]
        content.append({"type": "tool_use", "id": f"toolu_fake_{n}",
                        "name": reply.name or tools[0]["name"], "input": reply.input})
    answered = reply.text if isinstance(reply, Text) else json.dumps(reply.input)
    sized = usage(len(seen.raw) // 4, max(1, len(answered or "") // 4))
    return {"id": f"msg_fake_{n}", "type": "message", "role": "assistant",
            "model": request.get("model", "claude-fake"), "content": content,
            "stop_reason": reply.stop_reason, "stop_sequence": None,
            "usage": sized if reply.usage is None else reply.usage}
