"""Topic names and schema names of the MongoDB connector: ``topic.naming.strategy`` (Debezium's strategy classes,
named by their Java class names), ``topic.delimiter``, ``topic.cache.size``, ``topic.heartbeat.prefix`` /
``topic.heartbeat.name``, ``topic.transaction`` and ``schema.name.adjustment.mode``.

Behaviour follows Debezium 3.6 (checked against the real connector, see ``compat/debezium/naming.py``):

* Data topics join the non-blank parts ``[topic.prefix, db, collection]`` (the ``Default*`` strategies) or only
  ``[topic.prefix]`` (the ``Schema*`` strategies: a MongoDB collection has no schema parts, so every collection
  goes to one topic) with the delimiter, then replace every UTF-16 unit that is not valid in a topic name: by
  ``_`` (valid: ``[A-Za-z0-9._-]``), or by ``_uXXXX`` in the ``*Unicode*`` strategies (valid: ``[A-Za-z0-9.-]``,
  so ``_`` itself is escaped; the hex digits are Java's ``Integer.toHexString``, padded to four only when they
  are at most two). Names are cut at 249 characters; ``.`` and ``..`` are replaced.
* The ``*Regex*`` strategies rename the sanitised topic with ``topic.regex`` (full match) and
  ``topic.replacement`` (Java replacement syntax, ``$1`` / ``${name}``); an empty result keeps the topic.
* Heartbeat and transaction topics are ``<topic.heartbeat.prefix><delimiter><topic.prefix>`` (or
  ``topic.heartbeat.name``) and ``<topic.prefix><delimiter><topic.transaction>``, not sanitised (their parts are
  validated instead).
* Key and envelope schema names are ``<topic>.Key`` and ``<topic>.Envelope`` passed through the schema name
  adjuster: ``none`` keeps them; ``avro`` replaces characters not valid in an Avro full name by ``_`` (a leading
  digit ``d`` becomes ``_d``); ``avro_unicode`` replaces them, and ``_``, by ``_uXXXX``. The fixed schema names
  (source, update description, transaction, heartbeat) are valid Avro names, which no mode changes.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from threading import Lock

from connect.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValue

__all__ = [
    "NAMING_DEF",
    "STRATEGIES",
    "SchemaNameAdjustment",
    "TopicNaming",
    "adjust_field_name_unicode",
    "adjust_schema_name",
    "java_replacement",
    "sanitize_topic",
    "validate_naming",
]

PACKAGE = "io.debezium.schema."
DEFAULT_STRATEGY = PACKAGE + "DefaultTopicNamingStrategy"


@dataclass(frozen=True)
class _Strategy:
    schema_parts_only: bool
    unicode: bool
    regex: bool


STRATEGIES: Mapping[str, _Strategy] = {
    PACKAGE + "DefaultTopicNamingStrategy": _Strategy(False, False, False),
    PACKAGE + "DefaultUnicodeTopicNamingStrategy": _Strategy(False, True, False),
    PACKAGE + "DefaultRegexTopicNamingStrategy": _Strategy(False, False, True),
    PACKAGE + "SchemaTopicNamingStrategy": _Strategy(True, False, False),
    PACKAGE + "SchemaUnicodeTopicNamingStrategy": _Strategy(True, True, False),
    PACKAGE + "SchemaRegexTopicNamingStrategy": _Strategy(True, False, True),
}
"""The strategy classes of Debezium 3.6 that apply to MongoDB, by class name."""


class SchemaNameAdjustment(StrEnum):
    """``schema.name.adjustment.mode``."""

    NONE = "none"
    AVRO = "avro"
    AVRO_UNICODE = "avro_unicode"


MAX_TOPIC_LENGTH = 249
_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_UNICODE_TOPIC_CHARS = _TOPIC_CHARS - {"_"}
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_AVRO_FIRST = _LETTERS | {"_"}
_AVRO_REST = _AVRO_FIRST | frozenset(".0123456789")
_AVRO_UNICODE_REST = _LETTERS | frozenset(".0123456789")


def _utf16_units(text: str) -> list[str]:
    """``text`` as Java sees it: one entry per UTF-16 code unit (a non-BMP character gives two surrogates)."""
    units: list[str] = []
    for ch in text:
        code = ord(ch)
        if code < 0x10000:
            units.append(ch)
        else:
            code -= 0x10000
            units.extend((chr(0xD800 + (code >> 10)), chr(0xDC00 + (code & 0x3FF))))
    return units


def _unicode_escape(unit: str) -> str:
    digits = format(ord(unit), "x")
    return "_u" + ("00" + digits if len(digits) <= 2 else digits)


def sanitize_topic(name: str, unicode: bool = False) -> str:
    """``name`` with the characters not valid in a Kafka topic replaced (``_`` or, with ``unicode``, ``_uXXXX``)."""
    valid = _UNICODE_TOPIC_CHARS if unicode else _TOPIC_CHARS
    if all(ch in valid for ch in name):
        out = name
    else:
        out = "".join(u if u in valid else (_unicode_escape(u) if unicode else "_") for u in _utf16_units(name))
    if len(out) > MAX_TOPIC_LENGTH:
        return out[:MAX_TOPIC_LENGTH]
    if out in (".", ".."):
        return out.replace(".", _unicode_escape(".") if unicode else "_")
    return out


def adjust_schema_name(name: str, mode: SchemaNameAdjustment) -> str:
    """``name`` made a valid Avro full name as ``schema.name.adjustment.mode`` says (unchanged for ``none``)."""
    if mode is SchemaNameAdjustment.NONE or not name:
        return name
    unicode = mode is SchemaNameAdjustment.AVRO_UNICODE
    first = _LETTERS if unicode else _AVRO_FIRST
    rest = _AVRO_UNICODE_REST if unicode else _AVRO_REST
    if name[0] in first and all(ch in rest for ch in name[1:]):
        return name
    units = _utf16_units(name)
    head = units[0]
    if head in first:
        out = [head]
    elif unicode:
        out = [_unicode_escape(head)]
    else:
        out = ["_" + head] if head.isdecimal() else ["_"]
    out.extend(u if u in rest else (_unicode_escape(u) if unicode else "_") for u in units[1:])
    return "".join(out)


_FIELD_UNICODE_REST = _LETTERS | frozenset("0123456789")


def adjust_field_name_unicode(name: str) -> str:
    """Debezium's ``avro_unicode`` field namer: ``[A-Za-z][A-Za-z0-9]*``, every other UTF-16 unit (``_`` and
    ``.`` included) replaced by ``_uXXXX``."""
    if not name or (name[0] in _LETTERS and all(ch in _FIELD_UNICODE_REST for ch in name[1:])):
        return name
    units = _utf16_units(name)
    return "".join(u if (u in _FIELD_UNICODE_REST if i else u in _LETTERS) else _unicode_escape(u)
                   for i, u in enumerate(units))


_JAVA_GROUP = re.compile(r"\\(.)|\$(\d+|\{([A-Za-z][A-Za-z0-9]*)\})", re.DOTALL)


def java_replacement(template: str) -> str:
    """A ``java.util.regex`` replacement string (``$1``, ``${name}``, ``\\$``) in :func:`re.sub`'s syntax."""
    def convert(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return "\\\\" if match.group(1) == "\\" else match.group(1)
        return f"\\g<{match.group(3) or match.group(2)}>"
    pieces: list[str] = []
    last = 0
    for match in _JAVA_GROUP.finditer(template):
        pieces.append(template[last:match.start()].replace("\\", "\\\\"))
        pieces.append(convert(match))
        last = match.end()
    pieces.append(template[last:].replace("\\", "\\\\"))
    return "".join(pieces)


class TopicNaming:
    """One connector's topic and schema names (a ``TopicNamingStrategy`` plus the schema name adjuster)."""

    def __init__(self, prefix: str, *, strategy: str = DEFAULT_STRATEGY, delimiter: str = ".",
                 cache_size: int = 10_000, transaction: str = "transaction",
                 heartbeat_prefix: str = "__debezium-heartbeat", heartbeat_name: str | None = None,
                 regex: str | None = None, replacement: str | None = None,
                 adjustment: SchemaNameAdjustment = SchemaNameAdjustment.NONE) -> None:
        self.prefix = prefix
        self.strategy = STRATEGIES[strategy]
        self.delimiter = delimiter
        self.adjustment = adjustment
        self.transaction_topic = delimiter.join((prefix, transaction))
        self.heartbeat_topic = heartbeat_name or delimiter.join((heartbeat_prefix, prefix))
        self._regex = re.compile(regex) if self.strategy.regex and regex else None
        self._replacement = java_replacement(replacement or "")
        self._cache_size = max(cache_size, 1)
        self._topics: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = Lock()

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> TopicNaming:
        """The naming of an already validated connector config."""
        return cls(
            props["topic.prefix"],
            strategy=(props.get("topic.naming.strategy") or DEFAULT_STRATEGY).strip(),
            delimiter=props.get("topic.delimiter") or ".",
            cache_size=int(props.get("topic.cache.size") or 10_000),
            transaction=props.get("topic.transaction") or "transaction",
            heartbeat_prefix=props.get("topic.heartbeat.prefix") or "__debezium-heartbeat",
            heartbeat_name=props.get("topic.heartbeat.name") or None,
            regex=props.get("topic.regex") or None,
            replacement=props.get("topic.replacement"),
            adjustment=SchemaNameAdjustment((props.get("schema.name.adjustment.mode") or "none").strip().lower()),
        )

    def data_topic(self, db: str, coll: str) -> str:
        """The topic of collection ``db.coll``."""
        key = (db, coll)
        topic = self._topics.get(key)
        if topic is None:
            topic = self._compute(db, coll)
            with self._lock:
                self._topics[key] = topic
                if len(self._topics) > self._cache_size:
                    self._topics.popitem(last=False)
        return topic

    def schema_name(self, topic: str, suffix: str) -> str:
        """The adjusted name of the ``Key`` or ``Envelope`` schema of ``topic``."""
        return adjust_schema_name(f"{topic}.{suffix}", self.adjustment)

    def _compute(self, db: str, coll: str) -> str:
        parts = (self.prefix,) if self.strategy.schema_parts_only else (self.prefix, db, coll)
        joined = self.delimiter.join(p for p in parts if p.strip(_JAVA_BLANK))
        topic = sanitize_topic(joined, self.strategy.unicode)
        if self._regex is not None and self._regex.fullmatch(topic):
            renamed = self._regex.sub(self._replacement, topic, count=1)
            return renamed or topic
        return topic


_JAVA_BLANK = "".join(chr(c) for c in range(0x21))
"""What Java's ``String.trim`` removes (``Strings.isNullOrBlank``)."""


# -- configuration keys -------------------------------------------------------------------------------------------
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9_.\-]+$")


def _topic_part(_name: str, value: str) -> str | None:
    if _TOPIC_NAME.match(value):
        return None
    return f"{value} has invalid format (only the underscore, hyphen, dot and alphanumeric characters are allowed)"


def _optional_topic_part(name: str, value: str) -> str | None:
    return _topic_part(name, value) if value else None


def _strategy(name: str, value: str) -> str | None:
    if value.strip() in STRATEGIES:
        return None
    return (f"Invalid value {value} for configuration {name}: Class {value} could not be found "
            f"(supported: {', '.join(STRATEGIES)})")


def _adjustment(_name: str, value: str) -> str | None:
    allowed = [m.value for m in SchemaNameAdjustment]
    return None if value.strip().lower() in allowed else f"Value must be one of {', '.join(allowed)}"


def _regex(_name: str, value: str) -> str | None:
    try:
        re.compile(value)
    except re.error as exc:
        return f"A valid regular expression is expected, but {value} is not: {exc}"
    return None


def _positive(_name: str, value: str) -> str | None:
    return None if int(value) > 0 else "A positive, non-zero integer value is expected"


def _key(name: str, type_: ConfigType = ConfigType.STRING, default: str | None = None, *, order: int, doc: str,
         validators: tuple[Callable[[str, str], str | None], ...] = ()) -> ConfigKey:
    return ConfigKey(name, type_, default, False, "LOW", doc, "Connector", order, "MEDIUM", name, validators)


NAMING_DEF = ConfigDef((
    _key("topic.naming.strategy", ConfigType.CLASS, DEFAULT_STRATEGY, order=60, validators=(_strategy,),
         doc="The TopicNamingStrategy class naming the data, heartbeat and transaction topics: one of "
             + ", ".join(STRATEGIES) + "."),
    _key("topic.delimiter", default=".", order=61, validators=(_topic_part,),
         doc="Delimiter between topic name parts."),
    _key("topic.cache.size", ConfigType.INT, "10000", order=62, validators=(_positive,),
         doc="Number of topic names kept in the bounded cache of the naming strategy."),
    _key("topic.heartbeat.prefix", default="__debezium-heartbeat", order=63, validators=(_topic_part,),
         doc="Prefix of the heartbeat topic, <prefix><topic.delimiter><topic.prefix>."),
    _key("topic.heartbeat.name", order=64, validators=(_optional_topic_part,),
         doc="Full name of the heartbeat topic; overrides topic.heartbeat.prefix (connectors may share it)."),
    _key("topic.transaction", default="transaction", order=65, validators=(_topic_part,),
         doc="Name of the transaction metadata topic after the topic prefix: "
             "<topic.prefix><topic.delimiter><topic.transaction>."),
    _key("topic.regex", order=66, validators=(_regex,),
         doc="Regex strategies: the regular expression matched (full match) against the data topic name."),
    _key("topic.replacement", order=67,
         doc="Regex strategies: the replacement ($1, ${name}) giving the new topic name when topic.regex matches."),
    _key("schema.name.adjustment.mode", default=SchemaNameAdjustment.NONE.value, order=68,
         validators=(_adjustment,),
         doc="How key and envelope schema names are adjusted for Avro: none, avro (invalid characters become _) or "
             "avro_unicode (invalid characters and _ become _uXXXX)."),
))


def validate_naming(props: Mapping[str, str], by_name: dict[str, ConfigValue]) -> None:
    """Cross-key checks of the naming keys, appended to ``by_name``."""
    strategy = STRATEGIES.get((props.get("topic.naming.strategy") or DEFAULT_STRATEGY).strip())
    if strategy is None or not strategy.regex:
        return
    if not (props.get("topic.regex") or "").strip():
        by_name["topic.regex"].errors.append(
            f"A value is required by {props.get('topic.naming.strategy', '').strip()}")
    elif not (props.get("topic.replacement") or "").strip():
        by_name["topic.replacement"].errors.append("topic.replacement must be non-empty if topic.regex is set.")
