"""chatconv's prompts are AgentV's own, case by case: each case of each eval file AgentV's prompt
builder builds (its `buildPromptInputs`, run with node from tests/oracles/) is built by
`build_prompts` to the same question, chatPrompt, systemMessage and guidelines, release by
release, for LLM and for agent providers. A file chatconv builds nothing from is one AgentV's
own validate refuses (chatconv gives AgentV's verdict first: tests/test_agentv_verdicts.py)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from agentv import NODE, ORACLES, TREES, agentv, needs_node, yaml_files
from conftest import DATA, run_chatconv
from chatconv.problems import ChatconvError
from chatconv.prompt import AGENTV_SYSTEM_PROMPT, build_prompts

PROMPTS = DATA / "agentv-prompts"  # files written for this test, each era in its folder (README there)

# (tree, the folder of its eval files, oracle, --agentv, mode)
PAIRS = [
    (PROMPTS, "evalcases", "26781d3d9", "0.20.0", "lm"), (PROMPTS, "evalcases", "26781d3d9", "0.20.0", "agent"),
    (PROMPTS, "evalcases", "v2.5.8", "2.5.8", "lm"), (PROMPTS, "evalcases", "v2.5.8", "2.5.8", "agent"),
    (PROMPTS, "tests", "v3.8.0", "3.8.0", "lm"), (PROMPTS, "tests", "v3.8.0", "3.8.0", "agent"),
    (PROMPTS, "tests", "v4.42.4", None, "lm"), (PROMPTS, "tests", "v4.42.4", None, "agent"),
    (PROMPTS, "current", "58f316ca2", None, "lm"), (PROMPTS, "current", "58f316ca2", None, "agent"),
    # AgentV's own trees for LLM providers (agent providers differ only in how a file is named,
    # which the files above check at every release; the suite stays under its time)
    (TREES / "tests-v3.8.0", "examples", "v3.8.0", "3.8.0", "lm"),
    (TREES / "tests-v3.8.0", "examples", "v4.42.4", None, "lm"),
    (TREES / "current-2026-07", "examples", "58f316ca2", None, "lm"),
]


def _oracle_prompts(version: str, files: list[str], root, mode: str) -> list[dict]:
    run = subprocess.run([NODE, str(ORACLES / f"agentv-{version}.mjs"), "prompt", "--root", ".", "--mode", mode,
                          *files], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


@needs_node
@pytest.mark.parametrize("tree, folder, version, asked, mode", PAIRS,
                         ids=[f"{t.name}-{f}-{v}-{m}" for t, f, v, _, m in PAIRS])
def test_each_case_is_the_prompt_agentv_builds(tmp_path, tree, folder, version, asked, mode):
    root = tmp_path / "repo"
    shutil.copytree(tree, root)
    (root / ".git").mkdir(exist_ok=True)
    checked = [line for line in agentv(version, "validate", [f for f in yaml_files(root) if f.startswith(folder)], root)
               if line["fileType"] == "eval"]
    refused = {line["file"] for line in checked if not line["valid"]}
    same, unbuilt = 0, []
    for line in _oracle_prompts(version, [line["file"] for line in checked], root, mode):
        if not line["ok"]:
            continue  # AgentV's loader refuses the file: it builds no prompt
        try:
            ours = {case.id: case.inputs.as_json()
                    for case in build_prompts(root / line["file"], agentv=asked, agent=mode == "agent").cases}
        except ChatconvError:
            unbuilt.append(line["file"])
            continue
        for case in line["cases"]:
            if f"{case['id']}/turn-1" in ours:
                # A conversation test: AgentV's builder gives its input alone, which its runner
                # never sends; chatconv gives each turn's prompt (test_conversation_turns.py).
                continue
            theirs = {key: value for key, value in case.items() if key != "id"}
            assert ours.get(case["id"]) == theirs, (line["file"], case["id"])
            same += 1
    assert same >= 8
    assert sorted(set(unbuilt) - refused) == [], "chatconv builds nothing from a file AgentV's validate takes"


def test_a_prompt_without_a_system_message_gets_agentvs_default_in_a_request_body(tmp_path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "s.eval.yaml"
    path.write_text("tests:\n  - id: a\n    criteria: c\n    input: Hi\n  - id: b\n    criteria: c\n    input:\n"
                    "      - {role: system, content: Be brief.}\n      - {role: user, content: Hi}\n")
    result = run_chatconv("prompt", path, "--target", "openai")
    assert result.returncode == 0, result.stderr_text
    first, second = (json.loads(line)["request"]["messages"] for line in result.stdout_text.splitlines())
    assert first == [{"role": "system", "content": AGENTV_SYSTEM_PROMPT}, {"role": "user", "content": "Hi"}]
    assert second == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    raw = [json.loads(line) for line in run_chatconv("prompt", path).stdout_text.splitlines()]
    assert raw == [{"id": "a", "question": "Hi"},
                   {"id": "b", "question": "@[System]:\nBe brief.\n\n@[User]:\nHi", "systemMessage": "Be brief.",
                    "chatPrompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}]


def test_the_seed_form_is_there_by_name_and_its_options_ask_for_it(tmp_path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "s.eval.yaml"
    path.write_text("tests:\n  - id: a\n    criteria: c\n    input:\n      - {role: user, content: u1}\n"
                    "      - {role: system, content: late}\n      - {role: user, content: u2}\n")
    seed = json.loads(run_chatconv("prompt", path, "--form", "seed", "--system-policy", "keep").stdout_text)
    assert seed["question"] == "[User]: u1\n[System]: late\n[User]: u2" and seed["chat_prompt"][1]["role"] == "system"
    refused = run_chatconv("prompt", path, "--system-policy", "keep")
    assert refused.returncode == 2 and "--system-policy shapes the seed form only; add --form seed" in refused.stderr_text


@needs_node
@pytest.mark.parametrize("system", [None, "Be kind."])
def test_env_values_are_put_in_as_agentv_puts_them(tmp_path, monkeypatch, system):
    """`{{ env.X }}` (current era): set, unset, with a default, a whole value, beside `${{`."""
    root = tmp_path / "repo"
    shutil.copytree(PROMPTS, root)
    (root / ".git").mkdir()
    monkeypatch.setenv("CHATCONV_TEST_NUMBER", "42")
    monkeypatch.delenv("CHATCONV_TEST_UNSET", raising=False)
    if system is None:
        monkeypatch.delenv("CHATCONV_TEST_SYSTEM", raising=False)
    else:
        monkeypatch.setenv("CHATCONV_TEST_SYSTEM", system)
    [line] = _oracle_prompts("58f316ca2", ["current/env.eval.yaml"], root, "lm")
    ours = [{"id": case.id, **case.inputs.as_json()} for case in build_prompts(root / "current/env.eval.yaml").cases]
    assert ours == line["cases"]
    assert ours[0]["question"].endswith("Hi from nobody at 42")
