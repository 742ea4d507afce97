"""A throwaway PostgreSQL server on a free port (for `make run` and the tests), from the OS's
packages (initdb and postgres, e.g. Debian's postgresql): the system of record's local stand-in,
as runtime/localredis.py is Redis's.

PostgreSQL refuses to run as root: run as root, the server runs as the `postgres` user (which
the OS package creates), and its data directory is given to that user. A data directory that
user cannot reach (one under /root) is kept under /var/lib/tabletop instead, and the directory
asked for notes where (a file WHERE).

The switch to that user is made by `setpriv` (util-linux), not by subprocess's `user=`: with
`user=` Python forks without vfork, which runs the fork handlers of the libraries loaded (gRPC's
among them), and a child forked while gRPC threads are busy can crash before it runs postgres
(SIGSEGV). Restarting PostgreSQL from a process that serves or calls gRPC (the soak's chaos)
needs the vfork path.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from runtime.localredis import WAIT_SECONDS, free_port

DATABASE = "tabletop"
USER = "tabletop"


def program(name: str) -> str:
    """The path of one of PostgreSQL's programs (initdb, postgres, pg_dump...)."""
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        raise RuntimeError(
            f"{name} is not installed: run `make setup` (as root) or install postgresql from "
            "your OS packages"
        )
    return found


def _server_user() -> dict[str, Any]:
    """The user the server runs as (its `user` and `group` ids): the `postgres` user when we
    are root; empty: ourselves."""
    if os.geteuid() != 0:
        return {}
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError(
            "PostgreSQL does not run as root, and there is no `postgres` user to run it as: "
            "install postgresql from the OS packages (it creates one)"
        ) from None
    return {"user": entry.pw_uid, "group": entry.pw_gid}


def _as(user: dict[str, Any], command: list[str]) -> list[str]:
    """`command`, run as `user` (see the module's doc: setpriv, not Popen's `user=`)."""
    if not user:
        return command
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [
        setpriv, f"--reuid={user['user']}", f"--regid={user['group']}", "--clear-groups", "--",
        *command,
    ]  # fmt: skip


ROOT_DATA = Path("/var/lib/tabletop")
"""Where a local PostgreSQL run by root keeps its cluster when the state directory is out of
the `postgres` user's reach (under /root, say, which only root may enter)."""


def _reachable(path: Path, user: dict[str, Any]) -> bool:
    """Whether the server's user can get to `path` (search permission on every directory above
    it that exists)."""
    for parent in [path, *path.parents]:
        try:
            info = parent.stat()
        except FileNotFoundError:
            continue
        if info.st_uid == user["user"]:
            bit = 0o100
        elif info.st_gid == user["group"]:
            bit = 0o010
        else:
            bit = 0o001
        if not info.st_mode & bit:
            return False
    return True


def _root_elsewhere(data_dir: Path) -> Path:
    """A place of its own for a cluster that `data_dir` would hold, which the `postgres` user
    can reach; noted in `data_dir` (a file WHERE), so that the next run finds it."""
    note = data_dir / "WHERE"
    if note.exists():
        return Path(note.read_text().strip())
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    found = ROOT_DATA / f"postgres-{digest}"
    data_dir.mkdir(parents=True, exist_ok=True)
    note.write_text(f"{found}\n")
    return found


class LocalPostgres:
    """Starts `postgres` bound to 127.0.0.1 with a database `tabletop` owned by the user
    `tabletop` (password authentication); `url` is where to connect; `stop()` ends it.

    `data_dir`: keep the cluster there, across runs (made on the first); by default a temporary
    directory that `stop()` removes. `password`: the `tabletop` user's (given to initdb in a
    file that is removed at once, never on a command line)."""

    def __init__(
        self, *, data_dir: Path | None = None, password: str = "tabletop", port: int | None = None
    ) -> None:
        self.as_user = _server_user()
        self.keep = data_dir is not None
        if data_dir is not None and self.as_user and not _reachable(data_dir, self.as_user):
            data_dir = _root_elsewhere(data_dir)
        self.dir = data_dir or Path(tempfile.mkdtemp(prefix="tabletop-postgres-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.data = self.dir / "data"
        self.port = port or free_port()
        self.password = password
        self.url = f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{DATABASE}"
        self.log = self.dir / "postgres.log"
        if not (self.data / "PG_VERSION").exists():
            self._initdb()
        self.process = self._start()
        self._wait_ready()
        self._create_database()

    def _own(self, path: Path) -> None:
        if self.as_user:
            os.chown(path, self.as_user["user"], self.as_user["group"])

    def _initdb(self) -> None:
        self._own(self.dir)
        self.data.mkdir(mode=0o700, exist_ok=True)
        self._own(self.data)
        password_file = self.dir / "password"
        descriptor = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(self.password + "\n")
        self._own(password_file)
        try:
            subprocess.run(
                _as(self.as_user, [
                    program("initdb"), "-D", str(self.data), "-U", USER, "--pwfile",
                    str(password_file), "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C",
                    "--no-sync",
                ]),
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )  # fmt: skip
        except subprocess.CalledProcessError as error:
            raise RuntimeError(f"initdb failed: {error.stderr.decode(errors='replace')}") from None
        finally:
            password_file.unlink(missing_ok=True)

    def _start(self) -> subprocess.Popen[bytes]:
        with open(self.log, "ab") as log:
            self._own(self.log)
            return subprocess.Popen(  # setpriv execs postgres: the same process
                _as(self.as_user, [
                    program("postgres"), "-D", str(self.data), "-p", str(self.port),
                    "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.dir}",
                    "-c", "max_connections=200",
                ]),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )  # fmt: skip

    def _wait_ready(self, timeout: float = WAIT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"postgres exited (status {self.process.returncode}): see {self.log}"
                )
            try:
                with psycopg.connect(self.admin_url, connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"postgres did not answer within {timeout:.0f}s: see {self.log}"
                    ) from None
                time.sleep(0.1)

    @property
    def admin_url(self) -> str:
        """The maintenance database `postgres`, as the cluster's owner `tabletop`."""
        return self.url.rsplit("/", 1)[0] + "/postgres"

    def _create_database(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            if not connection.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
            ).fetchone():
                connection.execute(f'CREATE DATABASE "{DATABASE}"')

    def stop(self) -> None:
        """Fast shutdown (SIGINT: open sessions are ended, everything committed is kept)."""
        self.down()
        if not self.keep:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.dir)

    def down(self, immediate: bool = False) -> None:
        """Stop the server, keeping its data and port for `up()`: a fast shutdown (SIGINT: a
        clean stop, with a checkpoint), or with `immediate` an immediate one (SIGQUIT: as a
        crash, no checkpoint; the next start recovers from the write-ahead log)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT if immediate else signal.SIGINT)
            try:
                self.process.wait(timeout=WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def up(self) -> None:
        """Start the server again after `down()`, on the same port with the same data."""
        self.process = self._start()
        self._wait_ready()

    def restart(self, down_seconds: float = 0.0, immediate: bool = False) -> None:
        """Stopped (see `down`) and started again on the same port, with the same data, after
        `down_seconds`."""
        self.down(immediate)
        time.sleep(down_seconds)
        self.up()
