"""Properties of the Anthropic and Gemini bodies over generated messages with the risky shapes:
texts of white space (alone or trailing), system texts of white space, tool calls left
unanswered at the end and in the middle of a conversation (SPEC §3)."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.formats import export_bodies, import_paths
from chatconv.providers import ProviderRuleError, render_anthropic, render_gemini

TEXTS = ["hi", "hi ", "a\n", "b \t\n", " ", "\n\t", ""]
SYSTEM_TEXTS = ["Be brief.", "Be brief.\n", " ", "\n\n", ""]


def _result(call_id: str) -> dict:
    return {"type": "tool-result", "toolCallId": call_id, "toolName": "t", "output": {"type": "text", "value": "ok"}}


@st.composite
def conversations(draw):
    """AI SDK model messages: system texts first (some late), then user, assistant and tool
    messages, where an assistant's tool calls are answered in the next tool message or not."""
    ids = iter(range(10**6))
    messages = [{"role": "system", "content": draw(st.sampled_from(SYSTEM_TEXTS))}
                for _ in range(draw(st.integers(0, 2)))]
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "late system"]))
        if kind == "late system":
            messages.append({"role": "system", "content": draw(st.sampled_from(SYSTEM_TEXTS))})
        elif kind in ("user", "assistant"):
            texts = draw(st.lists(st.sampled_from(TEXTS), min_size=1, max_size=3))
            content = texts[0] if len(texts) == 1 and draw(st.booleans()) else [
                {"type": "text", "text": text} for text in texts]
            messages.append({"role": kind, "content": content})
        else:
            calls = [f"call{next(ids)}" for _ in range(draw(st.integers(1, 2)))]
            texts = draw(st.lists(st.sampled_from(TEXTS), max_size=1))
            messages.append({"role": "assistant", "content": [
                *({"type": "text", "text": text} for text in texts),
                *({"type": "tool-call", "toolCallId": c, "toolName": "t", "input": {}} for c in calls)]})
            answered = [c for c in calls if draw(st.booleans())]
            if answered:
                messages.append({"role": "tool", "content": [_result(c) for c in answered]})
    return messages


def _rendered(render, messages):
    """The body as it is, else as repaired; None when nothing but a system prompt is left."""
    try:
        return render(messages)[0]
    except ProviderRuleError:
        try:
            return render(messages, repair=True)[0]
        except ProviderRuleError as exc:
            assert "no message to send" in exc.rule
            return None


def _anthropic_blocks(message):
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


@settings(max_examples=250, deadline=None)
@given(conversations())
def test_no_anthropic_body_ends_in_an_assistant_message_with_trailing_white_space(messages):
    body = _rendered(render_anthropic, messages)
    if body is None or body["messages"][-1]["role"] != "assistant":
        return
    last = _anthropic_blocks(body["messages"][-1])[-1]
    if last["type"] == "text":
        assert last["text"] == last["text"].rstrip()


@settings(max_examples=250, deadline=None)
@given(conversations())
def test_no_system_text_is_white_space_only(messages):
    anthropic = _rendered(render_anthropic, messages)
    if anthropic is not None and "system" in anthropic:
        assert anthropic["system"].strip()
    gemini = _rendered(render_gemini, messages)
    if gemini is not None and "system_instruction" in gemini:
        assert all(part["text"].strip() for part in gemini["system_instruction"]["parts"])
    # What the system texts say is kept, in order.
    said = [m["content"] for m in messages if m["role"] == "system" and m["content"].strip()]
    if anthropic is not None and said and messages[0]["role"] == "system":
        assert anthropic["system"].startswith(said[0])


@settings(max_examples=250, deadline=None)
@given(conversations())
def test_after_a_repair_no_message_is_empty_and_roles_alternate(messages):
    for render, key, wire in ((render_anthropic, "messages", _anthropic_blocks),
                              (render_gemini, "contents", lambda message: message["parts"])):
        try:
            body = render(messages, repair=True)[0]
        except ProviderRuleError as exc:
            assert "no message to send" in exc.rule
            continue
        roles = [message["role"] for message in body[key]]
        assert roles and roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:]))
        for message in body[key]:
            blocks = wire(message)
            assert blocks, message
            assert all(block["text"].strip() for block in blocks if "text" in block and len(block) <= 2)
            # Merging the user turns around a dropped one keeps tool results first.
            results = [block.get("type") == "tool_result" or "functionResponse" in block for block in blocks]
            assert results == sorted(results, reverse=True)


def test_an_unanswered_call_in_the_middle_leaves_no_empty_turn_and_the_users_merge():
    messages = [{"role": "user", "content": "a"},
                {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t",
                                                   "input": {}}]},
                {"role": "user", "content": "b"}]
    body, repairs = render_anthropic(messages, repair=True)
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                             {"type": "text", "text": "b"}]}]
    assert repairs == ["anthropic: message 1: tool_use 'c' is not answered in the next user message (repaired)"]
    body, _ = render_gemini(messages, repair=True)
    assert body["contents"] == [{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}]


@pytest.mark.parametrize("render", [render_anthropic, render_gemini])
def test_a_white_space_system_prompt_is_left_out_and_a_final_assistant_text_trimmed_for_anthropic(render):
    body, repairs = render([{"role": "system", "content": " \n"}, {"role": "user", "content": "q"},
                            {"role": "assistant", "content": "The answer is "}])
    assert repairs == [] and "system" not in body and "system_instruction" not in body
    if render is render_anthropic:
        assert body["messages"][-1] == {"role": "assistant", "content": "The answer is"}
    else:  # Gemini takes a model turn as it is
        assert body["contents"][-1] == {"role": "model", "parts": [{"text": "The answer is "}]}


@pytest.mark.parametrize("target, body", [
    ("anthropic", {"system": " \n", "messages": [{"role": "user", "content": "q"},
                                                 {"role": "assistant", "content": "The answer is "}]}),
    ("gemini", {"system_instruction": {"parts": [{"text": " "}]},
                "contents": [{"role": "user", "parts": [{"text": "q"}]}, {"role": "model", "parts": [{"text": "A "}]}]}),
])
def test_export_gives_back_the_body_imported_white_space_and_all(tmp_path, target, body):
    # An exported body reproduces its source: export trims nothing where prompt's renderers do.
    source = tmp_path / "bodies.jsonl"
    source.write_bytes(orjson.dumps(body) + b"\n")
    steps = tmp_path / "steps.jsonl"
    steps.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in import_paths([str(source)], target)))
    assert [orjson.loads(b) for b in export_bodies([str(steps)], target, per="conversation")] == [body]
