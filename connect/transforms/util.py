"""What the built-in transforms share (Connect's ``transforms.util``: ``Requirements``, ``SchemaUtil``,
``SimpleConfig``), plus Java's ``SimpleDateFormat`` patterns and regex replacements in Python form."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_list
from connect.api.data import Schema, Struct, Type
from connect.api.errors import ConfigError, DataError
from connect.api.records import SourceRecord
from connect.api.transforms import Transformation, new_record

REPLACE_NULL_WITH_DEFAULT = ConfigKey(
    "replace.null.with.default", ConfigType.BOOLEAN, "true", importance="MEDIUM",
    documentation="Whether to replace fields that have a default value and that are null to the default value. "
                  "When set to true, the default value is used, otherwise null is used.")


# --- config ---------------------------------------------------------------------------------------------------
def key(name: str, type_: ConfigType = ConfigType.STRING, default: str | None = None, *, required: bool = False,
        importance: str = "MEDIUM", doc: str = "", validators: tuple[Callable[[str, str | None], str | None], ...] = ()
        ) -> ConfigKey:
    """A transform's config key (no group: Connect puts them in the ``Transforms: <alias>`` group)."""
    return ConfigKey(name, type_, default, required, importance, doc, validators=validators)


def settings(definition: ConfigDef, configs: Mapping[str, Any]) -> dict[str, Any]:
    """Typed values of ``configs`` per ``definition``; the first problem raises :class:`ConfigError`."""
    raw = {k: (None if v is None else str(v)) for k, v in configs.items()}
    for result in definition.validate(raw):
        if result.errors:
            raise _ValidationError(result.name, raw.get(result.name), result.errors[0])
    out: dict[str, Any] = {}
    for k in definition.keys:
        value = raw.get(k.name, k.default)
        out[k.name] = _typed(k.type, value)
    return out


class _ValidationError(ConfigError):
    """A ConfigError whose text is a validator's complete message (it names the key and value already)."""

    def __init__(self, name: str, value: object, message: str) -> None:
        super().__init__(name, value, message)
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.args[0])


def _typed(type_: ConfigType, value: str | None) -> Any:
    if value is None:
        return None
    if type_ is ConfigType.BOOLEAN:
        return value.strip().lower() == "true"
    if type_ in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
        return int(value.strip())
    if type_ is ConfigType.DOUBLE:
        return float(value.strip())
    if type_ is ConfigType.LIST:
        return parse_list(value)
    return value.strip() if type_ is ConfigType.CLASS else value


def invalid(name: str, value: object, reason: str) -> str:
    """Java's ``ConfigException(name, value, reason)`` message."""
    return f"Invalid value {value} for configuration {name}: {reason}"


def non_empty_list(name: str, raw: str | None) -> str | None:
    """``NonEmptyListValidator`` (null is an empty list)."""
    if raw is None:
        return invalid(name, "null", "Empty list")
    return None if parse_list(raw) else invalid(name, parse_list(raw), "Empty list")


def one_of(*allowed: str, ignore_case: bool = False) -> Callable[[str, str | None], str | None]:
    """``ConfigDef.ValidString.in`` / ``CaseInsensitiveValidString``."""
    def check(name: str, raw: str | None) -> str | None:
        value = "null" if raw is None else raw.strip()
        if (value.lower() in {a.lower() for a in allowed}) if ignore_case else value in allowed:
            return None
        suffix = " (case insensitive)" if ignore_case else ""
        return invalid(name, value, f"String must be one of{suffix}: {', '.join(allowed)}")
    return check


def valid_regex(name: str, raw: str | None) -> str | None:
    """``RegexValidator``: the value must compile as a (Java-compatible) regex."""
    if raw is None:  # Pattern.compile(null): the JDK's helpful NullPointerException message
        return invalid(name, "null", 'Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null')
    try:
        re.compile(java_regex(raw))
    except re.error as exc:
        return invalid(name, raw, f"Invalid regex: {exc}")
    return None


def non_empty_string(name: str, raw: str | None) -> str | None:
    """``ConfigDef.NonEmptyString`` (null passes)."""
    return None if raw is None or raw else invalid(name, raw, "String must be non-empty")


# --- records --------------------------------------------------------------------------------------------------
class KeyOrValue(Transformation):
    """The ``$Key``/``$Value`` pattern: a subclass sets :attr:`is_key` and works on that half of the record."""

    is_key: ClassVar[bool] = False

    def operating_schema(self, record: SourceRecord) -> Schema | None:
        """The key or value schema."""
        return record.key_schema if self.is_key else record.value_schema

    def operating_value(self, record: SourceRecord) -> Any:
        """The key or value."""
        return record.key if self.is_key else record.value

    def updated(self, record: SourceRecord, schema: Schema | None, value: Any) -> SourceRecord:
        """The record with a new key or value."""
        if self.is_key:
            return new_record(record, key_schema=schema, key=value)
        return new_record(record, value_schema=schema, value=value)


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    """``Requirements.requireMap``."""
    if not isinstance(value, dict):
        raise DataError(f"Only Map objects supported in absence of schema for [{purpose}], found: {_java_class(value)}")
    return value


def require_struct(value: Any, purpose: str) -> Struct:
    """``Requirements.requireStruct``."""
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {_java_class(value)}")
    return value


def _java_class(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "java.util.HashMap", str: "java.lang.String", int: "java.lang.Long", float: "java.lang.Double",
            bool: "java.lang.Boolean", bytes: "[B", list: "java.util.ArrayList",
            Struct: "org.apache.kafka.connect.data.Struct"}.get(type(value), type(value).__name__)


def field_value(struct: Struct, name: str, replace_null: bool) -> Any:
    """``Struct.get`` (the default replaces a null) or ``getWithoutDefault``."""
    value = struct.values.get(name)
    if value is None and replace_null:
        schema_field = struct.schema.field(name)
        if schema_field is not None:
            return schema_field.schema.default
    return value


def copy_basics(schema: Schema, **changes: Any) -> Schema:
    """``SchemaUtil.copySchemaBasics``: name, version, doc and parameters of ``schema`` (not optional, not the
    default), with ``changes`` (``type``, ``fields``...) applied."""
    base: dict[str, Any] = {"type": schema.type, "name": schema.name, "version": schema.version, "doc": schema.doc,
                            "parameters": schema.parameters}
    if schema.type is Type.ARRAY:
        base["value_schema"] = schema.value_schema
    elif schema.type is Type.MAP:
        base["key_schema"], base["value_schema"] = schema.key_schema, schema.value_schema
    base.update(changes)
    return Schema(**base)


class SchemaCache:
    """A small cache of updated schemas keyed by the original schema object (Connect's ``SynchronizedCache``)."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: dict[int, tuple[Schema, Any]] = {}

    def get(self, schema: Schema, build: Callable[[Schema], Any]) -> Any:
        """The cached result for ``schema``, built on a miss."""
        entry = self._entries.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        result = build(schema)
        if len(self._entries) >= self._size:
            del self._entries[next(iter(self._entries))]
        self._entries[id(schema)] = (schema, result)
        return result


# --- Java regexes and SimpleDateFormat ------------------------------------------------------------------------
def java_regex(pattern: str) -> str:
    """A Java regex in Python syntax (named groups ``(?<n>...)`` -> ``(?P<n>...)``; the rest is shared)."""
    return re.sub(r"\(\?<([A-Za-z][A-Za-z0-9]*)>", r"(?P<\1>", pattern)


def java_replacement(replacement: str) -> Callable[[re.Match[str]], str]:
    """A ``Matcher.replaceFirst`` replacement (``$1``, ``${name}``, ``\\$``) as a function of the match."""
    parts: list[str | int] = []
    i = 0
    literal = []
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\" and i + 1 < len(replacement):
            literal.append(replacement[i + 1])
            i += 2
            continue
        if ch == "$":
            named = re.match(r"\{([A-Za-z][A-Za-z0-9]*)\}", replacement[i + 1:])
            digits = re.match(r"[0-9]+", replacement[i + 1:])
            if named or digits:
                parts.append("".join(literal))
                literal = []
                if named:
                    parts.append("\0" + named.group(1))
                    i += 1 + len(named.group(0))
                else:
                    assert digits is not None
                    parts.append(int(digits.group(0)))
                    i += 1 + len(digits.group(0))
                continue
            raise ValueError("Illegal group reference")
        literal.append(ch)
        i += 1
    parts.append("".join(literal))

    def expand(match: re.Match[str]) -> str:
        out = []
        for part in parts:
            if isinstance(part, int):
                out.append(match.group(part) or "")
            elif part.startswith("\0"):
                out.append(match.group(part[1:]) or "")
            else:
                out.append(part)
        return "".join(out)

    return expand


_DATE_FIELDS = {"y": "year", "M": "month", "d": "day", "H": "hour", "m": "minute", "s": "second", "S": "millis"}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _tokens(pattern: str) -> list[tuple[str, int] | str]:
    tokens: list[tuple[str, int] | str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            end = len(pattern) if end < 0 else end
            tokens.append("'" if end == i + 1 else pattern[i + 1:end])
            i = end + 1
        elif ch.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == ch:
                j += 1
            tokens.append((ch, j - i))
            i = j
        else:
            tokens.append(ch)
            i += 1
    return tokens


def format_date(pattern: str, when: datetime) -> str:
    """``SimpleDateFormat(pattern)`` in UTC for the common letters (y M d H h m s S E a Z X)."""
    when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    out = []
    for token in _tokens(pattern):
        if isinstance(token, str):
            out.append(token)
            continue
        letter, count = token
        out.append(_format_letter(letter, count, when))
    return "".join(out)


def _format_letter(letter: str, count: int, when: datetime) -> str:
    numbers = {"y": when.year, "d": when.day, "H": when.hour, "m": when.minute, "s": when.second,
               "S": when.microsecond // 1000, "h": (when.hour % 12) or 12, "D": when.timetuple().tm_yday,
               "k": when.hour or 24, "K": when.hour % 12}
    if letter == "y":
        return f"{when.year % 100:02d}" if count == 2 else str(when.year).zfill(count)
    if letter == "M":
        if count >= 4:
            return _MONTHS[when.month - 1]
        return _MONTHS[when.month - 1][:3] if count == 3 else str(when.month).zfill(count)
    if letter == "E":
        name = _DAYS[when.weekday()]
        return name if count >= 4 else name[:3]
    if letter == "a":
        return "AM" if when.hour < 12 else "PM"
    if letter in ("Z", "X"):
        return "Z" if letter == "X" else "+0000"
    if letter in numbers:
        return str(numbers[letter]).zfill(count)
    raise ValueError(f"Illegal pattern character '{letter}'")


def parse_date(pattern: str, text: str) -> datetime:
    """``SimpleDateFormat(pattern).parse(text)`` in UTC for numeric fields (y M d H m s S) and literals."""
    regex = []
    names = []
    for token in _tokens(pattern):
        if isinstance(token, str):
            regex.append(re.escape(token))
        elif token[0] in _DATE_FIELDS:
            names.append(_DATE_FIELDS[token[0]])
            regex.append(f"([0-9]{{{token[1]}}})" if token[1] >= 2 else "([0-9]{1,9})")
        elif token[0] in ("Z", "X"):
            regex.append(r"(?:Z|[+-][0-9]{2}:?[0-9]{2})")
        else:
            raise ValueError(f"Unsupported pattern letter {token[0]!r}")
    match = re.fullmatch("".join(regex), text.strip())
    if match is None:
        raise ValueError(f'Unparseable date: "{text}"')
    parts = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "millis": 0}
    parts.update({name: int(value) for name, value in zip(names, match.groups(), strict=True)})
    millis = parts.pop("millis")
    return datetime(**parts, microsecond=millis * 1000, tzinfo=UTC)


def check_date_format(name: str, raw: str | None) -> str | None:
    """Validator: ``raw`` is a SimpleDateFormat pattern with letters this module supports."""
    if raw is None:
        return None
    try:
        format_date(raw, datetime(2000, 1, 1, tzinfo=UTC))
    except ValueError as exc:
        return invalid(name, raw, f"Invalid format: {exc}")
    return None
