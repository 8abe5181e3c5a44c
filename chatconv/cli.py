"""The `chatconv` command: a thin layer that parses options, calls the library and prints.

Exit status: 0 valid (warnings allowed), 1 invalid input, 2 usage error or unreadable input.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from pathlib import Path

import click
import orjson

from .problems import ChatconvError, Problem, UnreadableInput
from .prompt.convert import DEFAULT_SYSTEM_PROMPT, SYSTEM_POLICIES
from .providers import TARGETS
from .recordings import (FIELD_NAMES, ConversationPairings, dataset_item, iter_recording_steps, parse_field_map,
                         step_row_json, step_text, unwritten_tool_calls)
from .schemas import load_schema, schema_names
from .validate import KIND_ALIASES, Summary, Validator, canonical_kind, kind_names

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


def _write_json_line(value) -> None:
    sys.stdout.buffer.write(orjson.dumps(value) + b"\n")


def _github_annotation(problem: Problem) -> str:
    # Workflow commands need their property values and message escaped.
    def escape(text: str, prop: bool = False) -> str:
        text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text

    level = "error" if problem.is_error else "warning"
    message = f"{problem.path}: {problem.message}" + (f" ({problem.hint})" if problem.hint else "")
    return (f"::{level} file={escape(problem.file, True)},line={problem.line or 1},"
            f"col={problem.column or 1},title=chatconv::{escape(message)}")


def _summary_line(summary: Summary) -> str:
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    text = (f"{plural(summary.files, 'file')}, {plural(summary.records, 'record')}: "
            f"{plural(summary.errors, 'error')}, {plural(summary.warnings, 'warning')}")
    if summary.skipped:
        text += f" ({summary.skipped} skipped: not chatconv records)"
    if summary.stopped:
        text += " (stopped early: --max-errors reached)"
    return text


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="chatconv")
def cli():
    """Validate, convert and migrate LLM eval data: eval files, chat prompts, recordings.

    \b
    Examples:
      chatconv validate examples/                 every eval file and recording in a folder
      chatconv validate run.jsonl --format json   machine-readable problems
      chatconv schema eval-file                   the JSON Schema of an eval file
    """


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--kind", type=click.Choice(kind_names()), metavar="KIND",
              help=f"Treat every record as this kind instead of detecting it: {', '.join(kind_names())}.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "github"]), default="text",
              show_default=True, help="text: one line per problem; json: one object; github: workflow annotations.")
@click.option("--max-errors", type=click.IntRange(min=1), help="Stop after this many errors.")
@click.option("--allow-outside-root", is_flag=True,
              help="Accept file references that resolve outside the repository root.")
@click.option("--skip-unknown", is_flag=True,
              help="Skip named files whose kind cannot be told (as in folders), e.g. from pre-commit.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes that check JSONL files (output is the same for any N). "
                   "[default: one per core for files of 16 MiB or more, else 1]")
def validate(paths, kind, output_format, max_errors, allow_outside_root, skip_unknown, jobs):
    """Check eval files, configs and recorded conversations against their schemas.

    PATHS are files, folders (searched for .yaml, .yml, .json and .jsonl files) or - for
    standard input. The kind of each record is told from its content; --kind forces one.
    Legacy shapes are reported as warnings that name the migration which rewrites them.

    \b
    Text output, one line per problem, then a summary:
      FILE:LINE:COL: error|warning: JSON.PATH: message (hint)
    Exit status: 0 valid (warnings allowed), 1 invalid, 2 unreadable input or usage error.
    """
    validator = Validator(kind=canonical_kind(kind) if kind else None,
                          allow_outside_root=allow_outside_root, max_errors=max_errors,
                          skip_unknown=skip_unknown, jobs=jobs)
    problems = []
    for problem in validator.run(paths):
        if output_format == "text":
            click.echo(problem.format_text())
        elif output_format == "github":
            click.echo(_github_annotation(problem))
        else:
            problems.append(problem.to_dict())
    summary = validator.summary
    if output_format == "json":
        _write_json_line({"files": summary.files, "records": summary.records, "errors": summary.errors,
                          "warnings": summary.warnings, "problems": problems})
    else:
        click.echo(_summary_line(summary), err=output_format == "github")
    if summary.unreadable:
        sys.exit(EXIT_UNREADABLE)
    sys.exit(EXIT_INVALID if summary.errors else EXIT_OK)


@cli.command(help="List the schema names, or print the JSON Schema called NAME.\n\nNAME may also be a short "
             "kind, as --kind takes: " + ", ".join(f"{alias} ({kind})" for alias, kind in sorted(KIND_ALIASES.items())) + ".")
@click.argument("name", required=False)
def schema(name):
    if name is None:
        for known in schema_names():
            click.echo(f"{known:32} {load_schema(known).get('title', '')}")
        return
    try:
        click.echo(orjson.dumps(load_schema(canonical_kind(name)), option=orjson.OPT_INDENT_2).decode())
    except KeyError as exc:
        raise click.UsageError(exc.args[0]) from None


def _sound_globs(ctx, param, patterns):
    from .references import pattern_problem

    for pattern in patterns:
        reason = pattern_problem(pattern)
        if reason:
            raise click.BadParameter(f"bad glob {pattern!r}: {reason}")
    return patterns


@cli.command()
@click.argument("eval_file", type=click.Path(dir_okay=False))
@click.option("--case", "case_ids", multiple=True, metavar="ID", help="Only this case (repeatable).")
@click.option("--target", type=click.Choice(TARGETS), default="raw", show_default=True,
              help="raw: question, guidelines and chat_prompt; openai/anthropic/gemini: that API's request "
                   "body; agent: the question for agent providers.")
@click.option("--system-policy", type=click.Choice(SYSTEM_POLICIES), default="merge", show_default=True,
              help="System messages after the conversation started: merge into the system message, "
                   "re-tag as assistant or user with a [System]: prefix, or keep in place.")
@click.option("--default-system-prompt", default=DEFAULT_SYSTEM_PROMPT, show_default=True,
              help="The system prompt used when a case has guidelines but no system text of its own.")
@click.option("--system-prompt", help="A system prompt for cases whose input and metadata have none.")
@click.option("--guideline-pattern", "guideline_patterns", multiple=True, metavar="GLOB", callback=_sound_globs,
              help="Files matching this glob are guidelines (repeatable); replaces the eval file's "
                   "and the config's patterns.")
@click.option("--allow-outside-root", is_flag=True,
              help="Accept file references that resolve outside the repository root.")
@click.option("--repair", is_flag=True,
              help="Fix what the target API would refuse (e.g. a late system message for Anthropic) "
                   "instead of failing; every repair is reported on stderr.")
def prompt(eval_file, case_ids, target, system_policy, default_system_prompt, system_prompt,
           guideline_patterns, allow_outside_root, repair):
    """Build the prompt of each case of EVAL_FILE: one JSON object per line, in file order.

    \b
    raw:    {"id", "question", "guidelines", "chat_prompt"}   (chat_prompt null for one user turn)
    other:  {"id", "request"}   the body the target's API takes, without model and sampling settings

    Multi-turn cases reach chat APIs as real multi-turn message arrays; the question keeps
    [Role]: markers for logging and agent providers.
    """
    from .prompt import EvalFileContext, PromptOptions, build_prompt_inputs
    from .providers import ProviderRuleError, render_request
    from .validate import load_eval_file

    options = PromptOptions(list(guideline_patterns) or None, system_prompt, None, system_policy,
                            default_system_prompt, allow_outside_root)
    try:
        record, warnings = load_eval_file(eval_file, allow_outside_root)
    except UnreadableInput as exc:
        _fail(exc.problems, EXIT_UNREADABLE)
    for warning in warnings:
        click.echo(warning.format_text(), err=True)
    cases = list(enumerate(record.data["evalcases"]))
    unknown = [c for c in case_ids if c not in {case["id"] for _, case in cases}]
    if unknown:
        known = ", ".join(case["id"] for _, case in cases)
        raise click.BadParameter(f"no case {unknown[0]!r} in {eval_file}; its cases: {known}", param_hint="--case")
    context = EvalFileContext.for_file(Path(eval_file), record.data, options, record.locate)
    for index, case in cases:
        if case_ids and case["id"] not in case_ids:
            continue
        inputs = build_prompt_inputs(case, context, options, ("evalcases", index))
        if target == "raw":
            _write_json_line({"id": case["id"], "question": inputs.question, "guidelines": inputs.guidelines,
                              "chat_prompt": inputs.chat_prompt})
            continue
        request = inputs.as_request(context.case_system_prompt(case, options))
        try:
            body, repairs = render_request(request, target, repair, default_system_prompt)
        except ProviderRuleError as exc:
            where = context.problem(("evalcases", index), f"case {case['id']!r}: {exc.problems[0].message}",
                                    exc.problems[0].hint)
            _fail([where], EXIT_INVALID)
        for note in repairs:
            click.echo(f"{eval_file}: case {case['id']!r}: {note}", err=True)
        _write_json_line({"id": case["id"], "request": body})


def _fail(problems, status: int):
    for problem in problems:
        click.echo(problem.format_text(), err=True)
    sys.exit(status)


# ---------------------------------------------------------------------------------------------
# Recordings: text, tools, dataset


_FIELD_HELP = (
    f"Read the step field NAME from the record's KEY (repeatable), e.g. --field output=response. NAME is one "
    f"of: {', '.join(FIELD_NAMES)}. A NAME or a KEY may be given once; a record that has both KEY and NAME is "
    f"refused (the rename would hide one of them).")


def _field_map(ctx, param, pairs):
    try:
        return parse_field_map(list(pairs))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _recording_options(command):
    command = click.option("--format", "output_format", type=click.Choice(["jsonl", "table"]), default="jsonl",
                           show_default=True, help="jsonl: one JSON object per line; table: for a person.")(command)
    command = click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=_field_map,
                           help=_FIELD_HELP)(command)
    return click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(command)


_RECORDING_FILE = """FILE (- for standard input) holds one step per line or one conversation per line; legacy
    shapes are read too. A step that is invalid, or whose output cannot be written exactly, is
    reported on standard error and left out (exit status 1)."""


def _steps_of(file, field_map, problems):
    try:
        yield from iter_recording_steps(file, field_map, problems)
    except UnreadableInput as exc:
        _fail(exc.problems, EXIT_UNREADABLE)


def _emit_step_row(item, row: dict, output_format: str, columns: tuple, problems) -> None:
    """Write a row made of one step, unless it cannot be written exactly: then a problem."""
    try:
        line = step_row_json(item, row)
    except ChatconvError as exc:
        problems.extend(exc.problems)
        return
    _emit(row, output_format, columns, line)


def _emit(row: dict, output_format: str, columns: tuple, line: bytes | None = None) -> None:
    if output_format == "jsonl":
        sys.stdout.buffer.write((line or orjson.dumps(row)) + b"\n")
        return
    cells = []
    for column in columns:
        value = row[column]
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        text = text.replace("\n", " ")
        cells.append(text if len(text) <= 60 else text[:57] + "...")
    click.echo("  ".join(cells))


def _finish(problems) -> None:
    for problem in problems:
        click.echo(problem.format_text(), err=True)
    sys.exit(EXIT_INVALID if any(p.is_error for p in problems) else EXIT_OK)


@cli.command(help=f"""The text of each step's whole output array: {{"conversationId", "stepIndex", "text"}}.

    {_RECORDING_FILE}
    """)
@_recording_options
def text(file, field_map, output_format):
    problems = []
    for item in _steps_of(file, field_map, problems):
        row = {"conversationId": item.conversation_id, "stepIndex": item.step["stepIndex"],
               "text": step_text(item.step)}
        _emit_step_row(item, row, output_format, ("conversationId", "stepIndex", "text"), problems)
    _finish(problems)


@cli.command(help=f"""Each tool call with its result, paired by toolCallId across the steps of a conversation.

    \b
    {{"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}}
    status is ok, error or unanswered; result is the tool result's output value (null when
    unanswered). Calls come out per conversation, in order. Results that answer no call and
    repeated ids are reported on stderr.

    {_RECORDING_FILE}
    """)
@_recording_options
@click.option("--window", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Conversations followed at once: calls are paired within this many recent conversations.")
def tools(file, field_map, output_format, window):
    problems = []
    pairings = ConversationPairings(window, problems)
    left_out = set()  # (conversation id, toolCallId) of the calls whose row cannot be written

    def emit(flushed):
        for conversation_id, pairing in flushed:
            for paired in pairing.calls:
                call = paired.call
                if (conversation_id, call["toolCallId"]) in left_out:
                    continue
                row = {"conversationId": conversation_id, "stepIndex": paired.step_index,
                       "toolCallId": call["toolCallId"], "toolName": call["toolName"], "args": call["args"],
                       "result": paired.result["output"].get("value") if paired.result else None,
                       "status": paired.status}
                _emit(row, output_format, ("conversationId", "stepIndex", "toolName", "status", "toolCallId"))

    for item in _steps_of(file, field_map, problems):
        for call_id, problem in unwritten_tool_calls(item):
            left_out.add((item.conversation_id, call_id))
            problems.append(problem)
        emit(pairings.add(item))
    emit(pairings.finish())
    _finish(problems)


@cli.command(help=f"""Dataset items, one per step: {{"id", "prompt", "completion", "metadata"}}.

    id is "<conversation id>-step-<stepIndex>"; a step without a conversationId belongs to the
    file's own conversation, named after the file without its suffix (stdin for -).

    {_RECORDING_FILE}
    """)
@_recording_options
def dataset(file, field_map, output_format):
    problems = []
    for item in _steps_of(file, field_map, problems):
        _emit_step_row(item, dataset_item(item), output_format, ("id", "prompt", "completion"), problems)
    _finish(problems)


PROGRESS_MIN_BYTES = 32 << 20  # a progress bar on a terminal for files from this size


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", type=click.Path(allow_dash=True), metavar="OUT",
              help="Write here: a file for one input file (- for standard output), else a folder (made if "
                   "needed, as is OUT/ with a trailing slash) that mirrors the inputs.")
@click.option("--in-place", is_flag=True, help="Rewrite each file in place, atomically (old or new, whole).")
@click.option("--backup", is_flag=True, help="With --in-place: keep the old file as FILE.bak.")
@click.option("--dry-run", is_flag=True, help="Write nothing; print what would change, per migration, with examples.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when anything would change (for CI).")
@click.option("--rejects", "rejects_file", type=click.Path(dir_okay=False, allow_dash=False), metavar="FILE",
              help="Set records that cannot be parsed or migrated aside in FILE (JSONL, appended) and go on.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Worker processes for JSONL files.")
def migrate(paths, output, in_place, backup, dry_run, check, rejects_file, jobs):
    """Rewrite recordings (JSONL) and eval files (YAML, JSON) in the current shape.

    PATHS are files, folders (searched as `validate` searches them) or - for standard input.
    Each record goes through the numbered migrations that apply to it; a record that none
    changes is written byte for byte as it was read. Migrated records go to standard output
    (one input), to -o OUT, or back into each file with --in-place.

    \b
    Standard error: FILE:LINE: error: message for a record that stops the run, then
      N files, N records read: N migrated, N unchanged, N rejected
    and one line per migration applied.
    Exit status: 0 done, 1 a record stopped the run (or --check found changes),
    2 unreadable input or usage error.
    """
    from .migrate import LineRejected, Tally, Workers, migrate_file

    if in_place and output:
        raise click.UsageError("use -o OUT or --in-place, not both")
    if backup and not in_place:
        raise click.UsageError("--backup keeps FILE.bak of a file rewritten with --in-place")
    writes = not (dry_run or check)
    targets = _migration_targets(paths, output, in_place, writes)
    if rejects_file and writes:
        _refuse_rejects_among(rejects_file, targets)
    total, done, status = Tally(), [], EXIT_OK
    rejects = _open_rejects(rejects_file if writes else os.devnull) if rejects_file else None
    try:
        with Workers(jobs) as workers:
            for file, target in targets:
                try:
                    with _migration_progress(file) as progress:
                        tally = migrate_file(file, target if writes else None, backup=backup, rejects=rejects,
                                             workers=workers, progress=progress)
                except LineRejected as exc:
                    click.echo(f"{exc.reject.file}:{exc.reject.line}: error: {exc.reject.error}", err=True)
                    status = EXIT_INVALID
                    break
                except UnreadableInput as exc:
                    for problem in exc.problems:
                        hint = f" ({problem.hint})" if problem.hint else ""
                        click.echo(f"{problem.file}: error: {problem.message}{hint}", err=True)
                    status = EXIT_UNREADABLE
                    continue
                total.add(tally)
                done.append((file, tally))
    finally:
        for _, target in targets:  # a device or pipe given as -o: its last bytes go out now
            if hasattr(target, "close") and target is not sys.stdout.buffer:
                try:
                    target.close()
                except OSError as exc:
                    click.echo(f"{target.name}: error: cannot write the migrated records: {exc.strerror}", err=True)
                    status = EXIT_UNREADABLE
        if rejects is not None:
            try:
                rejects.close()
            except OSError as exc:  # the last rejected lines could not be written
                click.echo(f"{rejects_file}: error: cannot write the rejected lines here: {exc.strerror}", err=True)
                status = EXIT_UNREADABLE
    changed = [(file, tally) for file, tally in done if tally.migrated or tally.rejected]
    if dry_run:
        _print_dry_run(changed, total)
    if check:
        for file, tally in changed:
            click.echo(f"would migrate {file} ({tally.migrated + tally.rejected} of {tally.read} records)", err=True)
    if done:
        _print_migration_summary(total, len(done), writes)
    if status == EXIT_OK and check and changed:
        status = EXIT_INVALID
    sys.exit(status)


def _migration_targets(paths, output, in_place, writes) -> list[tuple[str, object]]:
    """(input file, where its migrated bytes go: a Path, standard output, or None) for each file."""
    from .validate import discover

    files = []  # (file, its name under a -o folder)
    for path in paths:
        if path != "-" and os.path.isdir(path):
            files += [(file, os.path.relpath(file, path)) for file, _ in discover([path])]
        else:
            files.append((path, os.path.basename(path)))
    if not writes:
        return [(file, None) for file, _ in files]
    if in_place:
        if any(file == "-" for file, _ in files):
            raise click.UsageError("standard input cannot be rewritten in place; use -o OUT")
        for file, _ in files:
            if not os.path.isfile(file):
                raise click.UsageError(f"--in-place rewrites regular files; {file} is not one")
        # A link stays a link: the file it points to is the one rewritten.
        return [(file, Path(os.path.realpath(file))) for file, _ in files]
    one_file = len(files) == 1 and not os.path.isdir(paths[0])
    if not output or output == "-":
        if not one_file:
            raise click.UsageError("several input files: pass -o FOLDER or --in-place (or --dry-run, --check)")
        return [(files[0][0], sys.stdout.buffer)]
    folder = output.endswith(("/", os.sep)) or os.path.isdir(output)
    if one_file and not folder:
        return [(files[0][0], _output_file(output))]
    names = [name for _, name in files]
    if "-" in names or len(set(names)) < len(names):
        raise click.UsageError("-o FOLDER needs input files with distinct names (not standard input)")
    if os.path.exists(output) and not os.path.isdir(output):
        raise click.UsageError(f"-o {output} is a file; several input files need -o FOLDER")
    inputs = {os.path.realpath(file): file for file, _ in files}
    for file, name in files:
        other = inputs.get(os.path.realpath(Path(output) / name))
        if other is not None and other != file:
            raise click.UsageError(f"-o {output} would write over the input {other} before it is read; "
                                   "write to a folder outside the inputs")
    try:
        for name in names:
            (Path(output) / name).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"-o {output}: cannot make the folder for the migrated files: {exc.strerror}") from None
    return [(file, Path(output) / name) for file, name in files]


def _output_file(output: str):
    """Where one input's migrated bytes go: a new or regular file is replaced atomically (a
    link's target, the link staying); a device or pipe (/dev/null, say) is written to."""
    if os.path.exists(output) and not os.path.isfile(output):
        try:
            return click.open_file(output, "wb")
        except OSError as exc:
            raise click.UsageError(f"-o {output}: cannot write to it: {exc.strerror}") from None
    target = Path(os.path.realpath(output))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"-o {output}: cannot make its folder: {exc.strerror}") from None
    return target


def _refuse_rejects_among(rejects_file: str, targets) -> None:
    """--rejects must name a file of its own: appended to an input or an output, the rejected
    lines would be lost in the rewrite or mixed into the data."""
    def same(path) -> bool:
        path = str(path)
        return os.path.realpath(path) == os.path.realpath(rejects_file) or (
            os.path.exists(path) and os.path.exists(rejects_file) and os.path.samefile(path, rejects_file))

    if rejects_file == "-":
        raise click.UsageError("--rejects takes a file (the migrated records may be on standard output)")
    for file, target in targets:
        if file != "-" and same(file) or isinstance(target, Path) and same(target) or (
                target is sys.stdout.buffer and _is_standard_output(rejects_file)):
            raise click.UsageError(f"--rejects {rejects_file} is also an input or output file; give it a file of its own")


def _is_standard_output(path: str) -> bool:
    try:
        found, stdout = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (found.st_dev, found.st_ino) == (stdout.st_dev, stdout.st_ino)


def _open_rejects(file: str):
    # Appended to, never truncated: an earlier run's rejects may be the only copy of those lines.
    try:
        return open(file, "ab")
    except OSError as exc:
        raise click.UsageError(f"cannot write the rejects file {file}: {exc.strerror}") from None


def _migration_progress(file: str):
    """A progress bar on a terminal for a long file, as a callback taking the bytes read."""
    import contextlib

    size = os.path.getsize(file) if file != "-" and os.path.isfile(file) else 0
    if size < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return contextlib.nullcontext(None)

    @contextlib.contextmanager
    def bar():
        with click.progressbar(length=size, label=file, file=sys.stderr) as progress:
            yield lambda done: progress.update(done - progress.pos)

    return bar()


def _print_dry_run(changed, total) -> None:
    from .migrate import migrations

    for file, tally in changed:
        click.echo(f"would migrate {file}: {tally.migrated} of {tally.read} records"
                   + (f", {tally.rejected} rejected" if tally.rejected else ""))
    for migration in migrations():
        count = total.by_migration.get(migration.name)
        if count:
            click.echo(f"{migration.name}: {count} record{'' if count == 1 else 's'} ({migration.summary})")
            for file, line, path in total.examples[migration.name]:
                click.echo(f"  {file}:{line}: {path}")
    if total.rejected:
        click.echo(f"rejected: {total.rejected} record{'' if total.rejected == 1 else 's'}")
        for file, line, error in total.rejected_examples:
            click.echo(f"  {file}:{line}: {error}")


def _print_migration_summary(total, files: int, writes: bool) -> None:
    from .migrate import migrations

    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    line = (f"{plural(files, 'file')}, {plural(total.read, 'record')} read: {total.migrated} migrated, "
            f"{total.unchanged} unchanged, {total.rejected} rejected")
    click.echo(line + ("" if writes else " (nothing written)"), err=True)
    for migration in migrations():
        count = total.by_migration.get(migration.name)
        if count:
            click.echo(f"  {migration.name}: {plural(count, 'record')}", err=True)


def main() -> None:
    if hasattr(signal, "SIGPIPE"):
        # `chatconv text run.jsonl | head`: the reader going away ends the command quietly, as
        # it ends cat or grep (Python would raise BrokenPipeError; click would exit 1, "invalid").
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        status = cli.main(prog_name="chatconv", standalone_mode=False)
    except SystemExit as exc:  # the commands exit with their status
        status = exc.code
    except click.exceptions.Abort:  # Ctrl-C: workers end their batch, temporary files are removed
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UnreadableInput as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_UNREADABLE)
    except ChatconvError as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_INVALID)
    except OSError as exc:  # standard output on a full disk, say
        _stop_writing(exc)
        sys.exit(EXIT_UNREADABLE)
    try:
        sys.stdout.flush()
    except OSError as exc:
        _stop_writing(exc)
        status = EXIT_UNREADABLE
    sys.exit(status if isinstance(status, int) else EXIT_OK)  # None: done; --help and --version


def _stop_writing(exc: OSError) -> None:
    """Say why the command stopped on a system error (most often: standard output on a full
    disk), and let nothing more be written to standard output at exit."""
    full = exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO)
    what = "cannot write the output" if full else "stopped"
    where = exc.filename or ("standard output" if full else None)
    click.echo(f"chatconv: error: {what}{f' ({where})' if where else ''}: {exc.strerror or exc}", err=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
