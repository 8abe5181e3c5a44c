"""`chatconv schema`: list the schema names, or print one JSON Schema."""

from __future__ import annotations

import click
import orjson

from ..eras import ERAS
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
        click.echo("\nEval-file eras, oldest first (validate --era ERA forces one):")
        for era in ERAS:
            click.echo(f"{era.NAME:12} {era.TITLE}")
            click.echo(f"{'':12} eval schema {era.SCHEMA}, config schema {era.CONFIG_SCHEMA}; "
                       f"$schema {' or '.join(era.SCHEMA_IDS)}")
            click.echo(f"{'':12} marked by {era.MARKED_BY}")
        return
    try:
        click.echo(orjson.dumps(load_schema(canonical_kind(name)), option=orjson.OPT_INDENT_2).decode())
    except KeyError as exc:
        raise click.UsageError(exc.args[0]) from None

