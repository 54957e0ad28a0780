"""The engine's keeper (Linux): a small process between ``rspwb`` and an engine that outlives neither.

``PR_SET_PDEATHSIG`` ends the engine when ``rspwb`` dies, but not what the engine started: a
child, or a daemon that double-forked into a session of its own, would be re-parented to
init and live on. The keeper is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): every
orphan of the engine's tree is re-parented to it instead of init, so the whole tree stays
under it whatever the processes do (sessions, process groups, a cleared environment). It
ends that whole tree

* when ``rspwb`` is gone (its end of the keeper's death pipe closes, or the keeper's parent
  changes — also after ``kill -9`` of ``rspwb``);
* when the stand asks (SIGTERM/SIGINT/SIGHUP), at the end of a run that had to be stopped;
* when the engine has exited: what it left behind is killed at once.

Run as ``python -I -S keeper.py REPORT_FD DEATH_FD -- ENGINE ARGV…`` with the engine's pipes as
its own stdin/stdout/stderr, which it hands to the engine and then lets go of. On ``REPORT_FD``
it writes ``engine PID`` (or ``error ERRNO<TAB>REASON`` if the engine cannot start), then a line
``killed PID<TAB>NAME<TAB>COMMAND`` per process it killed; it exits as the engine did (code, or
the same signal), so for the stand it stands in for the engine. Few imports (it starts on every
run) and the standard library only: it runs without site-packages.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_REPORTED = 100  # killed processes named one by one; more are counted
KILL_ROUNDS_S = 3.0  # how long the keeper goes on killing what a forking tree starts


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                              ctypes.c_ulong(0))) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a process from /proc, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
        fields = data[data.rindex(b")") + 2:].split()
        return int(fields[1]), fields[0].decode()
    except (OSError, ValueError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    """Every live (not zombie) process below ``root``, parents before children."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] != "Z":
                children.setdefault(stat[0], []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def describe(pid: int) -> str:
    """The process as ``run.json`` names it: ``PID<TAB>NAME<TAB>COMMAND`` (the command cut at 200 characters)."""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            name = handle.read().strip()
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = " ".join(part.decode("utf-8", "replace") for part in handle.read().split(b"\0") if part)
    except OSError:
        name, command = "?", ""
    command = command if len(command) <= 200 else command[:199] + "…"
    return "\t".join([str(pid), *(" ".join(text.split()) for text in (name, command))])


class Keeper:
    """The keeper's state: the engine, the pipes to the stand, what was killed."""

    def __init__(self, report_fd: int, death_fd: int, argv: list[str]) -> None:
        self.report_fd = report_fd
        self.death_fd = death_fd
        self.argv = argv
        self.parent = os.getppid()
        self.engine = 0  # its pid once started
        self.status: int | None = None  # the engine's wait status once it has ended
        self.stop = False
        self.reported = 0
        self.killed: set[int] = set()  # each named once: under load one may outlive the round it was killed in

    def report(self, line: str) -> None:
        try:
            os.write(self.report_fd, (line + "\n").encode("utf-8", "replace"))
        except OSError:
            pass  # the stand is gone or does not listen: killing matters, reporting does not

    def start(self) -> bool:
        """Start the engine with this process's stdin/stdout/stderr; say its pid or why it cannot start."""
        error_r, error_w = os.pipe()  # closed on exec: EOF means the engine runs
        keeper = os.getpid()
        pid = os.fork()
        if pid == 0:  # the engine, before exec (the keeper has one thread: fork is safe)
            try:
                _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # it dies with the keeper, if the keeper is killed
                if os.getppid() != keeper:
                    os._exit(1)
                signal.set_wakeup_fd(-1)
                for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; exec would keep that
                    signal.signal(number, signal.SIG_DFL)
                os.execvp(self.argv[0], self.argv)
            except OSError as error:
                os.write(error_w, f"{error.errno or 0}\t{error.strerror or error}".encode("utf-8", "replace"))
            finally:
                os._exit(127)
        os.close(error_w)
        failure = b""
        while piece := os.read(error_r, 4096):
            failure += piece
        os.close(error_r)
        if failure:
            os.waitpid(pid, 0)
            self.report("error " + failure.decode("utf-8", "replace"))
            return False
        self.engine = pid
        self.report(f"engine {pid}")
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the protocol pipes are the engine's alone: EOF when it closes them
            os.dup2(null, fd)
        os.close(null)
        return True

    def reap(self) -> None:
        """Collect every ended child (the engine's status; orphans that ended under the keeper)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.engine:
                self.status = status

    def kill_tree(self, reporting: bool) -> None:
        """Kill every process below the keeper until none is left (a forking tree is killed round by round)."""
        deadline = time.monotonic() + KILL_ROUNDS_S
        while time.monotonic() < deadline:
            alive = descendants(os.getpid())
            if not alive:
                break
            for pid in alive:
                again = pid in self.killed
                entry = describe(pid) if reporting and not again and self.reported < MAX_REPORTED else None
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    continue
                self.killed.add(pid)
                if reporting and not again:
                    self.reported += 1
                    if entry is not None:
                        self.report(f"killed {entry}")
            time.sleep(0.01)
            self.reap()
        if reporting and self.reported > MAX_REPORTED:
            self.report(f"more {self.reported - MAX_REPORTED}")
        self.reap()

    def parent_gone(self, readable: list[int]) -> bool:
        if self.death_fd in readable:
            try:
                if not os.read(self.death_fd, 1):
                    return True
            except OSError:
                return True
        return os.getppid() != self.parent

    def run(self) -> int:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(number, self._asked_to_stop)
        signal.signal(signal.SIGCHLD, lambda number, frame: None)
        if not self.start():
            return 127
        while True:
            self.reap()
            if self.status is not None:  # the engine ended: what it left behind goes too
                self.kill_tree(reporting=True)
                return self._exit_as_engine()
            if self.stop:  # the stand stops the run: the engine and all it started
                self.kill_tree(reporting=True)
                return self._exit_as_engine()
            readable, _, _ = select.select([self.death_fd, wake_r], [], [], 1.0)
            if wake_r in readable:
                os.read(wake_r, 4096)
            if self.parent_gone(readable):
                self.kill_tree(reporting=False)
                return 1

    def _asked_to_stop(self, number: int, frame: object) -> None:
        self.stop = True

    def _exit_as_engine(self) -> int:
        self.reap()
        if self.status is None:
            return 1
        if os.WIFSIGNALED(self.status):
            number = os.WTERMSIG(self.status)
            if number != signal.SIGKILL:
                signal.signal(number, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            os.kill(os.getpid(), number)
            return 128 + number
        return os.waitstatus_to_exitcode(self.status)


def main(argv: list[str]) -> int:
    report_fd, death_fd, separator, *engine = argv
    if separator != "--" or not engine:
        print("usage: keeper.py REPORT_FD DEATH_FD -- ENGINE ARGV…", file=sys.stderr)
        return 2
    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # best effort: without it the keeper still kills what it can see
    for fd in (int(report_fd), int(death_fd)):
        os.set_inheritable(fd, False)  # the engine gets neither
    return Keeper(int(report_fd), int(death_fd), engine).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
