"""Scalars a migration made, written anew as YAML for the rewrite by spans (yaml_spans.py):
plain where the text reads back as itself, else double-quoted.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from yaml.resolver import Resolver

from ..sources.yaml import STR_TAG


class Unsupported(Exception):
    """A layout the rewrite by spans does not write: the round trip does."""


# What a double-quoted scalar must escape: YAML's non-printable characters and its line breaks.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
_INDICATORS = "-?:,[]{}#&*!|>'\"%@`"  # none may start a plain scalar
_RESOLVER = Resolver()


def plain_text(text: str) -> bool:
    """Whether `text` may be written as a plain scalar in block context, on one line, and read
    back as the same text (not a number, a boolean or null, nor YAML syntax)."""
    return (text != "" and text[0] not in _INDICATORS and text.strip() == text and ": " not in text
            and " #" not in text and not text.endswith(":") and not any(c in text for c in "\t\n\r")
            and not _UNPRINTABLE.search(text) and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == STR_TAG)


def fresh_scalar(value: Any, flow: bool = False) -> str:
    """A scalar the migration made, written as YAML that chatconv's reader reads back as it (in a
    flow collection with `flow`, where `,[]{}` end a plain scalar)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        written = repr(value)
        if written in ("nan", "inf", "-inf"):
            return written.replace("nan", ".nan").replace("inf", ".inf")
        mantissa, e, exponent = written.partition("e")  # YAML 1.1 reads 1e+20 as text: 1.0e+20
        return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent
    if not isinstance(value, str):
        raise Unsupported(f"a {type(value).__name__} made by a migration")
    plain = plain_text(value) and not (flow and any(c in value for c in ",[]{}"))
    return value if plain else _double_quoted(value)


def _double_quoted(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)  # JSON's escapes are YAML's double-quoted ones
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
