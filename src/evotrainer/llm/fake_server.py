"""A local OpenAI-compatible server that answers after a fixed latency: for tests and for
measuring what concurrency buys against a server whose cost is waiting (a remote GPU), without
a GPU. It answers ``POST /v1/chat/completions`` and ``GET /v1/models``; the answer text comes
from ``answer(body)`` (default: an echo of the last message's first words). It counts requests
and the most it served at once.

    with LatencyServer(latency_s=0.2) as server:
        llm = OpenAICompatibleLLM("fake", base_url=server.url, concurrency=16)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def echo_answer(body: dict[str, Any]) -> str:
    words = str(body["messages"][-1]["content"]).split()[:12]
    return "Minutes\n- " + " ".join(words)


class LatencyServer:
    def __init__(
        self,
        latency_s: float = 0.1,
        answer: Callable[[dict[str, Any]], str] = echo_answer,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency_s = latency_s
        self.answer = answer
        self.requests = 0
        self.active = 0
        self.max_active = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self.httpd.request_queue_size = 128
        self.url = f"http://{host}:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def _enter(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests += 1
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.bodies.append(body)

    def _leave(self) -> None:
        with self._lock:
            self.active -= 1

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> LatencyServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(server: LatencyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the client's pool reuses connections

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            server._enter(body)
            try:
                time.sleep(server.latency_s)
                text = server.answer(body)
            finally:
                server._leave()
            prompt = sum(len(str(m.get("content", ""))) // 4 for m in body.get("messages", []))
            self._send(
                200,
                {
                    "id": "fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": max(1, len(text) // 4),
                        "total_tokens": prompt + max(1, len(text) // 4),
                    },
                },
            )

        def log_message(self, *args: object) -> None:
            pass

    return Handler
