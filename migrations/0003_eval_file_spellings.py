"""0003: other spellings of an eval file become the canonical one (SPEC §1).

`testcases` (one `messages` list whose trailing assistant message is the expected answer),
`tests` / `cases` / `eval_cases` -> `evalcases`; in a case, `input` -> `input_messages`
(a string is one user message), `expected_output` -> `expected_messages` (a string is one
assistant message), `expected_outcome` / `criteria` -> `outcome`. Keys are renamed where they
stand; a rename whose target already exists is left alone, so nothing is overwritten.
"""

from chatconv.migrate import rename_key

KINDS = ("eval-file",)
SUMMARY = "older eval-file spellings (testcases, tests, input, expected_output, criteria, ...)"

_CASE_LISTS = ("testcases", "tests", "cases", "eval_cases")
_CASE_KEYS = {"input": "input_messages", "expected_output": "expected_messages",
              "expected_outcome": "outcome", "criteria": "outcome"}


def _case_list_key(record):
    if "evalcases" in record:
        return None
    present = [key for key in _CASE_LISTS if isinstance(record.get(key), list)]
    return present[0] if len(present) == 1 else None


def _cases(record):
    key = _case_list_key(record) or "evalcases"
    cases = record.get(key)
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            yield (key, index), case


def _case_renames(case):
    renames = [(old, new) for old, new in _CASE_KEYS.items() if old in case and new not in case]
    targets = [new for _, new in renames]
    # expected_outcome and criteria both mean outcome: with both present, neither is renamed.
    return [(old, new) for old, new in renames if targets.count(new) == 1]


def _splits_messages(case):
    messages = case.get("messages")
    return ("input_messages" not in case and isinstance(messages, list) and messages
            and all(isinstance(m, dict) for m in messages))


def detect(record):
    if not isinstance(record, dict):
        return None
    key = _case_list_key(record)
    if key:
        return (key,)
    for path, case in _cases(record):
        if _case_renames(case) or _splits_messages(case):
            return path
    return None


def _as_messages(value, role):
    return [{"role": role, "content": value}] if isinstance(value, str) else value


def _upgrade_case(case):
    for old, new in _case_renames(case):
        value = case[old]
        if old == "input":
            value = _as_messages(value, "user")
        elif old == "expected_output":
            value = _as_messages(value, "assistant")
        rename_key(case, old, new, value)
    if _splits_messages(case):
        messages = list(case["messages"])
        expected = [messages.pop()] if len(messages) > 1 and messages[-1].get("role") == "assistant" else []
        rename_key(case, "messages", "input_messages", messages)
        if expected and "expected_messages" not in case:
            case["expected_messages"] = expected
        elif expected:
            messages.append(expected[0])  # an explicit expected_messages wins; keep the message


def upgrade(record):
    key = _case_list_key(record)
    if key:
        rename_key(record, key, "evalcases")
    for _, case in _cases(record):
        _upgrade_case(case)
    return record
