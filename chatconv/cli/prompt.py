"""`chatconv prompt`: the prompt of each case of an eval file, raw or as a provider's request body."""

from __future__ import annotations

import click

from ..eras import era_names
from .releases import agentv_option
from ..problems import ChatconvError, UnreadableInput, printable, shown_name
from ..prompt import DEFAULT_SYSTEM_PROMPT, FORMS, SYSTEM_POLICIES, PromptOptions, UnknownCase, build_prompts
from ..providers import RENDERERS, TARGETS, ProviderRuleError, render_request
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
              help="raw: the prompt as AgentV's builder gives it (question, chatPrompt, systemMessage or "
                   "guidelines); openai/anthropic/gemini: that API's request body, with the messages AgentV's "
                   "providers send; agent: the question for agent providers (files as markers).")
@click.option("--form", type=click.Choice(FORMS), default="agentv", show_default=True,
              help="agentv: as the AgentV release in force builds each prompt (--agentv, else the config's "
                   "required_version, else the newest release of the file's era); seed: chatconv's own form "
                   "(question, guidelines, chat_prompt), which the options below shape.")
@click.option("--system-policy", type=click.Choice(SYSTEM_POLICIES), default=None,
              help="Seed form: system messages after the conversation started: merge into the system message, "
                   "re-tag as assistant or user with a [System]: prefix, or keep in place.  [default: merge]")
@click.option("--default-system-prompt", default=None,
              help=f"Seed form: the system prompt used when a case has guidelines but no system text of its "
                   f"own.  [default: {DEFAULT_SYSTEM_PROMPT}]")
@click.option("--system-prompt", help="Seed form: a system prompt for cases whose input and metadata have none.")
@click.option("--guideline-pattern", "guideline_patterns", multiple=True, metavar="GLOB", callback=_sound_globs,
              help="Files matching this glob are guidelines (repeatable); replaces the eval file's "
                   "and the config's patterns.")
@click.option("--replies", "replies_file", metavar="RECORDING", type=click.Path(dir_okay=False),
              help="The replies to a conversation test's turns (mode: conversation), so that each turn's prompt "
                   "is built as AgentV sends it: a recording in chatconv's shape (one reply a step) or any format "
                   "`chatconv import` reads (one reply an assistant answer), its conversation id the test's. "
                   "Without it the turns stop at the first that needs a reply, with a warning.")
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
def prompt(eval_file, case_ids, target, form, system_policy, default_system_prompt, system_prompt,
           guideline_patterns, replies_file, allow_outside_root, era, agentv, repair):
    """Build the prompt of each case of EVAL_FILE: one JSON object per line, in file order, as
    AgentV builds it (the release in force: --agentv, else the required_version of the file's
    .agentv/config.yaml, else the newest release of the file's era).

    \b
    raw:    {"id", "question", "chatPrompt"?, "systemMessage"?}        (AgentV v4 on)
            {"id", "question", "guidelines", "chatPrompt"?}            (up to v3.8.0)
            chatPrompt only for a prompt of several messages, as AgentV's prompt builder gives it
    agent:  {"id", "request": {"prompt"}}    the question, files named, not read in
    other:  {"id", "request"}   the body the target's API takes (the messages AgentV's providers
            send, with its default system prompt where a prompt has none), without model and
            sampling settings

    A conversation test (mode: conversation) gives one line per turn, "<id>/turn-<n>", each
    prompt holding the replies to the turns before it (--replies).

    --form seed gives chatconv's own form instead: {"id", "question", "guidelines", "chat_prompt"},
    shaped by --system-policy, --default-system-prompt and --system-prompt.
    """
    seed_only = {"--system-policy": system_policy, "--default-system-prompt": default_system_prompt,
                 "--system-prompt": system_prompt}
    given = [name for name, value in seed_only.items() if value is not None]
    if form != "seed" and given:
        raise click.UsageError(f"{given[0]} shapes the seed form only; add --form seed (AgentV's form is as "
                               "AgentV builds it)")
    options = PromptOptions(list(guideline_patterns) or None, system_prompt, None, system_policy or "merge",
                            default_system_prompt or DEFAULT_SYSTEM_PROMPT, allow_outside_root)
    reporter = TextReporter(err=True)
    replies = None
    if replies_file is not None:
        from ..formats.replies import read_replies  # here: the formats load only when a recording is given

        try:
            replies = read_replies(replies_file)
        except ChatconvError as exc:
            fail(exc.problems, EXIT_UNREADABLE)
    try:
        prompts = build_prompts(eval_file, options, case_ids, era, agentv, form, agent=target == "agent",
                                replies=replies)
    except UnreadableInput as exc:
        fail(exc.problems, EXIT_UNREADABLE)
    except UnknownCase as exc:
        for warning in exc.warnings:
            reporter.problem(warning)
        raise click.BadParameter(exc.problems[0].message, param_hint="--case") from None
    for warning in prompts.warnings:
        reporter.problem(warning)
    for case in prompts.cases:
        if form == "agentv":
            _write_agentv(case, target, repair, eval_file, reporter)
            continue
        if target == "raw":
            write_json_line({"id": case.id, "question": case.inputs.question, "guidelines": case.inputs.guidelines,
                             "chat_prompt": case.inputs.chat_prompt})
            continue
        left: list = []
        try:
            body, repairs = render_request(case.as_request(), target, repair, options.default_system_prompt, left)
        except ProviderRuleError as exc:
            rule = exc.problems[0]
            fail([case.source.problem(case.path, f"case {case.id!r}: {rule.message}", rule.hint,
                                      "provider-rule")], EXIT_INVALID)
        for note in repairs:
            click.echo(printable(f"{shown_name(str(eval_file))}: case {case.id!r}: {note}"), err=True)
        _report_left(case, target, left, reporter)
        write_json_line({"id": case.id, "request": body})


def _report_left(case, target: str, left: list, reporter) -> None:
    """What the body leaves out (a text of white space only, for Anthropic), as warnings."""
    for index, code, message in left:
        reporter.problem(case.source.problem(case.path, f"case {case.id!r}: {target}: message {index}: {message}",
                                             None, code, "warning"))


def _write_agentv(case, target: str, repair: bool, eval_file: str, reporter) -> None:
    """One case's prompt as AgentV builds it, raw or as a target's request body."""
    inputs = case.inputs
    if target == "raw":
        write_json_line({"id": case.id, **inputs.as_json()})
        return
    if target == "agent":
        write_json_line({"id": case.id, "request": {"prompt": inputs.question}})
        return
    left: list = []
    try:
        body, repairs = RENDERERS[target](inputs.messages(), repair, left)
    except ProviderRuleError as exc:
        rule = exc.problems[0]
        fail([case.source.problem(case.path, f"case {case.id!r}: {rule.message}", rule.hint, "provider-rule")],
             EXIT_INVALID)
    for note in repairs:
        click.echo(printable(f"{shown_name(str(eval_file))}: case {case.id!r}: {note}"), err=True)
    _report_left(case, target, left, reporter)
    write_json_line({"id": case.id, "request": body})
