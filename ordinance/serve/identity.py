"""Tokens -> principals: who is asking, from a file, never from the caller.

The tokens file (TOML) lists principals; each has a token, or better the
SHA-256 of one, and may be the owner:

    [[principal]]
    name = "jw"
    owner = true
    token_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    [[principal]]
    name = "claude-code"
    token = "a-long-random-string"
    audiences = ["public"]

    [[principal]]
    name = "replayer"
    token = "another-long-random-string"
    clock = true

`clock = true` lets that principal give the `now` a decision is made at
(test rigs, replays); every other principal, the owner too, is decided at
the server's clock, and a `now` it sends is refused (`clock_not_granted`).
`audiences` bounds what a principal may read (the privacy layers of the
policy's `sees`): the owner sees every layer unless the file lists its
audiences, any other principal sees `public` unless it lists more.
Tokens are compared by their digests and never logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from ..gate.layers import PUBLIC

__all__ = ["AuthError", "Principal", "Tokens", "digest"]


class AuthError(OrdinanceError):
    """The caller did not authenticate (phase: serve)."""

    default_code = "unauthorized"


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller: the agent of its requests."""

    name: str
    owner: bool = False
    audiences: tuple[str, ...] | None = None  # as the tokens file lists them; None: the default
    clock: bool = False  # the owner gave it the clock: its requests may carry their `now`

    def may_see(self) -> tuple[str, ...] | None:
        """The audiences it may ask as; None for every layer (the owner's default).
        A principal that is not the owner sees `public` unless told more."""
        if self.audiences is not None:
            return self.audiences
        return None if self.owner else (PUBLIC,)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Tokens:
    """token digest -> Principal."""

    def __init__(self, principals: Mapping[str, Principal]) -> None:
        self._by_digest = dict(principals)

    @classmethod
    def from_file(cls, path: str | Path) -> Tokens:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise OrdinanceError(f"tokens file `{path}`: {exc}", code="bad_tokens") from None
        return cls.from_data(data, str(path))

    @classmethod
    def from_data(cls, data: Mapping[str, Any], where: str = "tokens") -> Tokens:
        found: dict[str, Principal] = {}
        for n, entry in enumerate(data.get("principal", []), 1):
            name = entry.get("name") if isinstance(entry, Mapping) else None
            if not isinstance(name, str) or not name:
                raise OrdinanceError(f"{where}: principal {n} has no `name`", code="bad_tokens")
            token, hashed = entry.get("token"), entry.get("token_sha256")
            if (token is None) == (hashed is None):
                raise OrdinanceError(
                    f"{where}: principal `{name}` needs one of `token`, `token_sha256`", code="bad_tokens"
                )
            key = digest(str(token)) if token is not None else str(hashed).lower()
            if key in found:
                raise OrdinanceError(f"{where}: principal `{name}` reuses another principal's token", code="bad_tokens")
            audiences = entry.get("audiences")
            if audiences is not None and (
                not isinstance(audiences, list) or not audiences or not all(isinstance(a, str) and a for a in audiences)
            ):
                raise OrdinanceError(
                    f"{where}: principal `{name}`: `audiences` is a non-empty list of names", code="bad_tokens"
                )
            flags = {f: entry.get(f, False) for f in ("owner", "clock")}
            wrong = sorted(f for f, v in flags.items() if not isinstance(v, bool))
            if wrong:
                raise OrdinanceError(f"{where}: principal `{name}`: `{wrong[0]}` is true or false", code="bad_tokens")
            found[key] = Principal(
                name, flags["owner"], None if audiences is None else tuple(audiences), clock=flags["clock"]
            )
        if not found:
            raise OrdinanceError(f"{where}: no principals", code="bad_tokens")
        return cls(found)

    def principal(self, authorization: str | None) -> Principal:
        """The principal of an `Authorization: Bearer TOKEN` header."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError("send `Authorization: Bearer TOKEN`")
        key = digest(token.strip())
        for known, principal in self._by_digest.items():
            if hmac.compare_digest(known, key):
                return principal
        raise AuthError("unknown token")
