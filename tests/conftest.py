"""Shared fixtures.

Store backends: `store_url` is parametrized over SQLite (a file in tmp_path)
and PostgreSQL (a fresh database per test on the cluster named by
ORDINANCE_TEST_PG_URL, or on a throw-away cluster this session starts and
stops). PostgreSQL is never skipped: if it cannot be reached, the tests fail.

Under pytest-xdist each worker is a session of its own: without
ORDINANCE_TEST_PG_URL every worker starts its own throw-away cluster, each in
a fresh directory listening only on a unix socket there (tests/pgserver.py),
so the clusters never share a port or a file. With the variable set (as
.ci/run does) the workers share that server, each test in a database of its
own with a random name.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from pgserver import PgServer
from tests.e2e.harness import Gated, gated

# the caches (checked policies, the key that seals gate snapshots) of this test
# session live in a directory of its own, never in the user's cache directory
os.environ["ORDINANCE_CACHE"] = tempfile.mkdtemp(prefix="ordinance-cache-")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`, name each `xdist_group` test's group in the id the
    scheduler reads: pytest-xdist 3.8 suffixes `item._nodeid`, which pytest 9 no longer
    reads (its id is `item._id`), so the groups were silently ignored and the tests of
    one group ran on two workers (test_spark's JVM started twice)."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")
        }
        node_id = getattr(item, "_id", None)
        if names and node_id is not None and "@" not in item.nodeid:
            item._id = type(node_id).parse(f"{item.nodeid}@{'_'.join(sorted(names))}")


def with_dbname(url: str, name: str) -> str:
    """`url` pointing at database `name` instead."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """A PostgreSQL server URL where the tests may create databases."""
    server = None
    url = os.environ.get("ORDINANCE_TEST_PG_URL")
    if not url:
        server = PgServer()
        try:
            url = server.start()
        except RuntimeError as err:
            pytest.fail(f"cannot start a throw-away postgresql cluster: {err}", pytrace=False)
    try:
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as err:
        if server:
            server.stop()
        pytest.fail(f"postgresql at {url} is unreachable: {err}", pytrace=False)
    yield url
    if server:
        server.stop()


@pytest.fixture
def pg_url(pg_admin_url: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test."""
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield with_dbname(pg_admin_url, name)
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> str:
    """A URL of an empty store, once per backend."""
    if request.param == "sqlite":
        return os.path.join(tmp_path, "store.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture(autouse=True)
def _unsettled(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """No full collection after each warm model a served gate builds
    (engine/heap.py `settle`): a long-running server's latency measure that
    decides nothing, and in a test worker it walks everything the worker
    keeps (0.3-1 s a service; a fifth of the serve tests' time). A test
    marked `settle` keeps it (tests/test_serve.py checks that a server
    settles and the hook's one-shot service does not); servers the tests
    start as processes keep it too."""
    if request.node.get_closest_marker("settle") is None:
        monkeypatch.setattr("ordinance.gate.warm.settle", lambda: None)


@pytest.fixture
def g(tmp_path: Path) -> Iterator[Gated]:
    """The end-to-end tests' gated project, `ordinance serve` running over it
    (tests/e2e/harness.py)."""
    yield from gated(tmp_path)


@pytest.fixture
def down(tmp_path: Path) -> Iterator[Gated]:
    """The gated project with no server behind its hooks' URL."""
    yield from gated(tmp_path, serve=False)
