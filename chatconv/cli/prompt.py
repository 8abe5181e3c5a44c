"""`chatconv prompt`: the prompt of each case of an eval file, raw or as a provider's request body."""

from __future__ import annotations

import click

from ..eras import era_names
from .releases import agentv_option
from ..problems import UnreadableInput
from ..prompt import DEFAULT_SYSTEM_PROMPT, SYSTEM_POLICIES, PromptOptions, UnknownCase, build_prompts
from ..providers import TARGETS, ProviderRuleError, render_request
from ..references import pattern_problem
from .reporters import EXIT_INVALID, EXIT_UNREADABLE, TextReporter, fail, write_json_line
from .limits import limit_options


def _sound_globs(ctx, param, patterns):
    for pattern in patterns:
        reason = pattern_problem(pattern)
        if reason:
            raise click.BadParameter(f"bad glob {pattern!r}: {reason}")
    return patterns


@click.command()
@click.argument("eval_file", type=click.Path(dir_okay=False))
@click.option("--case", "case_ids", multiple=True, metavar="ID", help="Only this case (repeatable).")
@click.option("--target", type=click.Choice(TARGETS), default="raw", show_default=True,
              help="raw: question, guidelines and chat_prompt; openai/anthropic/gemini: that API's request "
                   "body; agent: the question for agent providers.")
@click.option("--system-policy", type=click.Choice(SYSTEM_POLICIES), default="merge", show_default=True,
              help="System messages after the conversation started: merge into the system message, "
                   "re-tag as assistant or user with a [System]: prefix, or keep in place.")
@click.option("--default-system-prompt", default=DEFAULT_SYSTEM_PROMPT, show_default=True,
              help="The system prompt used when a case has guidelines but no system text of its own.")
@click.option("--system-prompt", help="A system prompt for cases whose input and metadata have none.")
@click.option("--guideline-pattern", "guideline_patterns", multiple=True, metavar="GLOB", callback=_sound_globs,
              help="Files matching this glob are guidelines (repeatable); replaces the eval file's "
                   "and the config's patterns.")
@click.option("--allow-outside-root", is_flag=True,
              help="Accept file references that resolve outside the repository root.")
@click.option("--era", type=click.Choice(era_names()), default=None,
              help="Read EVAL_FILE as written in this era (default: told from its $schema, else its keys).")
@agentv_option
@limit_options
@click.option("--repair", is_flag=True,
              help="Fix what the target API would refuse (e.g. a late system message for Anthropic, a tool "
                   "call never answered: dropped, with a turn it leaves empty) instead of failing; every "
                   "repair is reported on stderr.")
def prompt(eval_file, case_ids, target, system_policy, default_system_prompt, system_prompt,
           guideline_patterns, allow_outside_root, era, agentv, repair):
    """Build the prompt of each case of EVAL_FILE: one JSON object per line, in file order.

    \b
    raw:    {"id", "question", "guidelines", "chat_prompt"}   (chat_prompt null for one user turn)
    other:  {"id", "request"}   the body the target's API takes, without model and sampling settings

    Multi-turn cases reach chat APIs as real multi-turn message arrays; the question keeps
    [Role]: markers for logging and agent providers.
    """
    options = PromptOptions(list(guideline_patterns) or None, system_prompt, None, system_policy,
                            default_system_prompt, allow_outside_root)
    reporter = TextReporter(err=True)
    try:
        prompts = build_prompts(eval_file, options, case_ids, era, agentv)
    except UnreadableInput as exc:
        fail(exc.problems, EXIT_UNREADABLE)
    except UnknownCase as exc:
        for warning in exc.warnings:
            reporter.problem(warning)
        raise click.BadParameter(exc.problems[0].message, param_hint="--case") from None
    for warning in prompts.warnings:
        reporter.problem(warning)
    for case in prompts.cases:
        if target == "raw":
            write_json_line({"id": case.id, "question": case.inputs.question, "guidelines": case.inputs.guidelines,
                             "chat_prompt": case.inputs.chat_prompt})
            continue
        try:
            body, repairs = render_request(case.as_request(), target, repair, default_system_prompt)
        except ProviderRuleError as exc:
            rule = exc.problems[0]
            fail([case.source.problem(case.path, f"case {case.id!r}: {rule.message}", rule.hint,
                                      "provider-rule")], EXIT_INVALID)
        for note in repairs:
            click.echo(f"{eval_file}: case {case.id!r}: {note}", err=True)
        write_json_line({"id": case.id, "request": body})
