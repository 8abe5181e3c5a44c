"""`chatconv schema`: list the schema names, or print one JSON Schema."""

from __future__ import annotations

import click
import orjson

from ..kinds import KIND_ALIASES, canonical_kind
from ..schemas import load_schema, schema_names

_ALIASES = ", ".join(f"{alias} ({kind})" for alias, kind in sorted(KIND_ALIASES.items()))


@click.command(help="List the schema names, or print the JSON Schema called NAME.\n\nNAME may also be a short "
               f"kind, as --kind takes: {_ALIASES}.")
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
