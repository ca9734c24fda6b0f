"""Paths as the file system will take them.

    resolve("link/x", "/home/me/p")  -> "/home/me/outside/x"   when link -> ../outside

`resolve` makes a path absolute against a directory, then takes the real
path (symlinks followed) of its deepest existing ancestor and appends the
rest normalized: a write through a symlink lands where the link points, and
a project reached through a symlinked path is the same directory as its
real path. Both sides of a comparison (the call's paths and the project) go
through it. A path the caller cannot resolve (empty, a NUL, longer than
`LIMIT`) is None.
"""

from __future__ import annotations

import os
import posixpath

__all__ = ["LIMIT", "resolve", "within"]

LIMIT = 4096  # characters of a path (PATH_MAX); a longer word is no path


def resolve(path: str, cwd: str) -> str | None:
    """`path` absolute against `cwd`, through the real path of its deepest existing ancestor."""
    if not path or "\0" in path or len(path) > LIMIT:
        return None
    if path.startswith("~"):
        path = os.path.expanduser(path)
    # realpath walks the components in order: a symlink is followed before a
    # `..` after it is applied, as the kernel does, and what does not exist
    # yet is appended as written
    return os.path.realpath(posixpath.join(cwd or "/", path))


def within(path: str, root: str) -> bool:
    """`path` is `root` or under it (both resolved)."""
    return path == root or path.startswith(root.rstrip("/") + "/")
