"""One progress bar for every command that reads files (validate, migrate, import, export,
text, tools, dataset): on standard error, only when it is a terminal, and only once a run has
taken DELAY seconds (a short run prints nothing). It measures the bytes read over the size of
every input file (sources/progress.py tells it), and is cleared before anything else is written
to the terminal: problems, the summary (hide_progress), and never goes to standard output.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import sys
import time
from typing import Callable, Iterable, Iterator

from ..problems import printable, shown_name
from ..sources import discover, stored_size
from ..sources.ignore import quietly
from ..sources.progress import watching_reads

DELAY = 2.0  # seconds before the bar appears
REDRAW = 0.1  # seconds between redraws at most
_ACTIVE: list[ProgressBar] = []  # the bar shown, if any (hide_progress)


class ProgressBar:
    """Bytes read of `total`, drawn on `stream` once `delay` seconds have passed since it was made."""

    def __init__(self, total: int, stream=None, clock: Callable[[], float] = time.monotonic, delay: float | None = None):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self.delay = DELAY if delay is None else delay
        self.before = 0  # bytes of the files finished
        self.size = 0  # of the file being read
        self.done = 0  # bytes read of it
        self.name = ""
        self.drawn_at: float | None = None
        self.shown = False

    # The ReadWatcher of sources/progress.py
    def file(self, path: str) -> None:
        self.before += self.size
        self.size, self.done, self.name = stored_size(path), 0, printable(shown_name(path))
        self.draw()

    def read(self, count: int) -> None:
        self.done += count
        self.draw()

    def file_progress(self, path: str):
        """migrate's ProgressFor: a context giving the callback told the bytes of `path` read so far."""
        self.file(path)

        def update(done: int) -> None:
            self.done = done
            self.draw()

        return contextlib.nullcontext(update)

    @property
    def fraction(self) -> float:
        return min(1.0, (self.before + min(self.done, self.size)) / self.total) if self.total else 0.0

    def draw(self) -> None:
        now = self.clock()
        if now - self.start < self.delay or (self.drawn_at is not None and now - self.drawn_at < REDRAW):
            return
        self.drawn_at = now
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        cells = 24
        filled = int(self.fraction * cells)
        line = (f"{self.fraction:4.0%} [{'#' * filled}{'-' * (cells - filled)}] "
                f"{_bytes(self.before + min(self.done, self.size))} of {_bytes(self.total)}  {self.name}")
        self.stream.write("\r" + line[:width] + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
            self.drawn_at = None  # drawn again at the next read


def hide_progress() -> None:
    """Clear the bar, if one is shown, before writing a line to the terminal (it comes back at the next read)."""
    for bar in _ACTIVE:
        bar.clear()


def is_terminal(stream) -> bool:
    """Whether `stream` is a terminal (colour.py asks too)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: no terminal
        return False


def progress_bar(paths: Iterable[str], data_on_stdout: bool) -> ProgressBar | None:
    """The bar of a run over `paths`, or None: standard error is not a terminal, the command
    writes its data on a standard output that is the same screen, or there is nothing to measure."""
    if not is_terminal(sys.stderr) or (data_on_stdout and is_terminal(sys.stdout)):
        return None
    with quietly():  # the run's own walk tells of an unreadable .gitignore
        total = sum(stored_size(file) for file, _ in discover(paths))
    return ProgressBar(total) if total else None


@contextlib.contextmanager
def showing(bar: ProgressBar | None, watch: bool = True) -> Iterator[ProgressBar | None]:
    """While the run goes: the bar told of what is read (`watch`), cleared at the end."""
    if bar is None:
        yield None
        return
    _ACTIVE.append(bar)
    try:
        with watching_reads(bar) if watch else contextlib.nullcontext():
            yield bar
    finally:
        bar.clear()
        _ACTIVE.remove(bar)


def shows_progress(data_on_stdout: Callable[[dict], bool] = lambda options: True):
    """A command over PATHS shows the bar on a terminal (see progress_bar); `data_on_stdout`
    tells from the command's options whether it writes its data on standard output."""

    def decorate(command):
        @functools.wraps(command)
        def run(*args, **kwargs):
            with showing(progress_bar(kwargs.get("paths", ()), data_on_stdout(kwargs))):
                return command(*args, **kwargs)

        return run

    return decorate




def _bytes(count: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} TB"  # not reached
