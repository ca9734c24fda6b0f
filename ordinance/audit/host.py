"""The one adapter from a transcript's tool call (a hook payload) to its
Request: the host's own hook mapping (ordinance.hosts), so an audited call
is decided on the facts the hook would have given."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..gate import Request
from ..hosts.claude_code import tool_request

__all__ = ["claude_code_request"]


def claude_code_request(
    declared: Mapping[str, int], agent: str, project: str | None, epoch: int
) -> Callable[[Mapping[str, Any]], Request]:
    """Claude Code's mapping, for the calls of its transcripts."""

    def to_request(payload: Mapping[str, Any]) -> Request:
        return tool_request(payload, agent, declared, project=project or payload.get("cwd") or None, epoch=epoch)

    return to_request
