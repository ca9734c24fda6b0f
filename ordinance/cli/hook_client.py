"""Asking a running `ordinance serve` for a host's hook answer, with the
standard library alone.

A host (Claude Code, Codex, Gemini CLI, Cursor, Copilot CLI) starts
`ordinance hook HOST --server URL` once per tool call, so its start-up is on
every call's path: `fast` answers that command line without importing click
or the library (a plain HTTP/1.1 POST of the host's payload to
/hooks/HOST over a socket; https through http.client) and prints the
server's answer as it is; hook.py's click commands call the same `answer`.
Whatever goes wrong is the host's fail-closed answer (`failure`, which
loads the host's module for a host other than Claude Code), unless
`fail_open`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from urllib.parse import urlsplit

__all__ = ["SERVER_ENV", "TOKEN_ENV", "TIMEOUT_S", "HOSTS", "answer", "ask_server", "failure", "fast", "token_of"]

SERVER_ENV = "ORDINANCE_SERVER"  # the server, when --server is not given
TOKEN_ENV = "ORDINANCE_TOKEN"  # the default of --token-env: the variable holding the bearer token
TIMEOUT_S = 5.0  # the default of --timeout
HOSTS = {  # `ordinance hook HOST`: a host's payload on stdin (ordinance/hosts/HOST.py), what it reads
    "claude-code": "Claude Code (PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied; `permissionDecision`)",
    "codex": "Codex CLI (Claude-compatible PreToolUse/PostToolUse; only a deny is honoured)",
    "gemini": "Gemini CLI (BeforeTool/AfterTool; a top-level `decision`)",
    "cursor": "Cursor (beforeShellExecution, beforeReadFile, beforeMCPExecution, after*; `permission`)",
    "copilot": "GitHub Copilot CLI (preToolUse/postToolUse; a flat `permissionDecision`, only a deny is honoured)",
}


def failure(host: str, reason: str, body: bytes = b"") -> object:
    """What `host` reads when the gate gave no answer to the call in `body`:
    its fail-closed answer (hosts/HOST.failure). Claude Code's is kept here
    too (hosts/claude_code.failure's shape), so that its path loads nothing
    of the library: a deny, or, after the tool has run, a `systemMessage`
    that its outcome receipt was not recorded."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        payload = None
    if host != "claude-code":
        from ..hosts import event_of
        from ..hosts import host as module

        found = module(host)
        return found.failure(event_of(found, payload), reason)
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    if event in ("PostToolUse", "PostToolUseFailure", "PermissionDenied"):  # after the fact: nothing to deny
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


def token_of(token_file: str | None, token_env: str) -> str | None:
    """The bearer token: the first line of `token_file` (Claude Code's
    CLAUDE_CODE_SUBPROCESS_ENV_SCRUB strips the environment, not a file), or
    the variable `token_env`. ValueError if the file cannot be read."""
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as f:
                return f.readline().strip() or None
        except OSError as exc:
            raise ValueError(f"the token file {token_file} cannot be read ({exc.strerror})") from None
    return os.environ.get(token_env) or None


def ask_server(server: str, body: bytes, token: str | None, timeout: float, path: str) -> object:
    """POST the hook input to `server`'s `path` (/hooks/HOST); the JSON answer.
    `server` is http://host:port, https://host:port or unix:/path/to.sock.
    OSError or ValueError if there is no 200 answer in JSON."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + _checked(token, "token")
    if server.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        host = "localhost"
        try:
            sock.connect(server[5:])
        except OSError:
            sock.close()
            raise
    else:
        url = urlsplit(server)
        path = url.path.rstrip("/") + path
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


def answer(
    server: str,
    body: bytes,
    token: str | None,
    timeout: float,
    fail_open: bool,
    token_env: str = TOKEN_ENV,
    host: str = "claude-code",
) -> object | None:
    """The server's answer to one hook call of `host`; the host's deny if it
    cannot be had, or None (let the call through) with `fail_open`. A call
    refused as unauthorized without a token says where the token was looked for."""
    try:
        out = ask_server(server, body, token, timeout, f"/hooks/{host}")
        if token is None and isinstance(out, dict) and "error[unauthorized]" in json.dumps(out):
            return failure(
                host, f"ordinance: error[unauthorized]: no token (neither --token-file nor ${token_env} is set)", body
            )
        return out
    except (OSError, ValueError) as exc:
        if fail_open:
            return None
        return failure(host, f"ordinance: error[unreachable]: the gate at {server} did not answer ({exc})", body)
    except Exception as exc:  # fail closed: a broken hook never lets a call through
        return failure(host, f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}", body)


def fast(host: str, args: list[str]) -> None:
    """Answer `ordinance hook HOST ARGS` and exit, if ARGS (and the
    environment) name a server and hold only the options this module
    knows (--server, --token-env, --token-file, --timeout, --fail-open); otherwise return,
    and the click command takes the command line (help, errors, no server)."""
    server, token_env, timeout, fail_open = os.environ.get(SERVER_ENV) or None, TOKEN_ENV, TIMEOUT_S, False
    token_file: str | None = None
    rest = list(args)
    try:
        while rest:
            arg = rest.pop(0)
            name, eq, value = arg.partition("=")
            if name == "--fail-open" and not eq:
                fail_open = True
                continue
            if name not in ("--server", "--token-env", "--token-file", "--timeout"):
                return
            if not eq:
                value = rest.pop(0)
            if name == "--server":
                server = value
            elif name == "--token-env":
                token_env = value
            elif name == "--token-file":
                token_file = value
            else:
                timeout = float(value)
    except (IndexError, ValueError):
        return  # the click command reports the usage error
    if not server:
        return
    body = b""
    try:
        body = sys.stdin.buffer.read()
        try:
            token = token_of(token_file, token_env)
        except ValueError as exc:
            out: object | None = failure(host, f"ordinance: error[unauthorized]: {exc}", body)
        else:
            out = answer(server, body, token, timeout, fail_open, token_env, host)
    except Exception as exc:  # fail closed: an exit status other than 0 or 2 would let the call through
        reason = f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}"
        try:
            out = failure(host, reason, body)
        except Exception:  # no host shape (no library): exit 2, a block to Claude Code, Codex, Gemini CLI
            sys.stderr.write(reason.encode("ascii", "backslashreplace").decode() + "\n")
            sys.exit(2)
    if out is not None:  # JSON is UTF-8, whatever the locale's encoding
        sys.stdout.buffer.write(json.dumps(out, ensure_ascii=False).encode() + b"\n")
        sys.stdout.flush()
    sys.exit(0)
