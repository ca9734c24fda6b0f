"""What a user or an agent wrote, made safe to print on one line of a projection."""

from __future__ import annotations

__all__ = ["escape"]


def escape(text: str) -> str:
    """Text a user or an agent wrote, safe on one line: control characters as
    `\\n`/`\\uXXXX`, and backslash and brackets escaped, so no text can forge
    a stamp or break a line."""
    out = []
    for ch in str(text):
        if ch in "\\[]":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32 or ord(ch) == 127 or 0x2028 <= ord(ch) <= 0x2029:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)
