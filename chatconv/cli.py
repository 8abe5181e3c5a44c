"""The `chatconv` command: a thin layer that parses options, calls the library and prints.

Exit status: 0 valid (warnings allowed), 1 invalid input, 2 usage error or unreadable input.
"""

from __future__ import annotations

import os
import sys

import click
import orjson

from .problems import ChatconvError, Problem
from .schemas import load_schema, schema_names
from .validate import Summary, Validator, canonical_kind, kind_names

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
def validate(paths, kind, output_format, max_errors, allow_outside_root, skip_unknown):
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
                          skip_unknown=skip_unknown)
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


@cli.command()
@click.argument("name", required=False)
def schema(name):
    """List the schema names, or print the JSON Schema called NAME."""
    if name is None:
        for known in schema_names():
            click.echo(f"{known:32} {load_schema(known).get('title', '')}")
        return
    try:
        click.echo(orjson.dumps(load_schema(name), option=orjson.OPT_INDENT_2).decode())
    except KeyError as exc:
        raise click.UsageError(exc.args[0]) from None


def main() -> None:
    try:
        cli.main(prog_name="chatconv")
    except ChatconvError as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_INVALID)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); stop quietly like other Unix tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        sys.exit(130)
