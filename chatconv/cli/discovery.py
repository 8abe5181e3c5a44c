"""--no-ignore, the one option of every command that searches folders: they skip what
`.gitignore` files ignore, as git does, unless told to walk everything."""

from __future__ import annotations

import functools

import click

from ..sources import walking_everything

NO_IGNORE_HELP = ("Search folders whole: by default files and folders that .gitignore files (and the repository's "
                  ".git/info/exclude) ignore are skipped, as git skips them. Files named on the command line "
                  "are always read. Hidden folders and node_modules, __pycache__, venv are skipped either way.")


def no_ignore_option(command):
    """Add --no-ignore to a command whose PATHS may be folders; a .gitignore that cannot be read
    is told of on standard error (its patterns are not applied) and the command goes on."""

    @functools.wraps(command)
    def run(*args, no_ignore=False, **kwargs):
        with walking_everything(no_ignore, report=lambda message: click.echo(f"chatconv: warning: {message}",
                                                                              err=True)):
            return command(*args, **kwargs)

    return click.option("--no-ignore", is_flag=True, help=NO_IGNORE_HELP)(run)
