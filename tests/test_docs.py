"""The documentation site (docs/, mkdocs.yml) builds with --strict, its generated references are
whole, and the examples of the format pages are what chatconv writes today."""

from __future__ import annotations

import html
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import chatconv
from chatconv.cli import cli
from chatconv.formats import FORMATS

from conftest import REPO

DOCS = REPO / "docs"
# An example on a format page: the marker naming the file, then three fenced blocks: the file's
# records (a JSONL file's records shown indented, one per line in the file), the command, and
# what it writes (one JSON value per line written).
EXAMPLE = re.compile(r"<!-- example: (?P<name>\S+) -->.*?```json\n(?P<records>.*?)\n```\s*```sh\n"
                     r"chatconv (?P<command>[^\n]*)\n```\s*```json\n(?P<written>.*?)\n```", re.S)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # python -m puts the repository root first on sys.path: mkdocs-click imports this checkout's
    # command, as mkdocstrings reads this checkout's sources (mkdocs.yml: paths: [.]).
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def page_text(site: Path, page: str) -> str:
    """A built page's text, without its markup."""
    return html.unescape(re.sub(r"<[^>]+>", " ", (site / page / "index.html").read_text()))


def page_ids(site: Path, folder: str) -> set[str]:
    return {i for page in (site / folder).rglob("*.html") for i in re.findall(r'id="([^"]+)"', page.read_text())}


def all_commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    return {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}


def test_command_reference_lists_every_command_and_option(site):
    text = page_text(site, "commands")
    assert "--max-warnings" in text
    assert "Sentinel.UNSET" not in text  # docs/hooks.py empties click 8.3's "no default" marker
    for name, command in all_commands().items():
        assert re.search(rf'<h[23] id="{name}"', (site / "commands" / "index.html").read_text()), name
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for opt in param.opts + param.secondary_opts:
                    assert opt in text, f"{name} {opt}"


def test_command_reference_keeps_the_help_texts_indented_lines(site):
    # Examples and output formats are indented lines in a `\b` paragraph: as --help shows them,
    # one per line (docs/hooks.py sets them as code), not run together into prose.
    built = (site / "commands" / "index.html").read_text()
    code = "\n".join(html.unescape(block) for block in re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", built, re.S))
    commands = {"chatconv": cli, **all_commands()}
    indented = [line.strip() for command in commands.values()
                for line in inspect.cleandoc(command.help or "").splitlines() if line.startswith("  ")]
    assert indented  # the root command's examples, at least
    code_lines = {line.strip() for line in code.splitlines()}
    assert [line for line in indented if line not in code_lines] == []


def test_api_reference_documents_every_public_name(site):
    ids = page_ids(site, "api")
    missing = [name for name in chatconv.__all__ if f"{chatconv._MODULE_OF[name]}.{name}" not in ids]
    assert not missing, f"public names without an entry in docs/api/: {missing}"
    text = page_text(site, "api/validate")
    assert "validate_path" in text and "Summary" in text


def test_every_public_function_and_class_has_a_docstring():
    # The API pages show the docstring of each public name: one without would be an empty entry
    # (a dataclass without one gets its signature as its __doc__).
    undocumented = []
    for name in chatconv.__all__:
        value = getattr(chatconv, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            doc = value.__doc__ or ""
            if not doc.strip() or doc.startswith(f"{name}("):
                undocumented.append(name)
    assert not undocumented


def test_a_page_per_format(site):
    nav = page_text(site, "formats")
    for name in (fmt.NAME for fmt in FORMATS):  # ai-sdk, chatconv's own, and every format import reads
        assert (site / "formats" / name / "index.html").is_file(), name
        assert name in nav
    for page in (DOCS / "formats").glob("*.md"):
        assert EXAMPLE.search(page.read_text()), f"{page.name} has no example"


def json_values(text: str) -> list:
    """The JSON values written one after another in `text` (indented, as the pages show them)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while (at := len(text) - len(text[at:].lstrip())) < len(text):
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def format_examples() -> list[tuple[str, re.Match]]:
    return [(f"{page.stem}:{m['name']}", m) for page in sorted((DOCS / "formats").glob("*.md"))
            for m in EXAMPLE.finditer(page.read_text())]


@pytest.mark.parametrize("example", [m for _, m in format_examples()], ids=[i for i, _ in format_examples()])
def test_format_page_example_is_what_chatconv_writes(example, tmp_path, monkeypatch):
    name = example["name"]
    records = example["records"]
    if name.endswith(".jsonl"):
        records = "".join(json.dumps(value, ensure_ascii=False) + "\n" for value in json_values(records))
    (tmp_path / name).write_text(records)
    monkeypatch.chdir(tmp_path)  # conversation ids name the file as the page does
    result = CliRunner().invoke(cli, example["command"].split())
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert written == json_values(example["written"])
