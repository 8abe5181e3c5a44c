"""The entries of a batch of lines across the process boundary: check_lines run in a worker
(check_file_lines reads its batch from the file, check_sent_lines is sent it), its entries
sent back as plain tuples, which this process reads as they are, but for their problems,
made whole again (entries_from_wire), and the problems a Rendering asks for written into a
block (see rendered); and the batch this process holds while it merges them (LineBatch).
"""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter

from ..problems import Problem
from ..sources import Record, is_blank_line, read_batch
from .lines import LineOptions, ToolLine, check_lines
from .rendered import BlockWriter

_problem_fields = attrgetter(*(field.name for field in fields(Problem)))


def check_file_lines(offset: int, length: int, first_line: int, options: LineOptions,
                     opens_file: bool) -> tuple[list[tuple], tuple | None]:
    """check_lines in a worker process, which reads its lines from the file itself. The entries
    go back as plain tuples (entries_from_wire makes their problems whole again): pickle takes
    a Python call for each NamedTuple, which would cost the workers more than checking the
    lines. With options.rendering, the lines' own problems go back written, as a block (see
    rendered)."""
    return check_sent_lines(read_batch(options.file, offset, length), first_line, options, opens_file)


def check_sent_lines(lines: bytes, first_line: int, options: LineOptions,
                     opens_file: bool) -> tuple[list[tuple], tuple | None]:
    """check_lines in a worker, on lines sent to it: a compressed file's (which cannot be read by
    offset), or any file's on a Dask cluster (whose workers need not see it); the entries go
    back as check_file_lines sends them."""
    written = None if options.rendering is None else BlockWriter(options.file, options.rendering)
    entries = check_lines(lines, first_line, options, opens_file, written)
    wire = []
    for where, problems, steps, outcome in entries:
        if steps is not None:
            conversation_id, first_index, last_index, count, tool_lines, settled = steps
            if tool_lines is not None:  # None for a run that settles (see check_lines)
                tool_lines = tuple([(line, tuple(span), parts, _to_wire(own)) for line, span, parts, own in tool_lines])
            steps = (conversation_id, first_index, last_index, count, tool_lines, settled)
        wire.append((tuple(where), _to_wire(problems), steps, outcome))
    return wire, None if written is None else written.wire()


def _to_wire(problems: tuple[Problem, ...]) -> tuple:
    # As their fields: a Problem costs pickle three times more (a legacy file warns on every line).
    return tuple([_problem_fields(problem) for problem in problems]) if problems else ()


def _from_wire(problems: tuple) -> tuple[Problem, ...]:
    return tuple([Problem(file, line, column, path, message, severity, hint, code=code)
                  for file, line, column, path, message, severity, hint, code in problems])


def entries_from_wire(wire: list[tuple]) -> list[tuple]:
    """The entries check_file_lines sent, as check_lines made them (but for the problems written
    in a block; a settled run's tool lines are None there too), each of their NamedTuples as a
    plain tuple of its fields: the merge reads them by position (a NamedTuple made again is a
    Python call each, a tool line's three)."""
    for index, (where, problems, steps, outcome) in enumerate(wire):
        # A run that settles has no tool lines (see check_lines).
        if steps is not None and steps[5] is None and any(own for *_, own in steps[4]):
            steps = (*steps[:4], tuple([(line, span, parts, _from_wire(own) if own else ())
                                        for line, span, parts, own in steps[4]]), None)
        elif not problems:
            continue  # most entries: as sent
        wire[index] = (where, _from_wire(problems) if problems else (), steps, outcome)
    return wire


class LineBatch:
    """Lines of a JSONL file held by the main process while their entries are merged: the
    RecordSource (see conversations) of their LineSpans. With the options check_lines took, it
    reads again the tool lines of a run that settled, which the entry has not (tool_lines)."""

    __slots__ = ("file", "lines", "options")

    def __init__(self, file: str, lines: bytes, options: LineOptions | None = None):
        self.file = file
        self.lines = lines
        self.options = options

    def record(self, where: tuple) -> Record:
        """A light Record of one line (a LineSpan, or its fields as a worker sent them): enough
        to locate a problem in it, no parsed data."""
        number, start, end, positions, aliases = where
        return Record(self.file, number, text=self.lines[start:end], positions=positions, aliases=aliases)

    def tool_lines(self, where: tuple, count: int) -> tuple[LineBatch, tuple[ToolLine, ...]]:
        """The tool lines of a run of `count` lines from `where` (its first line's span), which
        settled where its lines were checked and so has none: wanted when an id it calls proves
        called before it (RecordingChecks.settle). They are located in the batch returned, of
        the run's lines alone; their own problems were reported with the run, and are left out (a
        line that holds no tool part too)."""
        number, start = where[0], where[1]
        end, left, lines = start, count, self.lines
        while left and end <= len(lines):  # the run's `count` lines, and any blank line among them
            stop = lines.find(b"\n", end)
            stop = len(lines) if stop < 0 else stop
            if not is_blank_line(lines[end:stop]):
                left -= 1
            end = stop + 1
        run = lines[start:end]
        # One entry, as the run was read in the batch (a ValueError, not a wrong one, otherwise).
        (entry,) = check_lines(run, number, self.options, opens_file=False, settle=False)
        tool_lines = tuple([line._replace(problems=()) for line in entry.steps.tool_lines if line.parts])
        return LineBatch(self.file, run, self.options), tool_lines
