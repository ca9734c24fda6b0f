"""Start and stop a throw-away PostgreSQL cluster (stdlib only).

Used by tests/conftest.py, benchmarks/bench_store.py and .ci/start-postgres:

    python tests/pgserver.py start [--dir DIR]   # prints a postgresql:// URL
    python tests/pgserver.py stop --dir DIR

`initdb` refuses to run as root, so when we are root the server binaries run
as an unprivileged user (`postgres` if it exists, else `nobody`). The server
listens only on a unix socket inside DIR (no TCP port to collide on), trusts
every local connection and runs with fsync off: it is for tests only.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["PgServer"]

PORT = 5432  # only names the socket file; nothing listens on TCP


def _binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/local/bin")
    if found is None:
        for base in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
            if (base / name).exists():
                return str(base / name)
        raise RuntimeError(f"postgresql server binary `{name}` not found on PATH")
    return found


def _run_user() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user to run postgres as")


class PgServer:
    """A PostgreSQL cluster in `directory` (a fresh temp dir by default)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.owned = directory is None
        self.dir = Path(directory or tempfile.mkdtemp(prefix="ordpg-")).resolve()
        self.data = self.dir / "data"
        self.user = _run_user()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@/postgres?host={self.dir}&port={PORT}"

    def _cmd(self, *argv: str) -> list[str]:
        return (["runuser", "-u", self.user, "--"] if self.user else []) + list(argv)

    def running(self) -> bool:
        if not (self.data / "PG_VERSION").exists():
            return False
        status = subprocess.run(
            self._cmd(_binary("pg_ctl"), "-D", str(self.data), "status"),
            capture_output=True,
        )
        return status.returncode == 0 and self._accepts()

    def _accepts(self) -> bool:
        """The server answers on its socket (a stale pid file is not a server)."""
        with socket.socket(socket.AF_UNIX) as sock:
            try:
                sock.connect(str(self.dir / f".s.PGSQL.{PORT}"))
            except OSError:
                return False
        return True

    def start(self) -> str:
        """Init (if needed) and start the cluster; return its URL."""
        if self.running():
            return self.url
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        os.chmod(self.dir, 0o755)
        if not (self.data / "PG_VERSION").exists():
            self._check(
                _binary("initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            )
        options = (
            f"-k {self.dir} -p {PORT} -c listen_addresses='' -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._check(
            _binary("pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        return self.url

    def stop(self) -> None:
        """Stop the cluster; remove its directory if we created it."""
        if self.running():
            self._check(_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        if self.owned:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _check(self, *argv: str) -> None:
        done = subprocess.run(self._cmd(*argv), capture_output=True, text=True)
        if done.returncode != 0:
            log = self.dir / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"`{' '.join(argv[:1])}` failed ({done.returncode}): "
                f"{done.stderr.strip()} {done.stdout.strip()[-2000:]} {tail}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "url"])
    parser.add_argument("--dir", default=None, help="cluster directory (default: new temp dir)")
    args = parser.parse_args(argv)
    server = PgServer(args.dir)
    server.owned = False  # from the command line, `stop` leaves the directory alone
    try:
        if args.action == "start":
            print(server.start())
        elif args.action == "stop":
            server.stop()
        else:
            print(server.url)
    except RuntimeError as err:
        print(f"pgserver: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
