"""The `chatconv` command: a thin layer that parses options, calls the library and prints.

One module per command group (validate, schema, prompt, recordings: text / tools / dataset,
migrate, formats: import / export); reporters writes every problem. Exit status: 0 valid (warnings allowed), 1 invalid
input, 2 usage error or unreadable input.
"""

from __future__ import annotations

import errno
import importlib
import io
import os
import signal
import sys

import click

from ..problems import ChatconvError, UnreadableInput, UsageError
from ..sources.writing import whole_standard_output
from .reporters import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, fail

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_UNREADABLE", "cli", "main"]

# Each command, by the module of this package that defines it: a run imports only its own
# command's module, and so only the parts of chatconv that command uses (start-up time).
COMMAND_MODULES = {"dataset": "recordings", "export": "formats", "import": "formats", "migrate": "migrate", "prompt": "prompt", "schema": "schema",
                   "text": "recordings", "tools": "recordings", "validate": "validate"}


class _CommandsOnDemand(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(name)
        if module is None:
            return None
        commands = importlib.import_module(f"{__name__}.{module}")
        return getattr(commands, name, None) or getattr(commands, f"{name}_")  # import_: a Python keyword


@click.group(cls=_CommandsOnDemand,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="chatconv")
def cli():
    """Validate, convert and migrate LLM eval data: eval files, chat prompts, recordings.

    \b
    Examples:
      chatconv validate examples/                 every eval file and recording in a folder
      chatconv validate run.jsonl --format json   machine-readable problems
      chatconv schema eval-file                   the JSON Schema of an eval file
      chatconv import finetune.jsonl -o run.jsonl OpenAI, Anthropic, Gemini, OTel, inspect logs as steps
    """


def main() -> None:
    if hasattr(signal, "SIGPIPE"):
        # `chatconv text run.jsonl | head`: the reader going away ends the command quietly, as
        # it ends cat or grep (Python would raise BrokenPipeError; click would exit 1, "invalid").
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, _terminate)
    _stand_in_for_closed_streams()
    whole_standard_output()  # a short write (a disk filling up) raises, not truncates quietly
    try:
        status = cli.main(prog_name="chatconv", standalone_mode=False)
    except SystemExit as exc:  # the commands exit with their status
        if isinstance(sys.stdout, click.utils.PacifyFlushWrapper):  # click's end for a broken pipe (status 1)
            _end_as_sigpipe_ends()
        status = exc.code
    except BrokenPipeError:  # standard output's reader went away, in a run that ignores SIGPIPE
        _end_as_sigpipe_ends()
    except click.exceptions.Abort:  # Ctrl-C: workers end their batch, temporary files are removed
        click.echo("terminated" if _terminated else "interrupted", err=True)
        sys.exit(EXIT_TERMINATED if _terminated else EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UnreadableInput as exc:
        fail(exc.problems, EXIT_UNREADABLE)
    except UsageError as exc:  # found once the command runs (a Dask scheduler out of reach, say)
        click.UsageError(exc.message).show()
        sys.exit(EXIT_UNREADABLE)
    except ChatconvError as exc:
        fail(exc.problems, EXIT_INVALID)
    except OSError as exc:  # standard output on a full disk, say
        _stop_writing(exc)
        sys.exit(EXIT_UNREADABLE)
    try:
        sys.stdout.flush()
    except OSError as exc:
        _stop_writing(exc)
        status = EXIT_UNREADABLE
    sys.exit(status if isinstance(status, int) else EXIT_OK)  # None: done; --help and --version


EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130, as a shell tells a command that Ctrl-C ended
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143
_terminated = False


def _end_as_sigpipe_ends() -> None:
    """End as SIGPIPE ends `cat` (status 141 in a shell), once the signal was ignored (see
    interrupts.broken_pipes_raised): no message, nothing more written."""
    sys.stdout = None  # what Python would flush at exit cannot be written either
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)


def _terminate(signum, frame) -> None:
    """SIGTERM (`kill`, a service manager, a CI timeout) ends a run as Ctrl-C does, so that the
    same clean-up runs: workers end their batch, temporary files are removed. A second SIGTERM
    during that clean-up ends the process at once."""
    global _terminated
    _terminated = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt


class _ClosedInput(io.RawIOBase):
    """Standard input that was closed (`<&-`): reading it is an error that says so."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raise OSError(errno.EBADF, "standard input is closed: give the data as a file, or on a pipe")


def _stand_in_for_closed_streams() -> None:
    """A standard stream closed when chatconv starts (`>&-`, `2>&-`, `<&-`): Python has None
    for it. Its descriptor gets /dev/null, so that no file chatconv opens takes its number
    (and receives the output meant for it). Closed standard output or error ends the run
    here: exit 2, said on whichever of the two is open. Closed standard input is an error
    only when the command reads it."""
    closed = [name for name in ("stdin", "stdout", "stderr") if getattr(sys, name) is None]
    for name in closed:
        fd = {"stdin": 0, "stdout": 1, "stderr": 2}[name]
        if os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY) != fd:
            return  # not the lowest free number: leave things as they are
    if "stdin" in closed:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_ClosedInput()))
    writable = [name for name in ("stderr", "stdout") if name not in closed]
    if len(writable) < 2:
        for name in writable:
            getattr(sys, name).write(f"chatconv: error: standard {'output' if 'stdout' in closed else 'error'} is "
                                     "closed: nothing could be written (redirect it to a file or /dev/null)\n")
            getattr(sys, name).flush()
        os._exit(EXIT_UNREADABLE)


def _stop_writing(exc: OSError) -> None:
    """Say why the command stopped on a system error (most often: standard output on a full
    disk), and let nothing more be written to standard output at exit."""
    full = exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO)
    if full and not exc.filename:
        click.echo(f"chatconv: error: cannot write standard output: {exc.strerror or exc}", err=True)
    else:
        what = "cannot write the output" if full else "stopped"
        click.echo(f"chatconv: error: {what}{f' ({exc.filename})' if exc.filename else ''}: {exc.strerror or exc}",
                   err=True)
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError:  # no file descriptor left (or no standard output): close it instead
        _close_quietly(sys.stdout)


def _close_quietly(stream) -> None:
    try:
        os.close(stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass
