"""Conversation tests (`mode: conversation`) played as AgentV plays them: each turn's prompt is
the history so far (the test's input, each earlier turn's input and reply) and the turn's
input; the replies come from a recording (`--replies`), and without one the turns stop where a
reply is needed, with a warning. The rules are AgentV's runner's (58f316ca2, v4.42.4): the
history's contents as text, a turn's message list as compact JSON, a reply as the text of the
answer's last assistant message, `window_size` n as every system message and the last 2n others."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_chatconv
from chatconv.prompt import AGENTV_SYSTEM_PROMPT, build_prompts

SUITE = """\
prompts:
  - "{{ input }}"
tests:
  - id: math
    mode: conversation
    assert: [Keeps the numbers in mind]
    aggregation: min
    on_turn_failure: stop
    turns:
      - input: What is 15% of {{ n }}?
        assert: [Says 30]
      - input: Now double it.
      - input: [{role: user, content: "Which numbers?"}]
        expected_output: "{{ n }} and 15%"
    vars:
      n: 200
      input:
        - {role: system, content: You are a tutor.}
  - id: plain
    vars: {input: Hi}
    assert: [Greets]
"""


@pytest.fixture
def suite(repo):
    (repo / "evals").mkdir()
    path = repo / "evals" / "suite.yaml"
    path.write_text(SUITE)
    return path


def _turn(number: int, question: str, chat: list[dict]) -> dict:
    return {"id": f"math/turn-{number}", "question": question, "chatPrompt": chat}


SYSTEM = {"role": "system", "content": "You are a tutor."}


def test_without_replies_the_turns_stop_at_the_first_that_needs_one(suite):
    prompts = build_prompts(suite)
    built = [{"id": case.id, **case.inputs.as_json()} for case in prompts.cases]
    assert built == [_turn(1, "What is 15% of 200?", [SYSTEM, {"role": "user", "content": "What is 15% of 200?"}]),
                     {"id": "plain", "question": "Hi"}]
    [warning] = prompts.warnings
    assert warning.code == "needs-reply" and warning.severity == "warning" and warning.path == "$.tests[0].turns[1]"
    assert "the prompt of turns 2 to 3 holds the reply to turn 1, and no reply was given" in warning.message


def test_with_replies_each_turn_holds_the_history_so_far(suite):
    replies = {"math": ["It is 30.", "60."]}
    built = [(case.id, case.inputs.as_json()) for case in build_prompts(suite, replies=replies).cases]
    history = [SYSTEM, {"role": "user", "content": "What is 15% of 200?"}, {"role": "assistant", "content": "It is 30."},
               {"role": "user", "content": "Now double it."}, {"role": "assistant", "content": "60."},
               {"role": "user", "content": '[{"role":"user","content":"Which numbers?"}]'}]  # a list: compact JSON
    assert [id for id, _ in built] == ["math/turn-1", "math/turn-2", "math/turn-3", "plain"]
    assert [inputs["chatPrompt"] for _, inputs in built[:3]] == [history[:2], history[:4], history]
    assert built[2][1]["question"] == history[-1]["content"]


def test_a_window_keeps_the_system_messages_and_the_last_exchanges(suite):
    suite.write_text(SUITE.replace("    on_turn_failure: stop\n", "    on_turn_failure: stop\n    window_size: 1\n"))
    [*_, third, _] = build_prompts(suite, replies={"math": ["It is 30.", "60."]}).cases
    assert third.inputs.chat_prompt == [SYSTEM, {"role": "assistant", "content": "60."},
                                        {"role": "user", "content": '[{"role":"user","content":"Which numbers?"}]'}]


@settings(max_examples=30, deadline=None)
@given(replies=st.lists(st.text(max_size=20), max_size=4), size=st.one_of(st.none(), st.integers(1, 3)))
def test_every_turn_sends_its_own_input_last_after_what_came_before(tmp_path_factory, replies, size):
    """As many turns as the replies reach (and no more); each prompt ends with its input as the
    user's, the system message first, and holds at most 2n messages besides with a window n."""
    repo = tmp_path_factory.mktemp("repo")
    (repo / ".git").mkdir()
    path = repo / "suite.yaml"
    window = f"    window_size: {size}\n" if size else ""
    path.write_text(SUITE.replace("    aggregation: min\n", "    aggregation: min\n" + window))
    turns = [case for case in build_prompts(path, replies={"math": replies}).cases if case.id.startswith("math/")]
    assert len(turns) == min(3, len(replies) + 1)
    for number, case in enumerate(turns, 1):
        chat = case.inputs.chat_prompt
        assert chat[0] == SYSTEM and chat[-1] == {"role": "user", "content": case.inputs.question}
        if size:
            assert len(chat) <= 1 + 2 * size
        if number > 1:
            assert chat[-2] == {"role": "assistant", "content": replies[number - 2]} or size == 0


def test_the_cli_reads_replies_from_a_recording_in_chatconvs_shape_or_another_tools(suite, tmp_path):
    steps = tmp_path / "run.jsonl"
    steps.write_text("".join(json.dumps(step) + "\n" for step in [
        {"conversationId": "math", "stepIndex": 0, "input": {"role": "user", "content": "q"},
         "output": [{"role": "assistant", "content": "It is 30."}]},
        {"conversationId": "math", "stepIndex": 1, "input": {"role": "user", "content": "q"},
         "output": [{"role": "assistant", "content": [{"type": "text", "text": "Double:"}, {"type": "text", "text": "60."}]}]}]))
    chat = tmp_path / "chat.json"  # an OpenAI chat request logged with the whole conversation (no id)
    chat.write_text(json.dumps({"model": "m", "messages": [
        {"role": "system", "content": "You are a tutor."}, {"role": "user", "content": "What is 15% of 200?"},
        {"role": "assistant", "content": "It is 30."}, {"role": "user", "content": "Now double it."},
        {"role": "assistant", "content": "Double:\n60."}]}))
    for recording in (steps, chat):  # the log of one conversation answers the one conversation test asked
        result = run_chatconv("prompt", suite, "--case", "math", "--replies", recording)
        assert result.returncode == 0, result.stderr_text
        lines = [json.loads(line) for line in result.stdout_text.splitlines()]
        assert [line["id"] for line in lines] == ["math/turn-1", "math/turn-2", "math/turn-3"], recording
        assert lines[2]["chatPrompt"][2:5] == [{"role": "assistant", "content": "It is 30."},
                                               {"role": "user", "content": "Now double it."},
                                               {"role": "assistant", "content": "Double:\n60."}]
        assert result.stderr_text == ""
    missing = run_chatconv("prompt", suite, "--replies", tmp_path / "none.jsonl")
    assert missing.returncode == 2 and "none.jsonl" in missing.stderr_text and "Traceback" not in missing.stderr_text


def test_a_turns_request_body_has_agentvs_default_system_text_where_the_history_has_none(repo):
    path = repo / "suite.yaml"
    path.write_text("prompts: ['{{ input }}']\ntests:\n  - id: t\n    mode: conversation\n    turns:\n"
                    "      - input: Hi\n    vars: {input: Hello}\n")
    [line] = run_chatconv("prompt", path, "--target", "openai").stdout_text.splitlines()
    assert json.loads(line) == {"id": "t/turn-1", "request": {"messages": [
        {"role": "system", "content": AGENTV_SYSTEM_PROMPT}, {"role": "user", "content": "Hello"},
        {"role": "user", "content": "Hi"}]}}


def test_the_base_inputs_files_are_in_the_history_as_agentv_carries_them(repo):
    (repo / "code.py").write_text("x = 1\n")
    path = repo / "suite.yaml"
    path.write_text("prompts: ['{{ input }}']\ntests:\n  - id: t\n    mode: conversation\n    turns:\n"
                    "      - input: Explain\n    vars:\n      input:\n        - role: user\n          content:\n"
                    "            - {type: text, value: Read}\n            - {type: file, value: code.py}\n")
    [turn] = build_prompts(path).cases
    carried = json.loads(turn.inputs.chat_prompt[0]["content"])
    assert carried == [{"type": "text", "value": "Read"}, {"type": "file", "value": "code.py", "path": "code.py",
                                                           "text": "x = 1\n", "resolvedPath": str(repo / "code.py")}]


@pytest.mark.parametrize("setting, value, runs_with", [
    ("aggregation", "median", "mean"), ("on_turn_failure", "halt", "continue"),
    ("window_size", 0, "every earlier turn in view")])
def test_a_setting_agentv_drops_without_a_word_is_a_warning(repo, setting, value, runs_with):
    path = repo / "suite.yaml"
    plain = SUITE.replace("    aggregation: min\n", "").replace("    on_turn_failure: stop\n", "")
    path.write_text(plain.replace("    mode: conversation\n", f"    mode: conversation\n    {setting}: {value}\n"))
    result = run_chatconv("validate", path)
    assert result.returncode == 0, result.stdout_text
    assert f"$.tests[0].{setting}:" in result.stdout_text and f"runs the test with {runs_with}" in result.stdout_text
    assert "dropped-by-agentv (warning)" in result.stdout_text


def test_a_turns_graders_are_checked_and_said_as_agentv_meets_them(repo):
    path = repo / "suite.yaml"
    path.write_text(SUITE.replace("        assert: [Says 30]\n", "        assert:\n          - type: contains\n"))
    result = run_chatconv("validate", path)
    assert result.returncode == 0
    assert ("$.tests[0].turns[0].assert[0]: AgentV skips this contains: it has no `value`" in result.stdout_text
            and "does not check a turn's graders" in result.stdout_text)


def test_a_logs_answers_to_the_tests_own_input_are_not_taken_for_turn_replies(repo, tmp_path):
    path = repo / "suite.yaml"
    path.write_text("prompts: ['{{ input }}']\ntests:\n  - id: t\n    mode: conversation\n    turns:\n"
                    "      - input: one\n      - input: two\n    vars:\n      input:\n"
                    "        - {role: user, content: hi}\n        - {role: assistant, content: hello}\n")
    log = tmp_path / "log.json"  # the whole conversation, the test's input first
    log.write_text(json.dumps({"model": "m", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "one"}, {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "two"}, {"role": "assistant", "content": "A2"}]}))
    result = run_chatconv("prompt", path, "--replies", log)
    *_, second = [json.loads(line) for line in result.stdout_text.splitlines()]
    assert second["id"] == "t/turn-2" and second["chatPrompt"][-2:] == [
        {"role": "assistant", "content": "A1"}, {"role": "user", "content": "two"}]
