"""`spawn` and `start_processes`: run `fn(i, *args)` in `nprocs` new processes and wait for
them; the first one to fail stops the others and its error is raised here (the traceback of
an exception it raised, or how it exited), as `torch.multiprocessing.spawn` does."""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import traceback
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException", "spawn", "start_processes"]


class ProcessException(Exception):
    """A process started by `spawn` failed; `error_index` says which, `error_pid` its pid."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The process's function raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _run(fn, index: int, args: tuple, errors) -> None:
    """The body of process `index`: `fn(index, *args)`, its traceback sent back if it raises."""
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped it
    except Exception:
        errors.put((index, traceback.format_exc()))
        raise SystemExit(1) from None


class ProcessContext:
    """The processes `start_processes` started; `join` waits for them."""

    def __init__(self, processes: list, errors):
        self.processes = processes
        self._errors = errors
        self._waiting = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list:
        return [int(process.pid) for process in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to `timeout` seconds for processes to end: True once all have ended well,
        False while some still run; the first that failed stops the others (terminated
        after `grace_period` seconds, if given) and raises its error."""
        if not self._waiting:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self._waiting), timeout=timeout):
            index = self._waiting.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self._waiting
        self._stop_the_others(grace_period)
        raise self._error_of(failed)

    def _stop_the_others(self, grace_period: float | None) -> None:
        if grace_period is not None:
            for process in self.processes:
                process.join(grace_period)
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(30 if grace_period is None else grace_period)
            if process.is_alive():
                process.kill()
                process.join()

    def _error_of(self, index: int) -> ProcessException:
        process = self.processes[index]
        raised = {}
        while not self._errors.empty():
            which, text = self._errors.get()
            raised[which] = text
        if index in raised:
            return ProcessRaisedException(f"\n\n-- Process {index:d} terminated with the following "
                                          f"error:\n{raised[index]}", index, process.pid)
        code = process.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                          index, process.pid, code, name)
        return ProcessExitedException(f"process {index:d} terminated with exit code {code:d}",
                                      index, process.pid, code)


def start_processes(fn, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn"):
    """Start `nprocs` processes (by `start_method`) running `fn(i, *args)`, i their index;
    with `join`, wait for all (None), else return their `ProcessContext`."""
    context = multiprocessing.get_context(start_method)
    errors = context.SimpleQueue()
    processes = []
    for index in range(nprocs):
        process = context.Process(target=_run, args=(fn, index, args, errors), daemon=daemon)
        process.start()
        processes.append(process)
    started = ProcessContext(processes, errors)
    if not join:
        return started
    while not started.join():
        pass
    return None


def spawn(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """`start_processes` with the spawn start method (another `start_method` only warns, as
    in PyTorch).

    `fn` must be importable by the new processes (defined at the top level of a module).
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t"
                      " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, "spawn")
