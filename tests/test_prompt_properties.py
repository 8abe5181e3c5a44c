"""Properties of eval case -> ChatPrompt -> API bodies, over generated cases (SPEC §2, §3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.prompt.convert import (DEFAULT_SYSTEM_PROMPT, PromptInputs, Segment, build_question,
                                     convert_to_chat_prompt, guideline_block, is_single_user_turn)
from chatconv.providers import ProviderRuleError, render_request

ROLES = ["system", "user", "assistant", "tool"]
# A pool of files: guideline files, non-guideline files, and an empty file (contributes nothing).
FILES = {
    "g1.instructions.md": ("«guide one»", True),
    "docs/g2.instructions.md": ("«guide two»", True),
    "a.py": ("«code a»", False),
    "b.txt": ("«text b»", False),
    "empty.txt": ("", False),
}


@st.composite
def cases(draw):
    """Messages with segments; every text value is a unique token, so it can be counted."""
    counter = iter(range(10**6))
    messages, segments = [], []
    for _ in range(draw(st.integers(1, 7))):
        role = draw(st.sampled_from(ROLES))
        parts = []
        for kind in draw(st.lists(st.sampled_from(["text", "blank", "file"]), min_size=1, max_size=4)):
            if kind == "text":
                parts.append(Segment("text", f"«t{next(counter)}»"))
            elif kind == "blank":
                parts.append(Segment("text", draw(st.sampled_from(["", " ", "\n\t"]))))
            else:
                value = draw(st.sampled_from(sorted(FILES)))
                text, guideline = FILES[value]
                parts.append(Segment("file", value, text, guideline, None))
        messages.append({"role": role})
        segments.append(parts)
    metadata_prompt = draw(st.sampled_from([None, "«metadata prompt»"]))
    return messages, segments, metadata_prompt


def has_content(parts):
    return any(p.counts for p in parts)


@settings(max_examples=300)
@given(cases())
def test_merge_policy_invariants(case):
    messages, segments, metadata_prompt = case
    prompt = convert_to_chat_prompt(messages, segments, None, metadata_prompt)
    roles = [m["role"] for m in prompt]
    # at most one system message, and it comes first
    assert roles.count("system") <= 1 and ("system" not in roles or roles[0] == "system")
    # non-system messages keep their order and role; none is empty
    expected_roles = [m["role"] for m, s in zip(messages, segments) if m["role"] != "system" and has_content(s)]
    assert [r for r in roles if r != "system"] == expected_roles
    assert all(m["content"].strip() for m in prompt)
    # every counting text segment and non-guideline file text appears exactly once
    everything = "\n".join(m["content"] for m in prompt)
    for parts in segments:
        for part in parts:
            if part.type == "text" and part.counts:
                assert everything.count(part.value) == 1
    non_guideline_texts = {p.text for parts, m in zip(segments, messages) for p in parts
                           if p.type == "file" and not p.guideline and p.text
                           and (m["role"] == "system" or has_content(parts))}
    for text in non_guideline_texts:
        occurrences = sum(1 for parts, m in zip(segments, messages) if (m["role"] == "system" or has_content(parts))
                          for p in parts if p.type == "file" and p.text == text)
        assert everything.count(text) == occurrences
    # each guideline file's text appears once, in the system message
    for value, (text, guideline) in FILES.items():
        if guideline and any(p.type == "file" and p.value == value for parts in segments for p in parts):
            assert everything.count(text) == 1 and text in prompt[0]["content"] and roles[0] == "system"


def _base(messages, segments, metadata_prompt):
    system_texts = ["\n".join(p.value if p.type == "text" else p.text for p in parts
                              if (p.type == "text" and p.counts) or (p.type == "file" and not p.guideline and p.text))
                    for m, parts in zip(messages, segments) if m["role"] == "system"]
    return "\n\n".join(t for t in system_texts if t) or metadata_prompt or DEFAULT_SYSTEM_PROMPT


@settings(max_examples=300)
@given(cases())
def test_system_text_reaching_the_api_starts_with_the_base(case):
    messages, segments, metadata_prompt = case
    inputs = _inputs(messages, segments, metadata_prompt)
    body, _ = render_request(inputs.as_request(metadata_prompt), "openai")
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][0]["content"].startswith(_base(messages, segments, metadata_prompt))


def _inputs(messages, segments, metadata_prompt):
    chat_prompt = None
    if not is_single_user_turn(messages, segments):
        chat_prompt = convert_to_chat_prompt(messages, segments, None, metadata_prompt)
    return PromptInputs(build_question(messages, segments), guideline_block(segments), chat_prompt)


MARKERS = {"system": "[System]: ", "user": "[User]: ", "assistant": "[Assistant]: ", "tool": "[Tool]: "}


@settings(max_examples=300)
@given(cases())
def test_question_lists_every_message_with_content_in_order(case):
    messages, segments, _ = case
    question = build_question(messages, segments)
    with_content = [(m, s) for m, s in zip(messages, segments) if has_content(s)]
    if is_single_user_turn(messages, segments):
        assert not question.startswith("[User]: ")
        return
    position = 0
    for message, parts in with_content:
        position = question.index(MARKERS[message["role"]], position)
        for part in parts:
            if part.type == "text" and part.counts:
                assert part.value in question
    markers = sum(question.count(marker) for marker in MARKERS.values())
    assert markers == len(with_content)


@settings(max_examples=300)
@given(cases(), st.sampled_from(["merge", "assistant", "user", "keep"]))
def test_anthropic_and_gemini_bodies_alternate_and_start_with_the_user(case, policy):
    messages, segments, metadata_prompt = case
    chat_prompt = convert_to_chat_prompt(messages, segments, None, metadata_prompt, system_policy=policy)
    request = {"question": build_question(messages, segments), "chatPrompt": chat_prompt}
    for target, key, user in (("anthropic", "messages", "user"), ("gemini", "contents", "user")):
        if not [m for m in chat_prompt if m["role"] != "system"]:
            with pytest.raises(ProviderRuleError, match="no message to send"):
                render_request(request, target, repair=True)
            continue
        try:
            body, repairs = render_request(request, target)
        except ProviderRuleError:
            body, repairs = render_request(request, target, repair=True)
            assert repairs
        roles = [m["role"] for m in body[key]]
        assert not roles or roles[0] == user
        assert all(a != b for a, b in zip(roles, roles[1:]))
