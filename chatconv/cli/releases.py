"""`--agentv VERSION`, the one option validate, prompt and migrate take to name the AgentV
release whose verdicts they give (eras/releases.py)."""

from __future__ import annotations

import click

from ..eras.releases import CHECKED, parse_release, releases_help


def _checked_release(ctx, param, value: str | None) -> str | None:
    if value is not None:
        try:
            parse_release(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


_CHECKED = ", ".join("v" + ".".join(map(str, version)) for version in CHECKED)
agentv_option = click.option(
    "--agentv", metavar="VERSION", callback=_checked_release,
    help="Give the verdicts of this AgentV release (e.g. 4.42.4, v3.8.0): eval files are read in its era "
         f"({releases_help()}) and checked as it checks them (its file detection, the keys it takes, what its "
         f"loader skips). [default: the release the required_version of the file's .agentv/config.yaml names (a semver "
         f"range: the newest release it allows, when those lie in one era), else each file's era's newest release; "
         f"checked against AgentV's own code: {_CHECKED}]")
migrate_agentv_option = click.option(
    "--agentv", metavar="VERSION", callback=_checked_release,
    help=f"Move eval files forward to the era this AgentV release reads ({releases_help()}): the same as "
         "--to that era. [default: the era of the release the required_version of the file's .agentv/config.yaml "
         "names, else the newest]")
