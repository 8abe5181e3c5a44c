"""MkDocs hooks for the command reference (mkdocs.yml: `hooks`): mkdocs-click writes the commands'
--help texts as Markdown, which they are not quite.

- Click keeps a paragraph after a `\\b` line as written (examples, output formats, each line
  indented); Markdown would run its lines together into one paragraph. mkdocs-click drops the
  `\\b` markers, so the indented lines of a help text are set as a code block here, as `--help`
  shows them.
- Click 8.3 gives an option without a default the value `Sentinel.UNSET` where it gave None, and
  mkdocs-click 0.9 prints it in the table's Default column: the cell is emptied (such an option
  has no default).
"""

from __future__ import annotations

import textwrap

from markdown import Extension
from markdown.preprocessors import Preprocessor

UNSET_CELL = "<td><code>Sentinel.UNSET</code></td>"
USAGE = "**Usage:**"  # a line of mkdocs-click's output: only pages holding it are touched


class KeepIndentedHelp(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        if USAGE not in lines:
            return lines
        out: list[str] = []
        block: list[str] = []
        fenced = False
        for line in lines:
            if line.startswith("```"):
                fenced = not fenced
            if not fenced and line.startswith("  ") and line.strip():
                block.append(line)
                continue
            out.extend(as_code(block))
            block = []
            out.append(line)
        out.extend(as_code(block))
        return out


def as_code(block: list[str]) -> list[str]:
    if not block:
        return []
    return ["", "```text", *textwrap.dedent("\n".join(block)).splitlines(), "```", ""]


class KeepIndentedHelpExtension(Extension):
    def extendMarkdown(self, md) -> None:
        # Right after mkdocs-click (141) has written the commands, before fenced code (25) is read.
        md.preprocessors.register(KeepIndentedHelp(md), "chatconv_indented_help", 140)


def on_config(config, **_: object):
    config.markdown_extensions.append(KeepIndentedHelpExtension())
    return config


def on_page_content(html: str, **_: object) -> str:
    return html.replace(UNSET_CELL, "<td></td>")
