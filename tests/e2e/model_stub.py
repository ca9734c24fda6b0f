"""A loopback stand-in for a model API that scripts tool calls.

The real agent clients (Claude Code, Gemini CLI, Codex CLI) talk to it as to their
model: each request of the agent's main loop (one that offers tools) gets
the next scripted tool call, as many as the script holds, then a closing
text; any other request (titles, summaries, quota probes) gets a short
text. Every request body is kept, so a test reads the tool results the
client sent back (a denial's reason, a tool's error).

Three dialects: Anthropic Messages (`POST /v1/messages`, JSON or SSE when
`stream` is true), Gemini (`POST /v1beta/models/M:generateContent` or
`:streamGenerateContent?alt=sse`) and OpenAI Responses (`POST
/v1/responses`, SSE: Codex CLI). A script is a list of tool calls
`{"name": ..., "input": {...}}`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ModelStub"]

DONE = "done"


class ModelStub:
    """`with ModelStub(script) as stub:` serves on 127.0.0.1:`stub.port`."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._next = 0
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(404, "application/json", b"{}")

            def do_HEAD(self) -> None:
                self._send(200, "text/plain", b"")

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with stub._lock:
                    stub.requests.append((self.path, body))
                if self.path.startswith("/v1/messages/count_tokens"):
                    return self._send(200, "application/json", b'{"input_tokens": 10}')
                if self.path.startswith("/v1/messages"):
                    return self._anthropic(body)
                if ":generateContent" in self.path or ":streamGenerateContent" in self.path:
                    return self._gemini(body, stream=":streamGenerateContent" in self.path)
                if self.path.startswith("/v1/responses"):
                    return self._responses(body)
                if ":countTokens" in self.path:
                    return self._send(200, "application/json", b'{"totalTokens": 10}')
                self._send(404, "application/json", b'{"error": {"message": "not stubbed"}}')

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str | None, dict[str, Any]]]) -> None:
                data = b"".join(
                    (f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(e).encode() + b"\n\n"
                    for name, e in events
                )
                self._send(200, "text/event-stream", data)

            def _anthropic(self, body: dict[str, Any]) -> None:
                call = stub._take() if body.get("tools") else None
                n = len(stub.requests)
                if call is not None:
                    block = {"type": "tool_use", "id": f"toolu_e2e{n:04d}", "name": call["name"], "input": {}}
                    stop = "tool_use"
                else:
                    block = {"type": "text", "text": DONE}
                    stop = "end_turn"
                usage = {"input_tokens": 10, "output_tokens": 5}
                message = {
                    "id": f"msg_e2e{n:04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "stub"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
                if not body.get("stream"):
                    full = dict(block, input=call["input"]) if call else block
                    message.update(content=[full], stop_reason=stop)
                    return self._send(200, "application/json", json.dumps(message).encode())
                if call is not None:
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(call["input"])}
                else:
                    block, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": DONE}
                self._sse(
                    [
                        ("message_start", {"type": "message_start", "message": message}),
                        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                        (
                            "message_delta",
                            {
                                "type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 5},
                            },
                        ),
                        ("message_stop", {"type": "message_stop"}),
                    ]
                )

            def _gemini(self, body: dict[str, Any], stream: bool) -> None:
                call = stub._take() if body.get("tools") else None
                if call is not None:
                    part: dict[str, Any] = {"functionCall": {"name": call["name"], "args": call["input"]}}
                else:
                    part = {"text": DONE}
                reply = {
                    "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                    "modelVersion": "stub",
                }
                if stream:
                    return self._sse([(None, reply)])
                self._send(200, "application/json", json.dumps(reply).encode())

            def _responses(self, body: dict[str, Any]) -> None:
                call = stub._take() if body.get("tools") else None
                n = len(stub.requests)
                if call is not None:
                    item: dict[str, Any] = {
                        "type": "function_call",
                        "id": f"fc_e2e{n:04d}",
                        "call_id": f"call_e2e{n:04d}",
                        "name": call["name"],
                        "arguments": json.dumps(call["input"]),
                    }
                else:
                    text = {"type": "output_text", "text": DONE, "annotations": []}
                    item = {"type": "message", "id": f"msg_e2e{n:04d}", "role": "assistant", "content": [text]}
                usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
                response = {"id": f"resp_e2e{n:04d}", "object": "response", "status": "completed", "usage": usage}
                self._sse(
                    [
                        ("response.created", {"type": "response.created", "response": dict(response, usage=None)}),
                        (
                            "response.output_item.done",
                            {"type": "response.output_item.done", "output_index": 0, "item": item},
                        ),
                        ("response.completed", {"type": "response.completed", "response": response}),
                    ]
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _take(self) -> dict[str, Any] | None:
        with self._lock:
            if self._next >= len(self.script):
                return None
            self._next += 1
            return self.script[self._next - 1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ModelStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
