"""`chatconv schema`: list the schema names, print one JSON Schema (as written, or bundled: one
self-contained file), or write every bundle to a folder."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from ..eras import ERAS
from ..kinds import KIND_ALIASES, canonical_kind
from ..schemas import bundle_text, load_schema, schema_names

_ALIASES = ", ".join(f"{alias} ({kind})" for alias, kind in sorted(KIND_ALIASES.items()))


@click.command(help="List the schema names, or print the JSON Schema called NAME.\n\nNAME may also be a short "
               f"kind, as --kind takes: {_ALIASES}.\n\n"
               "A schema as written refers to others by `$ref` (at https://chatconv.dev/schemas/, which "
               "nothing serves); --bundle prints one self-contained schema instead, for editors, "
               "check-jsonschema or Python's jsonschema offline.\n\n"
               "\b\nExamples:\n"
               "  chatconv schema eval-current --bundle > schemas/eval-current.json\n"
               "  chatconv schema --write-to schemas/        every bundle, for a repository to commit")
@click.argument("name", required=False)
@click.option("--bundle", is_flag=True,
              help="Print NAME's schema self-contained: every schema it refers to under `$defs`, every "
                   "`$ref` pointing there, so that a tool needs no network and no other file.")
@click.option("--write-to", "write_to", metavar="DIR", type=click.Path(),
              help="Write the bundle of every schema (of NAME alone, if given) to DIR/NAME.json (legacy "
                   "ones under DIR/legacy/), creating DIR; each file is replaced whole. Prints the files "
                   "written.")
def schema(name, bundle, write_to):
    try:
        name = canonical_kind(name) if name is not None else None
    except KeyError as exc:
        raise click.UsageError(exc.args[0]) from None
    if write_to == "":  # an unset variable, say: not the current folder
        raise click.UsageError("--write-to names no folder; give the folder to write the schemas to")
    if write_to is not None:
        _write_bundles(Path(write_to), [name] if name else schema_names())
    elif name is None:
        if bundle:
            raise click.UsageError("--bundle prints one schema: name it (chatconv schema NAME --bundle), "
                                   "or write them all with --write-to DIR")
        _list()
    elif bundle:
        click.echo(bundle_text(name), nl=False)
    else:
        click.echo(orjson.dumps(load_schema(name), option=orjson.OPT_INDENT_2).decode())


def _list() -> None:
    for known in schema_names():
        click.echo(f"{known:32} {load_schema(known).get('title', '')}")
    click.echo("\nEval-file eras, oldest first (validate --era ERA forces one):")
    for era in ERAS:
        click.echo(f"{era.NAME:12} {era.TITLE}")
        click.echo(f"{'':12} eval schema {era.SCHEMA}, config schema {era.CONFIG_SCHEMA}; "
                   f"$schema {' or '.join(era.SCHEMA_IDS)}")
        click.echo(f"{'':12} marked by {era.MARKED_BY}")


def _write_bundles(folder: Path, names: list[str]) -> None:
    """Each bundle written atomically (a reader never sees half a file); a folder that cannot be
    made or written is unreadable output: its problem, exit status 2."""
    from ..migrate.atomic import AtomicFile, unwritable

    if folder.exists() and not folder.is_dir():
        raise click.UsageError(f"--write-to {folder} is a file; give a folder to write the schemas to")
    for name in names:
        target = folder / f"{name}.json"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unwritable(target, exc) from None
        with AtomicFile(target) as out:
            out.write(bundle_text(name).encode())
            out.commit()
        click.echo(f"wrote {target}")
