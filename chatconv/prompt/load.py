"""The prompts of an eval file: the file read and validated, then each case's prompt inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from ..cases import Case, Source
from ..cases.external import CODE_SUFFIXES
from ..eras.releases import (CONVERSATIONS_PLAYED, GUIDELINES_REMOVED, SNIPPETS_REPEATED_BEFORE, Release,
                             newest_release, release_asked)
from ..problems import ChatconvError, Problem, UsageError
from ..sources import configured_release, nearest_config
from ..validate import read_eval_file
from .agentv import AgentVInputs, agentv_prompt_inputs
from .context import EvalFileContext
from .turns import play_turns, usable_replies
from .convert import PromptInputs, PromptOptions, build_prompt_inputs

FORMS = ("agentv", "seed")
# The testcases era (2025-11) is older than any AgentV release chatconv knows: its files' prompts
# are built as the oldest one builds those of the evalcases era they migrate to.
OLDEST = Release((0, 20, 0), "evalcases", "v0.20.0")


@dataclass
class CasePrompt:
    """The prompt inputs of one case of an eval file, and what a provider request adds."""

    id: str
    path: tuple  # the case's JSON path in `source`, for problems
    inputs: PromptInputs | AgentVInputs  # chatconv's seed form, or AgentV's
    system_prompt: str | None  # the case's (or file's) metadata prompt, else the one given
    source: Source | None = None  # the file the case is written in (the eval file or a case file)

    def as_request(self) -> dict:
        return self.inputs.as_request(self.system_prompt)


@dataclass
class EvalFilePrompts:
    """What build_prompts gives: the file's context, its warnings, and its cases' prompts (made
    one at a time as `cases` is iterated: a file reference that fails raises ChatconvError then)."""

    context: EvalFileContext
    warnings: list[Problem]
    cases: Iterator[CasePrompt]
    release: Release  # the AgentV release whose prompts these are (the agentv form)


def build_prompts(eval_file: str | Path, options: PromptOptions | None = None,
                  case_ids: list[str] | tuple[str, ...] = (), era: str | None = None,
                  agentv: str | None = None, form: str = "agentv", agent: bool = False,
                  replies: Mapping[str, list[str]] | None = None) -> EvalFilePrompts:
    """The prompts of an eval file's cases (only `case_ids` when given), in file order, whatever
    its era (`era` forces one; `agentv`, a release such as "4.42.4", forces its era and checks
    the file as it does; without either, the release its config's `required_version` names).

    form: "agentv", each case's prompt as that release of AgentV builds it (AgentVInputs; for
    an agent provider with `agent`), by default its era's newest; "seed", chatconv's own form
    (PromptInputs, shaped by `options`). A conversation test (`mode: conversation`, from v4)
    gives the prompt of each turn, `<id>/turn-<n>`, as AgentV plays it, with the replies to
    earlier turns that `replies` holds under the test's id (the assistant's text, in order);
    where one is missing, the turns stop before the turn that needs it, with a `needs-reply`
    warning. The file is read and validated first: ChatconvError
    lists its errors, UnknownCase names a case id the file does not hold; UsageError a release
    or era not known, or both given and at odds, or a form not known."""
    if form not in FORMS:
        raise UsageError(f"form must be one of {', '.join(FORMS)}, not {form!r}")
    options = options or PromptOptions()
    refuse_code_eval_file(eval_file)
    release = release_asked(agentv, era)
    if release is None and era is None:  # the release its config's required_version puts in force
        release = configured_release(str(eval_file))
    record, warnings, found = read_eval_file(eval_file, options.allow_outside_root,
                                             release.era if release else era, release)
    cases: list[Case] = found.cases
    # The config file's problems come before the cases are looked at: its errors stop the prompts
    # as they would stop `chatconv validate` of it; its warnings are reported with the file's.
    context = EvalFileContext.for_file(Path(eval_file), record.data, options, record.locate)
    warnings = [*context.warnings, *warnings]
    known = list(dict.fromkeys(case.id for case in cases))  # one written case may make several
    unknown = [c for c in case_ids if c not in known]
    if unknown:
        raise UnknownCase(unknown[0], str(eval_file), known, warnings)

    in_force = release or newest_release(found.era.NAME) or OLDEST
    patterns = (options.guideline_patterns if options.guideline_patterns is not None
                else _agentv_patterns(Path(eval_file), in_force))

    def inputs(case: Case) -> PromptInputs | AgentVInputs:
        if form == "seed":
            return build_prompt_inputs(case, context, options)
        return agentv_prompt_inputs(case, context, in_force, patterns, agent, options.allow_outside_root)

    played = form == "agentv" and not in_force.before(CONVERSATIONS_PLAYED)
    chosen = [case for case in cases if not case_ids or case.id in case_ids]
    replies = _by_test(replies, [case for case in chosen if case.turns])
    warnings += [_needs_reply(case, number, replies) for case, number in _left_out_turns(chosen, replies) if played]

    def prompts() -> Iterator[CasePrompt]:
        for case in chosen:
            system_prompt = context.case_system_prompt(case, options)
            if played and case.turns:
                turns, _ = play_turns(case, context, in_force, (replies or {}).get(case.id), options.allow_outside_root)
                for turn in turns:
                    yield CasePrompt(turn.id, case.path, turn.inputs, system_prompt, case.source)
                continue
            yield CasePrompt(case.id, case.path, inputs(case), system_prompt, case.source)

    return EvalFilePrompts(context, warnings, prompts(), in_force)


def _by_test(replies: Mapping[str, list[str]] | None, conversations: list[Case]) -> Mapping[str, list[str]] | None:
    """The replies filed by test id: a recording of one conversation that names no test asked
    (another tool's log, named after its file) answers the one conversation test asked."""
    if replies and len(replies) == 1 and len(conversations) == 1 and conversations[0].id not in replies:
        return {conversations[0].id: next(iter(replies.values()))}  # kept as it is: a LoggedAnswers stays one
    return replies


def _left_out_turns(cases: list[Case], replies: Mapping[str, list[str]] | None) -> Iterator[tuple[Case, int]]:
    """(case, the number of its first turn whose prompt needs a reply not given)."""
    for case in cases:
        if case.turns:
            given = len(usable_replies(case, (replies or {}).get(case.id)) or ())
            if given < len(case.turns) - 1:
                yield case, given + 2


def _needs_reply(case: Case, number: int, replies: Mapping[str, list[str]] | None) -> Problem:
    turns = len(case.turns or ())
    later = f"turn {number}" if number == turns else f"turns {number} to {turns}"
    given = "no reply was given" if not (replies or {}).get(case.id) else f"the replies given stop at turn {number - 2}"
    return case.source.problem(case.path + ("turns", number - 1), f"test {case.id!r}: the prompt of {later} holds the "
                               f"reply to turn {number - 1}, and {given}: built up to turn {number - 1}",
                               "give --replies RECORDING: a recording of the conversation (its id the test's), in "
                               "chatconv's shape or any format `chatconv import` reads", "needs-reply", "warning")


def _agentv_patterns(eval_file: Path, release: Release) -> list[str]:
    """The guideline patterns AgentV `release` reads for an eval file: its `.agentv/config.yaml`'s,
    up to v3.8.0 (0.20.0 reads a config only when it declares `$schema: agentv-config-v2`)."""
    if not release.before(GUIDELINES_REMOVED):
        return []
    config = nearest_config(eval_file)
    if not isinstance(config, dict) or (release.before(SNIPPETS_REPEATED_BEFORE)
                                        and config.get("$schema") != "agentv-config-v2"):
        return []
    patterns = config.get("guideline_patterns")
    return [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else []


def refuse_code_eval_file(eval_file: str | Path) -> None:
    """An eval file written as code (AgentV's SDK eval authoring, `*.eval.ts`) is refused: its
    cases exist only once the code runs, and chatconv runs no code."""
    if Path(str(eval_file)).suffix.lower() in CODE_SUFFIXES:
        raise ChatconvError(Problem(str(eval_file), None, None, "$",
                                    "eval files written as code (TypeScript, JavaScript or Python; AgentV's "
                                    "SDK eval authoring, *.eval.ts) are not supported", "error",
                                    "write the cases as a YAML eval file (*.eval.yaml)", "unsupported"))


class UnknownCase(ChatconvError):
    """A case id asked for that the eval file does not hold; `warnings` are the file's own, found
    while reading it (a caller reports them as it would have with the prompts)."""

    def __init__(self, case_id: str, file: str, known: list[str], warnings: list[Problem] | None = None):
        self.case_id, self.known, self.warnings = case_id, known, warnings or []
        super().__init__(Problem(file, None, None, "$", f"no case {case_id!r} in {file}; its cases: "
                                 f"{', '.join(known)}", "error", "pass one of the ids it holds", "usage"))
