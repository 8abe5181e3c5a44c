"""Every scenario of seed 001 (SPEC §2 and §3), with the exact strings SPEC §2 gives."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from chatconv.problems import ChatconvError
from chatconv.prompt import (EvalFileContext, PromptOptions, Segment, build_prompt_inputs,
                             convert_to_chat_prompt)
from chatconv.providers import build_chat_prompt, render_request
from chatconv.validate import load_eval_file

DEFAULT = "You are a careful assistant."


def prompt_inputs(repo: Path, messages_yaml: str, options: PromptOptions | None = None, extra: str = ""):
    """Build the prompt inputs of a one-case eval file holding these input_messages."""
    path = repo / "eval.yaml"
    messages = textwrap.indent(textwrap.dedent(messages_yaml).strip(), "      ")
    path.write_text(f"{extra}evalcases:\n  - id: c\n    outcome: o\n    input_messages:\n{messages}\n")
    options = options or PromptOptions()
    record, _ = load_eval_file(path)
    context = EvalFileContext.for_file(path, record.data, options, record.locate)
    case = record.data["evalcases"][0]
    return build_prompt_inputs(case, context, options, ("evalcases", 0)), context, case


def chat_prompt_of(repo, messages_yaml, **kwargs):
    """convert_to_chat_prompt on the case's resolved segments: always a ChatPrompt."""
    from chatconv.prompt.convert import resolve_segments

    options = PromptOptions(**kwargs)
    inputs, context, case = prompt_inputs(repo, messages_yaml, options)
    segments = [resolve_segments(m["content"], context, (), options) for m in case["input_messages"]]
    return convert_to_chat_prompt(case["input_messages"], segments, None, None, options.guideline_content,
                                  system_policy=options.system_policy)


GUIDE = ["**/*.instructions.md"]


def test_single_system_and_user_message(repo):
    inputs, _, _ = prompt_inputs(repo, """
        - role: system
          content: You are a helpful assistant.
        - role: user
          content: Hello, world!
    """)
    assert inputs.chat_prompt == [{"role": "system", "content": "You are a helpful assistant."},
                                  {"role": "user", "content": "Hello, world!"}]
    assert inputs.question == "[System]: You are a helpful assistant.\n[User]: Hello, world!"


def test_multi_turn_conversation_with_assistant_response(repo):
    inputs, _, _ = prompt_inputs(repo, """
        - {role: user, content: Debug this code}
        - {role: assistant, content: I can help with that}
        - {role: user, content: "Thanks, here's the code"}
    """)
    assert inputs.chat_prompt == [{"role": "user", "content": "Debug this code"},
                                  {"role": "assistant", "content": "I can help with that"},
                                  {"role": "user", "content": "Thanks, here's the code"}]


def test_system_message_with_guidelines(repo):
    (repo / "guidelines.instructions.md").write_text("Always be concise")
    messages = """
        - role: user
          content:
            - {type: text, value: Review this code}
            - {type: file, value: ./guidelines.instructions.md}
    """
    expected = [{"role": "system", "content": f"{DEFAULT}\n\n[[ ## Guidelines ## ]]\n\nAlways be concise"},
                {"role": "user", "content": "Review this code\n<Attached: ./guidelines.instructions.md>"}]
    assert chat_prompt_of(repo, messages, guideline_patterns=GUIDE) == expected
    # Through build_prompt_inputs a single user turn has no chat_prompt; the provider's fallback
    # sends the same messages.
    inputs, _, _ = prompt_inputs(repo, messages, PromptOptions(guideline_patterns=GUIDE))
    assert inputs.chat_prompt is None and inputs.guidelines == "Always be concise"
    assert build_chat_prompt(inputs.as_request()) == expected


def test_embedded_non_guideline_file(repo):
    (repo / "code.js").write_bytes(b"\xef\xbb\xbfconsole.log('test')\r\n\r\n")  # BOM, CRLF, trailing space
    assert chat_prompt_of(repo, """
        - role: user
          content:
            - {type: text, value: "Review this:"}
            - {type: file, value: ./code.js}
    """) == [{"role": "user", "content": "Review this:\n=== ./code.js ===\nconsole.log('test')"}]


def test_extract_guideline_from_user_message(repo):
    """Documented exception: the system message begins with the default system prompt."""
    (repo / "python.instructions.md").write_text("Use type hints.\n")
    assert chat_prompt_of(repo, """
        - role: user
          content:
            - {type: file, value: python.instructions.md}
            - {type: text, value: Write a function}
    """, guideline_patterns=GUIDE) == [
        {"role": "system", "content": f"{DEFAULT}\n\n[[ ## Guidelines ## ]]\n\nUse type hints."},
        {"role": "user", "content": "<Attached: python.instructions.md>\nWrite a function"}]


def test_multiple_guideline_files(repo):
    """Documented exceptions: the default system prompt comes first, and the user message that
    held only guideline files is dropped."""
    (repo / "python.instructions.md").write_text("content1")
    (repo / "security.instructions.md").write_text("content2")
    assert chat_prompt_of(repo, """
        - role: user
          content:
            - {type: file, value: python.instructions.md}
            - {type: file, value: security.instructions.md}
    """, guideline_patterns=GUIDE) == [{"role": "system", "content": (
        f"{DEFAULT}\n\n[[ ## Guidelines ## ]]\n\n=== python.instructions.md ===\ncontent1\n\n"
        "=== security.instructions.md ===\ncontent2")}]


def test_message_with_only_guideline_files_is_dropped(repo):
    (repo / "guidelines.instructions.md").write_text("Be kind")
    inputs, _, _ = prompt_inputs(repo, """
        - {role: system, content: System context}
        - role: user
          content:
            - {type: file, value: guidelines.instructions.md}
    """, PromptOptions(guideline_patterns=GUIDE))
    assert inputs.chat_prompt == [{"role": "system", "content": "System context\n\n[[ ## Guidelines ## ]]\n\nBe kind"}]
    assert inputs.question == "[System]: System context"


def test_explicit_system_message_wins_over_metadata(repo):
    options = PromptOptions(guideline_content="Be concise")
    path_extra = "metadata:\n  systemPrompt: Default prompt\n"
    inputs, _, _ = prompt_inputs(repo, """
        - {role: system, content: Custom system context}
        - {role: user, content: Hello}
    """, options, extra=path_extra)
    assert inputs.chat_prompt == [
        {"role": "system", "content": "Custom system context\n\n[[ ## Guidelines ## ]]\n\nBe concise"},
        {"role": "user", "content": "Hello"}]


def test_metadata_system_prompt_is_the_base_without_system_messages(repo):
    inputs, _, _ = prompt_inputs(repo, """
        - {role: user, content: Hello}
        - {role: assistant, content: Hi}
    """, extra="metadata:\n  systemPrompt: Default prompt\n")
    assert inputs.chat_prompt[0] == {"role": "system", "content": "Default prompt"}


def test_orchestrator_populates_chat_prompt_and_question(repo):
    inputs, _, _ = prompt_inputs(repo, """
        - {role: user, content: Hello}
        - {role: assistant, content: Hi there}
    """)
    assert inputs.as_request() == {
        "question": "[User]: Hello\n[Assistant]: Hi there", "guidelines": "",
        "chatPrompt": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there"}]}


@pytest.mark.parametrize("policy, expected", [
    ("merge", [("system", "First\n\nLater"), ("user", "Hello"), ("assistant", "Hi"), ("user", "Help")]),
    ("assistant", [("system", "First"), ("user", "Hello"), ("assistant", "Hi"), ("assistant", "[System]: Later"),
                   ("user", "Help")]),
    ("user", [("system", "First"), ("user", "Hello"), ("assistant", "Hi"), ("user", "[System]: Later"),
              ("user", "Help")]),
    ("keep", [("system", "First"), ("user", "Hello"), ("assistant", "Hi"), ("system", "Later"), ("user", "Help")]),
])
def test_later_system_message_policies(repo, policy, expected):
    inputs, _, _ = prompt_inputs(repo, """
        - {role: system, content: First}
        - {role: user, content: Hello}
        - {role: assistant, content: Hi}
        - {role: system, content: Later}
        - {role: user, content: Help}
    """, PromptOptions(system_policy=policy))
    assert [(m["role"], m["content"]) for m in inputs.chat_prompt] == expected
    # The question keeps system messages where they were, whatever the policy.
    assert inputs.question == "[System]: First\n[User]: Hello\n[Assistant]: Hi\n[System]: Later\n[User]: Help"


def test_system_message_from_a_file_and_guideline_in_a_system_message(repo):
    (repo / "system.md").write_text("You review code.")
    (repo / "style.instructions.md").write_text("Short answers.")
    inputs, _, _ = prompt_inputs(repo, """
        - role: system
          content:
            - {type: file, value: system.md}
            - {type: file, value: style.instructions.md}
        - {role: user, content: Hi}
        - {role: assistant, content: Hello}
    """, PromptOptions(guideline_patterns=GUIDE))
    assert inputs.chat_prompt[0] == {"role": "system",
                                     "content": "You review code.\n\n[[ ## Guidelines ## ]]\n\nShort answers."}


def test_guideline_file_counts_once_under_two_spellings(repo):
    (repo / "g.instructions.md").write_text("Once.")
    inputs, _, _ = prompt_inputs(repo, """
        - role: user
          content:
            - {type: file, value: g.instructions.md}
            - {type: text, value: a}
        - {role: assistant, content: b}
        - role: user
          content:
            - {type: file, value: ./g.instructions.md}
            - {type: text, value: c}
    """, PromptOptions(guideline_patterns=GUIDE))
    assert inputs.guidelines == "Once."
    assert inputs.chat_prompt[0]["content"].count("Once.") == 1


def test_system_guideline_and_one_user_message_is_a_single_user_turn(repo):
    (repo / "g.instructions.md").write_text("Rules.")
    inputs, _, _ = prompt_inputs(repo, """
        - role: system
          content: [{type: file, value: g.instructions.md}]
        - {role: user, content: Hello}
    """, PromptOptions(guideline_patterns=GUIDE))
    assert inputs.chat_prompt is None and inputs.question == "Hello" and inputs.guidelines == "Rules."


def test_patterns_come_from_the_eval_file_then_the_config(repo):
    (repo / "evals").mkdir()
    (repo / "evals" / "a.rules.md").write_text("From config.")
    (repo / ".agentv").mkdir()
    # Keys a later AgentV added (top level and nested) do not stop prompts: the patterns still apply.
    (repo / ".agentv" / "config.yaml").write_text("guideline_patterns: ['**/*.rules.md']\nnew_key: 1\n"
                                                  "execution: {new_nested: 2}\n")
    path = repo / "evals" / "e.yaml"
    path.write_text("evalcases:\n  - id: c\n    outcome: o\n    input_messages:\n"
                    "      - role: user\n        content: [{type: file, value: a.rules.md}, {type: text, value: go}]\n")
    record, _ = load_eval_file(path)
    context = EvalFileContext.for_file(path, record.data, PromptOptions(), record.locate)
    assert context.patterns == ["**/*.rules.md"]
    inputs = build_prompt_inputs(record.data["evalcases"][0], context)
    assert inputs.guidelines == "From config."
    # the CLI's patterns replace the config's; none match here
    cli = EvalFileContext.for_file(path, record.data, PromptOptions(guideline_patterns=["docs/*.md"]), record.locate)
    assert build_prompt_inputs(record.data["evalcases"][0], cli).guidelines == ""


def test_broken_config_is_an_error_naming_it(repo):
    (repo / "chatconv.yaml").write_text("guideline_patterns: '*.md'\n")
    with pytest.raises(ChatconvError, match="chatconv.yaml:1:1: error: \\$.guideline_patterns: expected array"):
        prompt_inputs(repo, "- {role: user, content: hi}")


@pytest.mark.parametrize("pattern, reason", [("", "non-empty"), ("/abs/*.md", "leading '/'"), ("a/[b.md", "unclosed")])
def test_bad_glob_is_refused(repo, pattern, reason):
    with pytest.raises(ChatconvError, match=reason):
        prompt_inputs(repo, "- {role: user, content: hi}", PromptOptions(guideline_patterns=[pattern]))


def test_convert_takes_seed_000_inputs_directly():
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    segments = [[Segment("text", "x"), Segment("file", "docs/a.instructions.md", "Rule.")], [Segment("text", "y")]]
    result = convert_to_chat_prompt(messages, segments, GUIDE, "Base.", "Extra rule.")
    assert result == [{"role": "system", "content": "Base.\n\n[[ ## Guidelines ## ]]\n\nRule.\n\nExtra rule."},
                      {"role": "user", "content": "x\n<Attached: docs/a.instructions.md>"},
                      {"role": "assistant", "content": "y"}]


# --- Provider requirements of seed 001 (SPEC §3) ---------------------------------------------

CHAT = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}, {"role": "user", "content": "Help me"}]


def test_chat_prompt_is_used_and_question_ignored():
    request = {"question": "[User]: Hello\n[Assistant]: Hi\n[User]: Help me", "chatPrompt": CHAT, "guidelines": []}
    assert build_chat_prompt(request)[1:] == CHAT


def test_legacy_request_without_chat_prompt():
    request = {"question": "What is the capital of France?", "guidelines": [], "systemPrompt": "Be brief."}
    assert build_chat_prompt(request) == [{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "What is the capital of France?"}]


def test_system_message_in_chat_prompt_is_sent_as_it_is():
    chat = [{"role": "system", "content": "You are a code reviewer.\n\n[[ ## Guidelines ## ]]\nBe concise."},
            {"role": "user", "content": "Review this code"}]
    assert build_chat_prompt({"question": "q", "chatPrompt": chat, "guidelines": []}) == chat


def test_no_system_message_in_chat_prompt_gets_the_default():
    assert build_chat_prompt({"question": "q", "chatPrompt": CHAT}) == [{"role": "system", "content": DEFAULT}, *CHAT]


def test_guidelines_ignored_when_chat_prompt_is_given():
    chat = [{"role": "system", "content": "System with guidelines already merged"}, {"role": "user", "content": "Hello"}]
    request = {"question": "q", "chatPrompt": chat, "guidelines": ["Old guideline 1", "Old guideline 2"]}
    assert build_chat_prompt(request)[0]["content"] == "System with guidelines already merged"
    body, _ = render_request(request, "openai")
    assert "Old guideline" not in str(body)


def test_azure_openai_body_uses_the_chat_prompt():
    body, _ = render_request({"question": "q", "chatPrompt": CHAT[:2]}, "openai")
    assert body == {"messages": [{"role": "system", "content": DEFAULT}, *CHAT[:2]]}


def test_agent_provider_keeps_the_question():
    request = {"question": "[User]: Hello\n[Assistant]: Hi\n[User]: Help", "chatPrompt": CHAT}
    assert render_request(request, "agent") == ({"prompt": "[User]: Hello\n[Assistant]: Hi\n[User]: Help"}, [])


def test_a_missing_file_in_an_expected_message_is_a_validate_error_prompt_does_not_read(repo):
    from chatconv.cases import read_cases
    from chatconv.sources import iter_records
    from chatconv.validate import check_eval_document

    path = repo / "eval.yaml"
    path.write_text("evalcases:\n  - id: c\n    outcome: o\n    input_messages: [{role: user, content: hi}]\n"
                    "    expected_messages:\n      - role: assistant\n        content:\n"
                    "          - {type: file, value: missing.md}\n")
    [record] = iter_records(path)
    found = [(p.path, p.line, p.code) for p in check_eval_document(record, "eval-file") if p.is_error]
    assert found == [("$.evalcases[0].expected_messages[0].content[0].value", 8, "file-reference")]
    # The same in the tests era's expected_output, and in the testcases era's trailing answer.
    (repo / "t.yaml").write_text("tests:\n  - id: c\n    criteria: o\n    input: hi\n    expected_output:\n"
                                 "      - role: assistant\n        content: [{type: file, value: gone.md}]\n")
    [case] = read_cases(next(iter_records(repo / "t.yaml"))).cases
    assert list(case.file_segments()) == [(("tests", 0, "expected_output", 0, "content", 0, "value"), "gone.md")]
    (repo / "v1.yaml").write_text("testcases:\n  - id: c\n    messages:\n      - {role: user, content: hi}\n"
                                  "      - {role: assistant, content: [{type: file, value: gone.md}]}\n")
    [case] = read_cases(next(iter_records(repo / "v1.yaml"))).cases
    assert list(case.file_segments()) == [(("testcases", 0, "messages", 1, "content", 0, "value"), "gone.md")]
    # A prompt is built from the input only: the expected message's file is not read.
    [case] = read_cases(record).cases
    context = EvalFileContext.for_file(path, record.data, PromptOptions(), record.locate)
    assert build_prompt_inputs(case, context).question == "hi"
