"""The process a traced script runs in, started before it is needed.

Both processes of a `genesis trace` run import genesis: this one to report, the child
(`genesis_cli.traced_run`) to run the script. Done one after the other, that is a quarter
of a second of waiting on every run. So the `genesis` command starts the child first
thing (`prestart`, when its first argument is `trace`) and imports while the child
does; the child imports everything it needs, then waits on a socket for its orders:
the run's configuration and the file descriptors of the script's standard output and
error and of the pipe for its result (passed with SCM_RIGHTS). `run_traced` takes the
prestarted child (`take`), or starts one then and there (tests, other callers), so
there is one way to run a traced script.

A child that gets no orders (the command line had a mistake, `--help`) sees the socket
close and leaves quietly. Its standard input is the `genesis` command's, as it would be
for `python SCRIPT`; its standard output is nowhere until the orders name it.

>>> WarmChild.started().discard()  # a child that is never used leaves quietly
"""
from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys

__all__ = ["WarmChild", "prestart", "take", "serve", "RESULT_HEADER"]

_HEADER = struct.Struct("<Q")  # the byte length of the JSON configuration that follows
RESULT_HEADER = struct.Struct("<Q")  # on the result pipe: the byte length of the pickled result
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The child imports genesis_cli from where this process did, then forgets that path so the
# script sees sys.path as `python SCRIPT` would give it.
# Ctrl-C while it imports (before the script starts) ends it as SIGINT ends a program, with no
# traceback of genesis's imports: `genesis trace` says the script never started.
_BOOTSTRAP = ("import sys\ntry:\n"
              "    sys.path.insert(0, {root!r}); import genesis_cli.traced_run as run\n"
              "    import genesis_cli.warm_child as warm; sys.path.remove({root!r})\n"
              "except KeyboardInterrupt:\n"
              "    import os, signal; signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "warm.serve({fd}, run.main)")


class WarmChild:
    """A started child waiting for its orders (see the module docstring)."""

    def __init__(self, process: subprocess.Popen, channel: socket.socket):
        self.process = process
        self._channel = channel

    @classmethod
    def started(cls) -> "WarmChild":
        ours, theirs = socket.socketpair()
        try:
            command = [sys.executable, "-c", _BOOTSTRAP.format(root=_ROOT, fd=theirs.fileno())]
            # stdout only once the orders say where (a pipe it held would keep a reader of
            # this command's output waiting); stderr for a failure before then. A stream
            # this process started without (closed) stays closed to the script: /dev/null,
            # not whatever descriptor took its number since (this socket, say).
            process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL,
                stdin=None if sys.stdin is not None else subprocess.DEVNULL,
                stderr=None if sys.stderr is not None else subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),))
        finally:
            theirs.close()
        return cls(process, ours)

    def run(self, config: dict, stdout: int, stderr: int, result: int) -> subprocess.Popen:
        """Hand the child its configuration and the descriptors of the script's standard
        output and error and of the result pipe; returns the child's process."""
        # a script started without standard input gets none, as `python SCRIPT <&-` would
        payload = json.dumps({**config, "stdin_closed": sys.stdin is None}).encode()
        try:
            socket.send_fds(self._channel, [_HEADER.pack(len(payload))], [stdout, stderr, result])
            self._channel.sendall(payload)
        finally:
            self._channel.close()
        return self.process

    def discard(self) -> None:
        """No orders: the child sees the socket close and exits."""
        self._channel.close()
        self.process.wait()


_prestarted: list = []  # at most one WarmChild, started by `prestart`


def prestart() -> None:
    """Start the child now, for the `genesis trace` that is being parsed (`take` gets it).
    Nothing happens where no child can be started: `run_traced` will try again and say why."""
    try:
        _prestarted.append(WarmChild.started())
    except OSError:
        pass


def take() -> WarmChild | None:
    """The prestarted child, if any (each is taken once)."""
    return _prestarted.pop() if _prestarted else None


def serve(fd: int, run) -> None:
    """In the child: wait for the orders on socket `fd`, then run the script with them
    (`run` is `genesis_cli.traced_run.main`, imported before the orders came: that is the
    point); leave quietly if none come."""
    channel = socket.socket(fileno=fd)
    try:
        header, fds, _, _ = socket.recv_fds(channel, _HEADER.size, 3)
    except OSError:
        header, fds = b"", []
    if len(header) < _HEADER.size or len(fds) != 3:
        for received in fds:
            os.close(received)
        os._exit(0)
    (length,) = _HEADER.unpack(header)
    payload = bytearray()
    while len(payload) < length:
        chunk = channel.recv(length - len(payload))
        if not chunk:
            os._exit(0)
        payload += chunk
    channel.close()
    stdout, stderr, result = fds
    for target, received in ((1, stdout), (2, stderr)):
        os.dup2(received, target)
        os.close(received)
    # buffered as Python buffers them at a start: stdout by lines to a terminal, stderr always
    if sys.stdout is not None:
        sys.stdout.reconfigure(line_buffering=sys.stdout.isatty())
    if sys.stderr is not None:
        sys.stderr.reconfigure(line_buffering=True)
    config = json.loads(payload)
    if config.pop("stdin_closed", False):
        os.close(0)
        sys.stdin = None
    config["result_fd"] = result
    run(["", json.dumps(config)])
