"""`chatconv validate`: check files against their schemas and report each problem found."""

from __future__ import annotations

import sys

import click

from ..eras import ERAS, era_names
from ..kinds import kind_names
from ..validate import ProblemBlock, Validator
from .releases import agentv_option
from .recordings import FIELD_HELP, field_map_option, scheduler_option
from .colour import color_option
from .progress import shows_progress
from .discovery import no_ignore_option
from .limits import limit_options
from .max_warnings import max_warnings_option
from .reporters import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, REPORTERS, JsonReporter
from .sarif import SarifReporter
from .settings import selection_options

FORMATS = {**REPORTERS, "sarif": SarifReporter}


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--kind", type=click.Choice(kind_names()), metavar="KIND",
              help=f"Treat every record as this kind instead of detecting it: {', '.join(kind_names())}.")
@click.option("--era", type=click.Choice(era_names()), metavar="ERA",
              help="Check eval files as written in this AgentV era instead of telling it from their $schema, "
                   "then their keys: " + "; ".join(f"{era.NAME} ({era.TITLE.split(':')[0]})" for era in ERAS)
                   + ". `chatconv schema` lists the eras.")
@agentv_option
@click.option("--format", "output_format", type=click.Choice(list(FORMATS)), default="text",
              show_default=True, help="text: one line per problem; json: one object, its problems first; "
                                      "github: workflow annotations; sarif: a SARIF 2.1.0 log for GitHub code "
                                      "scanning (summary on standard error).")
@click.option("--max-errors", type=click.IntRange(min=1), help="Stop after this many errors.")
@click.option("--allow-outside-root", is_flag=True,
              help="Accept file references that resolve outside the repository root.")
@click.option("--skip-unknown", is_flag=True,
              help="Skip named files whose kind cannot be told (as in folders), e.g. from pre-commit.")
@click.option("--show-files", is_flag=True,
              help="List the files found in folders that were passed over, each with why, before the summary "
                   "(the JSON output always lists them under `skipped`).")
@click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=field_map_option, help=FIELD_HELP)
@click.option("--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes that check JSONL files (output is the same for any N). "
                   "[default: one per core for files of 16 MiB or more, else 1]")
@scheduler_option
@max_warnings_option
@selection_options
@limit_options
@no_ignore_option
@color_option
@shows_progress(lambda options: False)  # its problems clear the bar
def validate(paths, kind, era, agentv, output_format, max_errors, allow_outside_root, skip_unknown, show_files, field_map,
             jobs, scheduler, selection):
    """Check eval files, configs and recorded conversations against their schemas.

    PATHS are files, folders (searched for .yaml, .yml, .json and .jsonl files, .jsonl.gz and
    .jsonl.zst too: read decompressed, streamed) or - for standard input. The kind of each record is told from its content; --kind forces one.
    An eval file is checked against its own era's schema (--era forces one); a file that a
    config's eval_patterns names, or named as AgentV names eval files (*.eval.yaml, *.eval.yml,
    suite.yaml, eval.yaml, EVAL.yaml), is an eval file: when its keys tell no era, it is checked
    as one of the newest era, as AgentV does. A folder's other files that hold no record chatconv
    knows are passed over and counted (--show-files lists them). Unknown keys in config files are warnings.
    Legacy shapes are reported as warnings that name the migration which rewrites them.

    A .json file that holds an array of records (a stepTraces.json, say) has each element
    checked as a record of its own kind: its problems are at its line and column, their paths
    start with its index ($[3].input). --field reads a record's field from another key, also
    nested (the file's JSONL lines are then read one by one, without workers), e.g.
      chatconv validate stepTraces.json --field input=turn.userMessage --field output=agentMessages

    \b
    Text output, one line per problem, then a summary, then a count per code:
      FILE:LINE:COL: error|warning: JSON.PATH: message (hint)
      N files, N records: N errors, N warnings
        N × CODE (error|warning)
    --max-warnings N prints N warnings of each code at most (a legacy recording warns on
    every line); the counts stay whole. --select / --ignore CODE report only, or leave out,
    problems of those codes (also set in [tool.chatconv] of pyproject.toml); an ignored
    problem is not printed, does not fail the run, and is counted as ignored in the summary.
    Exit status: 0 valid (warnings allowed), 1 invalid, 2 unreadable input or usage error.
    """
    reporter = FORMATS[output_format]()
    reporter.show_files = show_files
    validator = Validator(kind=kind, era=era, agentv=agentv,
                          allow_outside_root=allow_outside_root, max_errors=max_errors,
                          skip_unknown=skip_unknown, jobs=jobs, field_map=field_map or None,
                          scheduler=scheduler, keep=selection.keeps if selection.filters else None,
                          render=reporter.render)  # the workers write the problems as the reporter would
    try:
        for problem in validator.run(paths):
            if problem.__class__ is ProblemBlock:
                reporter.block(problem)
            else:
                reporter.problem(problem)
        summary = validator.summary
        reporter.summary(summary)
    except BaseException:  # Ctrl-C, a usage error found mid-run: the JSON written so far still parses
        if reporter.__class__ is JsonReporter:
            reporter.close_unfinished()
        raise
    if summary.unreadable:
        sys.exit(EXIT_UNREADABLE)
    sys.exit(EXIT_INVALID if summary.errors else EXIT_OK)
