"""`chatconv prompt`: the prompt of each case of an eval file, raw or as a provider's request body."""

from __future__ import annotations

from pathlib import Path

import click

from ..problems import UnreadableInput
from ..prompt import DEFAULT_SYSTEM_PROMPT, SYSTEM_POLICIES, EvalFileContext, PromptOptions, build_prompt_inputs
from ..providers import TARGETS, ProviderRuleError, render_request
from ..references import pattern_problem
from ..validate import load_eval_file
from .reporters import EXIT_INVALID, EXIT_UNREADABLE, TextReporter, fail, write_json_line


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
@click.option("--repair", is_flag=True,
              help="Fix what the target API would refuse (e.g. a late system message for Anthropic) "
                   "instead of failing; every repair is reported on stderr.")
def prompt(eval_file, case_ids, target, system_policy, default_system_prompt, system_prompt,
           guideline_patterns, allow_outside_root, repair):
    """Build the prompt of each case of EVAL_FILE: one JSON object per line, in file order.

    \b
    raw:    {"id", "question", "guidelines", "chat_prompt"}   (chat_prompt null for one user turn)
    other:  {"id", "request"}   the body the target's API takes, without model and sampling settings

    Multi-turn cases reach chat APIs as real multi-turn message arrays; the question keeps
    [Role]: markers for logging and agent providers.
    """
    options = PromptOptions(list(guideline_patterns) or None, system_prompt, None, system_policy,
                            default_system_prompt, allow_outside_root)
    try:
        record, warnings = load_eval_file(eval_file, allow_outside_root)
    except UnreadableInput as exc:
        fail(exc.problems, EXIT_UNREADABLE)
    reporter = TextReporter(err=True)
    for warning in warnings:
        reporter.problem(warning)
    cases = list(enumerate(record.data["evalcases"]))
    unknown = [c for c in case_ids if c not in {case["id"] for _, case in cases}]
    if unknown:
        known = ", ".join(case["id"] for _, case in cases)
        raise click.BadParameter(f"no case {unknown[0]!r} in {eval_file}; its cases: {known}", param_hint="--case")
    context = EvalFileContext.for_file(Path(eval_file), record.data, options, record.locate)
    for index, case in cases:
        if case_ids and case["id"] not in case_ids:
            continue
        inputs = build_prompt_inputs(case, context, options, ("evalcases", index))
        if target == "raw":
            write_json_line({"id": case["id"], "question": inputs.question, "guidelines": inputs.guidelines,
                             "chat_prompt": inputs.chat_prompt})
            continue
        request = inputs.as_request(context.case_system_prompt(case, options))
        try:
            body, repairs = render_request(request, target, repair, default_system_prompt)
        except ProviderRuleError as exc:
            where = context.problem(("evalcases", index), f"case {case['id']!r}: {exc.problems[0].message}",
                                    exc.problems[0].hint)
            fail([where], EXIT_INVALID)
        for note in repairs:
            click.echo(f"{eval_file}: case {case['id']!r}: {note}", err=True)
        write_json_line({"id": case["id"], "request": body})
