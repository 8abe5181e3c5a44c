"""MkDocs hooks for the command reference (mkdocs.yml: `hooks`).

Click 8.3 gives an option without a default the value `Sentinel.UNSET` where it gave None, and
mkdocs-click 0.9 prints it in the table's Default column. The cell is emptied here: such an option
has no default. (Not needed once mkdocs-click reads defaults through `to_info_dict`.)
"""

from __future__ import annotations

UNSET_CELL = "<td><code>Sentinel.UNSET</code></td>"


def on_page_content(html: str, **_: object) -> str:
    return html.replace(UNSET_CELL, "<td></td>")
