"""0003: older spellings within the `evalcases` era become the era's own (SPEC §1, §1a).

`cases` / `eval_cases` -> `evalcases`; in a case, `expected_outcome` -> `outcome`, and the
late-v2 keys `input` -> `input_messages` (a string is one user message), `expected_output` ->
`expected_messages` (a string is one assistant message), `criteria` -> `outcome`. Only files
of the `evalcases` era are touched: a `tests` file is of the tests era, a `testcases` file is
moved by 0004. Keys are renamed where they stand; a rename whose target already exists is left
alone, so nothing is overwritten. Works on plain data and on ruamel.yaml's round-trip data,
whose comments stay with the text.
"""

from chatconv.migrate import cases_in, in_era, move_comment, new_like, new_list_like, rename_key

KINDS = ("eval-file",)
ERAS = ("evalcases", "evalcases")
SUMMARY = "older spellings of the evalcases era (eval_cases, cases, input, expected_output, criteria, ...)"

_CASE_LISTS = ("cases", "eval_cases")
_CASE_KEYS = {"input": "input_messages", "expected_output": "expected_messages",
              "expected_outcome": "outcome", "criteria": "outcome"}
_WRAPPED_ROLE = {"input": "user", "expected_output": "assistant"}


def _case_list_key(record):
    if "evalcases" in record:
        return None
    present = [key for key in _CASE_LISTS if isinstance(record.get(key), list)]
    return present[0] if len(present) == 1 else None


def _cases(record):
    return cases_in(record, _case_list_key(record) or "evalcases")


def _case_renames(case):
    renames = [(old, new) for old, new in _CASE_KEYS.items() if old in case and new not in case]
    targets = [new for _, new in renames]
    # expected_outcome and criteria both mean outcome: with both present, neither is renamed.
    return [(old, new) for old, new in renames if targets.count(new) == 1]


def detect(record):
    if not in_era(record, "evalcases"):
        return None
    key = _case_list_key(record)
    if key:
        return (key,)
    for path, case in _cases(record):
        if _case_renames(case):
            return path
    return None


def _as_messages(case, key):
    """The value at `key` as a list of messages: a string is one message, and so is an expected
    output that is an object without a role (a structured answer: AgentV reads it so)."""
    value = case[key]
    if isinstance(value, dict) and key == "expected_output" and "role" not in value:
        _comment_goes_with_the_value(case, key, value)
        return new_list_like(case, [new_like(case, {"role": "assistant", "content": value}.items())])
    if not isinstance(value, str):
        return value
    message = new_like(case, {"role": _WRAPPED_ROLE[key], "content": value}.items())
    move_comment(case, key, message, "content")  # a comment after the text stays after it
    return [message]


def _comment_goes_with_the_value(case, key, value):
    """ruamel.yaml holds the comment after `key:` both on the key and on the mapping below it;
    with the mapping moved under a new key, it would be written twice: it stays with the mapping."""
    key_comment = getattr(case, "ca", None) and case.ca.items.get(key)
    value_comment = getattr(value, "ca", None) and value.ca.comment
    if key_comment and value_comment and any(token is value_comment[0] for token in key_comment if token):
        del case.ca.items[key]


def upgrade(record):
    key = _case_list_key(record)
    if key:
        rename_key(record, key, "evalcases")
    for _, case in _cases(record):
        for old, new in _case_renames(case):
            value = _as_messages(case, old) if old in _WRAPPED_ROLE else case[old]
            rename_key(case, old, new, value)
    return record
