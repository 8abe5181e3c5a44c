"""What every model shares: strict types that read as the schemas read, and records whose dump
keeps the order in which keys were read. Eval-file records forbid unknown keys (SPEC §1: a
misspelt key is an error); recorded conversations keep them, so that no key is ever dropped.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictInt, StrictStr, StringConstraints, model_validator

T = TypeVar("T")


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("may be left out, but not null")
    return value


def _integral_float_as_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An optional key of the schemas: absent is fine, but `null` is not a value the schema allows.
Omittable = Annotated[T | None, BeforeValidator(_not_null)]
# A schema's integer is a number without a fraction, so 1.0 is one (and is read as 1); anything
# else the schema refuses (1.5, "1", true) strict mode refuses too, rather than coercing it.
SchemaInt = Annotated[StrictInt, BeforeValidator(_integral_float_as_int)]
NonEmptyStr = Annotated[StrictStr, StringConstraints(min_length=1)]
Role = Literal["system", "user", "assistant", "tool"]
# The roles of an eval file's messages: AgentV's validate refuses any other, `tool` too.
EvalRole = Literal["system", "user", "assistant"]
ProviderOptions = dict[str, dict[str, Any]]


@cache
def _field_names(model: type[BaseModel]) -> dict[str, str]:
    names = {name: name for name in model.model_fields}
    return names | {f.alias: name for name, f in model.model_fields.items() if f.alias}


class _Record(BaseModel):
    """A record whose dump lists its keys in the order they were read (SPEC §6)."""

    model_config = ConfigDict(strict=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_key_order(cls, data: Any, handler: Any) -> Any:
        record = handler(data)
        if isinstance(data, dict):
            # pydantic fills __dict__ in declaration order and dumps fields in __dict__ order
            # (unknown keys come after them); model_construct sets __dict__ the same way.
            names, values = _field_names(cls), record.__dict__
            ordered = {names[key]: values[names[key]] for key in data if key in names}
            object.__setattr__(record, "__dict__", ordered | values)
        return record


class EvalRecord(_Record):
    """A record of an eval file or of a prompt: an unknown key is an error."""

    model_config = ConfigDict(extra="forbid")


class RecordedRecord(_Record):
    """A part of a recorded conversation: an unknown key is kept, never dropped."""

    model_config = ConfigDict(extra="allow")
