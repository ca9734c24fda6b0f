"""Asking a running `ordinance serve` for a Claude Code hook answer, with
the standard library alone.

Claude Code starts `ordinance hook claude-code --server URL` once per tool
call, so its start-up is on every call's path: `fast` answers that command
line without importing click or the library (a plain HTTP/1.1 POST over a
socket; https through http.client), and hook.py's click command calls the
same `answer`. Whatever goes wrong denies, unless `fail_open`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from urllib.parse import urlsplit

__all__ = ["SERVER_ENV", "TOKEN_ENV", "TIMEOUT_S", "answer", "ask_server", "deny", "fast"]

SERVER_ENV = "ORDINANCE_SERVER"  # the server, when --server is not given
TOKEN_ENV = "ORDINANCE_TOKEN"  # the default of --token-env: the variable holding the bearer token
TIMEOUT_S = 5.0  # the default of --timeout
_PATH = "/hooks/claude-code"


def deny(reason: str, body: bytes = b"") -> dict[str, object]:
    """What Claude Code reads when the gate gave no answer to the call in
    `body`: a deny, or, after the tool has run (PostToolUse), a
    `systemMessage` that its outcome receipt was not recorded. The shape
    serve/claude_code.failure gives a server's failures, kept apart so this
    module loads nothing of the library."""
    try:
        event = json.loads(body).get("hook_event_name")
    except (ValueError, AttributeError, RecursionError):
        event = None
    if event == "PostToolUse":
        return {"systemMessage": f"{reason} (the outcome receipt was not recorded)"}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _checked(text: str, what: str) -> str:
    if any(c < " " or c == "\x7f" for c in text):
        raise ValueError(f"the {what} holds a control character")
    return text


def ask_server(server: str, body: bytes, token: str | None, timeout: float) -> object:
    """POST the hook input to `server`'s /hooks/claude-code; the JSON answer.
    `server` is http://host:port, https://host:port or unix:/path/to.sock.
    OSError or ValueError if there is no 200 answer in JSON."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + _checked(token, "token")
    if server.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        host, path = "localhost", _PATH
        try:
            sock.connect(server[5:])
        except OSError:
            sock.close()
            raise
    else:
        url = urlsplit(server)
        path = url.path.rstrip("/") + _PATH
        if url.scheme == "https":
            return _https(url.hostname or "127.0.0.1", url.port, path, body, headers, timeout)
        sock = socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), timeout)
        host = url.netloc.rpartition("@")[2] or "127.0.0.1"
    with sock:
        head = f"POST {_checked(path, 'path')} HTTP/1.1\r\nHost: {_checked(host, 'host')}\r\nConnection: close\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        chunks: list[bytes] = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    status, _, rest = b"".join(chunks).partition(b"\r\n")
    fields, _, data = rest.partition(b"\r\n\r\n")
    code = status.split(b" ")[1:2]
    if code != [b"200"]:
        raise OSError(f"the server answered {(code or [b'nothing'])[0].decode('latin-1')}")
    if b"transfer-encoding: chunked" in fields.lower():
        data = _unchunked(data)
    return json.loads(data)


def _unchunked(data: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        size, _, data = data.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            return b"".join(out)
        out.append(data[:n])
        data = data[n + 2 :]


def _https(host: str, port: int | None, path: str, body: bytes, headers: dict[str, str], timeout: float) -> object:
    import http.client

    conn = http.client.HTTPSConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", path, body, headers)
        reply = conn.getresponse()
        data = reply.read()
        if reply.status != 200:
            raise OSError(f"the server answered {reply.status}")
        return json.loads(data)
    except http.client.HTTPException as exc:
        raise OSError(str(exc) or type(exc).__name__) from None
    finally:
        conn.close()


def answer(server: str, body: bytes, token: str | None, timeout: float, fail_open: bool) -> object | None:
    """The server's answer to one hook call; a deny if it cannot be had,
    or None (let the call through) with `fail_open`."""
    try:
        return ask_server(server, body, token, timeout)
    except (OSError, ValueError) as exc:
        if fail_open:
            return None
        return deny(f"ordinance: error[unreachable]: the gate at {server} did not answer ({exc})", body)
    except Exception as exc:  # fail closed: a broken hook never lets a call through
        return deny(f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}", body)


def fast(args: list[str]) -> None:
    """Answer `ordinance hook claude-code ARGS` and exit, if ARGS (and the
    environment) name a server and hold only the options this module
    knows (--server, --token-env, --timeout, --fail-open); otherwise return,
    and the click command takes the command line (help, errors, no server)."""
    server, token_env, timeout, fail_open = os.environ.get(SERVER_ENV) or None, TOKEN_ENV, TIMEOUT_S, False
    rest = list(args)
    try:
        while rest:
            arg = rest.pop(0)
            name, eq, value = arg.partition("=")
            if name == "--fail-open" and not eq:
                fail_open = True
                continue
            if name not in ("--server", "--token-env", "--timeout"):
                return
            if not eq:
                value = rest.pop(0)
            if name == "--server":
                server = value
            elif name == "--token-env":
                token_env = value
            else:
                timeout = float(value)
    except (IndexError, ValueError):
        return  # the click command reports the usage error
    if not server:
        return
    body = b""
    try:
        body = sys.stdin.buffer.read()
        out = answer(server, body, os.environ.get(token_env), timeout, fail_open)
    except Exception as exc:  # fail closed: an exit status other than 0 or 2 would let the call through
        out = deny(f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}", body)
    if out is not None:  # JSON is UTF-8, whatever the locale's encoding
        sys.stdout.buffer.write(json.dumps(out, ensure_ascii=False).encode() + b"\n")
        sys.stdout.flush()
    sys.exit(0)
