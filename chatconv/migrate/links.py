"""Symlinks met in a folder a migration run searches: a folder given to migrate bounds what the
run reads and writes, so that a link in it (a cloned repository's, say) cannot steer a rewrite,
or a backup, to a file outside it.

A link found in the folder whose target lies outside it is skipped, in every mode; with
--in-place, a link to a file inside it is skipped too (its target is migrated where the search
finds it: rewriting through the link would only rewrite it twice, or a file the search leaves
out). A folder reached through a link is never searched (sources.discover). A file named
on the command line is the user's choice: a link named is followed (see plan_targets).
"""

from __future__ import annotations

import os

from ..problems import Problem

HINT = "name the file itself to migrate it"


def skipped_link(file: str, folder: str, in_place: bool) -> Problem | None:
    """The warning that skips `file`, found in a search of `folder`, when it is a symlink that
    the run must not follow; None for a file that is no link, or a link it may read."""
    if not os.path.islink(file):
        return None
    target = os.path.realpath(file)
    if not _within(target, os.path.realpath(folder)):
        return _warning(file, f"skipped: a symlink to a file outside {folder} ({target})")
    if in_place:
        return _warning(file, f"skipped: a symlink (to {target}); --in-place rewrites the files "
                              "found in a folder, not links to them")
    return None


def skipped_folder(folder: str, searched: str) -> Problem | None:
    """The warning for a symlinked folder found in a search of `searched` (it is not searched)
    when its target lies outside `searched`; a link to a folder inside it says nothing."""
    target = os.path.realpath(folder)
    if _within(target, os.path.realpath(searched)):
        return None
    return _warning(folder, f"skipped: a symlink to a folder outside {searched} ({target})")


def _within(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def _warning(file: str, message: str) -> Problem:
    return Problem(file, None, None, "$", message, "warning", HINT, "symlink-skipped")
