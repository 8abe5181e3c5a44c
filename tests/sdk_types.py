"""Request bodies checked against the providers' own SDK types (the `openai`, `anthropic`,
`google-genai` and `botocore` packages, test extras): what each SDK would build, in strict mode. A key the type
does not have is refused, so is a value of the wrong type (no coercion: "1" is no integer).

Each function returns readable error strings, `$.path: what is wrong`; none: the body is accepted.

How strictness is had:
- openai and anthropic: the request params are TypedDicts. pydantic will not take a config for
  a TypedDict itself (it has its own), but a config given to a list of them reaches every nested
  TypedDict that has none of its own, which is all of the SDKs'. `Iterable[...]` fields are
  validated lazily (pydantic gives a ValidatorIterator), so the result is walked to the end.
- google-genai: its types are pydantic models with extra="forbid" already, taking camelCase and
  snake_case alike (as the REST API does). The REST body's `contents` are `Content`s, its
  `generationConfig` a `GenerationConfig`, and its other fields those of `GenerateContentConfig`
  of the same name. Validated from JSON, so that `bytes` (inline data) must be base64, as on the wire.
- botocore: the Converse operation's input shape from botocore's own service model, through its
  ParamValidator (unknown keys, types, tagged unions of one key). Blobs are base64 in a JSON
  recording, as botocore writes them on the wire: they are decoded to bytes first.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from typing import Any, List, Optional

import orjson
from pydantic import ConfigDict, TypeAdapter, ValidationError

STRICT = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)


def _errors(exc: ValidationError, prefix: tuple = ()) -> list[str]:
    """The errors, but those of a union's members whose `type` or `role` is not the value's: a
    text block's fault is told once, not beside "not an image block", "not a document", ..."""
    errors = [(prefix + tuple(e["loc"]), e) for e in exc.errors()]
    other = {loc[:-1] for loc, e in errors
             if e["type"] == "literal_error" and loc[-1] in ("type", "role") and len(loc) > 1 and str(loc[-2])[:1].isupper()}
    shown = [(loc, e) for loc, e in errors if not any(loc[:len(o)] == o for o in other)] or errors
    return [f"$.{'.'.join(str(p) for p in loc)}: {e['msg']}" for loc, e in shown]


def _drained(value: Any, loc: tuple, errors: list[str]) -> None:
    """Walk a validated value to its end: each lazy Iterable field yields (and checks) its items."""
    if isinstance(value, Iterator):  # pydantic's ValidatorIterator (not importable by name)
        index = 0
        while True:
            try:
                item = next(value)
            except StopIteration:
                return
            except ValidationError as exc:
                errors.extend(_errors(exc, loc))  # its loc starts with the index
            else:
                _drained(item, loc + (index,), errors)
            index += 1
    elif isinstance(value, dict):
        for key, item in value.items():
            _drained(item, loc + (key,), errors)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _drained(item, loc + (index,), errors)


def _typed_dict_errors(adapter: TypeAdapter, body: dict) -> list[str]:
    try:
        [validated] = adapter.validate_python([body])
    except ValidationError as exc:
        return [error.replace("$.0.", "$.", 1) for error in _errors(exc)]
    errors: list[str] = []
    _drained(validated, (), errors)
    return errors


@functools.cache
def _openai() -> TypeAdapter:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
    return TypeAdapter(List[CompletionCreateParamsNonStreaming], config=STRICT)


def _anthropic_type(beta: bool):
    if beta:
        from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
    else:
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
    return MessageCreateParamsNonStreaming


@functools.cache
def _anthropic(beta: bool = False) -> TypeAdapter:
    with warnings.catch_warnings():  # a beta TypedDict that allows extra items keeps them: pydantic says so
        warnings.simplefilter("ignore")
        return TypeAdapter(List[_anthropic_type(beta)], config=STRICT)


def openai_errors(body: dict, model: str = "gpt-4o") -> list[str]:
    """A Chat Completions body (`messages`, ...) against openai's CompletionCreateParams. The
    model is the caller's to give (chatconv writes none unless the recording had one)."""
    # A fine-tuning line is a request's messages with `weight` (0 or 1) on assistant messages
    # (OpenAI's fine-tuning chat format, which export writes back): checked as the request.
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    errors = [f"$.messages.{index}.weight: 0 or 1" for index, message in enumerate(messages)
              if isinstance(message, dict) and "weight" in message and message["weight"] not in (0, 1)]
    if any(isinstance(message, dict) and "weight" in message for message in messages):
        body = {**body, "messages": [{key: value for key, value in message.items() if key != "weight"}
                                     if isinstance(message, dict) else message for message in messages]}
    errors += _typed_dict_errors(_openai(), {"model": model, **body})
    # One rule of the API that the TypedDict cannot state: an assistant message's content may be
    # null (or left out) only beside tool_calls or a function_call (or a refusal, which the type
    # has): 400 "Invalid value for 'content': expected a string, got null.".
    errors += [f"$.messages.{index}: an assistant message with no content, tool_calls or function_call"
               for index, message in enumerate(messages) if isinstance(message, dict)
               and message.get("role") == "assistant" and message.get("content") is None
               and not message.get("tool_calls") and not message.get("function_call") and not message.get("refusal")]
    return errors


# The sampling fields anthropic 2.x's MessageCreateParams no longer has (the newest models refuse
# them), which the Messages API still takes for the models that had them: numbers, checked here.
_ANTHROPIC_SAMPLING = ("temperature", "top_p", "top_k")


def anthropic_errors(body: dict, model: str = "claude-sonnet-4-5", max_tokens: int = 1024) -> list[str]:
    """A Messages body (`system`, `messages`, ...) against anthropic's MessageCreateParams; model
    and max_tokens, which the API requires, are the caller's unless the body has them."""
    params, beta_params = _anthropic_params(), _anthropic_params(True)
    sampling = {key: body[key] for key in _ANTHROPIC_SAMPLING if key in body and key not in beta_params}
    errors = [f"$.{key}: a number" for key, value in sampling.items()
              if isinstance(value, bool) or not isinstance(value, (int, float))]
    body = {key: value for key, value in body.items() if key not in sampling}
    # A body that asks for a beta feature (mcp_servers: the MCP connector) is the beta type's,
    # which the API takes with its anthropic-beta header.
    beta = any(key in beta_params and key not in params for key in body)
    return errors + _typed_dict_errors(_anthropic(beta), {"model": model, "max_tokens": max_tokens, **body})


@functools.cache
def _anthropic_params(beta: bool = False) -> frozenset[str]:
    return frozenset(_anthropic_type(beta).__annotations__)


# The REST body's fields that GenerateContentConfig has (in either spelling), beside contents and generationConfig.
_GEMINI_CONFIG = {"systemInstruction": "system_instruction", "tools": "tools", "toolConfig": "tool_config",
                  "safetySettings": "safety_settings", "cachedContent": "cached_content", "labels": "labels"}
_GEMINI_SPELLINGS = {**{snake: camel for camel, snake in _GEMINI_CONFIG.items()}, "generation_config": "generationConfig"}


@functools.cache
def _gemini() -> tuple[TypeAdapter, TypeAdapter, TypeAdapter]:
    from google.genai import types
    return (TypeAdapter(List[types.Content]), TypeAdapter(types.GenerateContentConfig),
            TypeAdapter(Optional[types.GenerationConfig]))


def gemini_errors(body: dict) -> list[str]:
    """A generateContent REST body (`contents`, `systemInstruction`, `tools`, `generationConfig`,
    ... in camelCase or snake_case) against google-genai's Content, GenerateContentConfig and
    GenerationConfig models."""
    contents, config, generation = _gemini()
    errors = []
    fields: dict[str, Any] = {}
    for key, value in body.items():
        name = _GEMINI_SPELLINGS.get(key, key)
        if name in fields:
            errors.append(f"$.{key}: written twice (camelCase and snake_case)")
        elif name not in (*_GEMINI_CONFIG, "contents", "generationConfig"):
            errors.append(f"$.{key}: not a field of a generateContent request")
        fields[name] = value
    if "contents" not in fields:
        errors.append("$: contents is required")
    checks = [(contents, fields.get("contents", []), ("contents",)),
              (config, {key: fields[key] for key in _GEMINI_CONFIG if key in fields}, ()),
              (generation, fields.get("generationConfig"), ("generationConfig",))]
    for adapter, value, prefix in checks:
        try:
            adapter.validate_json(orjson.dumps(value), strict=True)
        except ValidationError as exc:
            errors.extend(_errors(exc, prefix))
    return errors


@functools.cache
def _converse_shape():
    import botocore.session
    return botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape


def _blobs_decoded(value: Any) -> Any:
    """The body with each `source.bytes` (base64 in JSON) as the bytes boto3 takes."""
    import base64
    if isinstance(value, dict):
        return {key: base64.b64decode(item) if key == "bytes" and isinstance(item, str) else _blobs_decoded(item)
                for key, item in value.items()}
    return [_blobs_decoded(item) for item in value] if isinstance(value, list) else value


def converse_errors(body: dict, model: str = "anthropic.claude-3-5-sonnet-20240620-v1:0") -> list[str]:
    """A Converse request body against botocore's Converse input shape (the model is the caller's)."""
    import binascii

    from botocore.validate import ParamValidator
    try:
        decoded = _blobs_decoded({"modelId": model, **body})
    except (binascii.Error, ValueError) as exc:
        return [f"a source's bytes are not base64: {exc}"]
    report = ParamValidator().validate(decoded, _converse_shape())
    return [line.strip() for line in report.generate_report().splitlines() if line.strip()] if report.has_errors() else []


CHECKS = {"bedrock-converse": converse_errors, "openai-chat": openai_errors, "openai": openai_errors, "anthropic": anthropic_errors, "gemini": gemini_errors}
