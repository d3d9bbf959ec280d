"""``sasl.jaas.config`` parsed as Kafka's ``JaasConfig`` parses it: a ``java.io.StreamTokenizer`` with its default
syntax (``"`` and ``'`` quote, backslash escapes inside quotes, ``/`` starts a comment, numbers are not words) plus
``//`` and ``/* */`` comments and ``-``, ``_``, ``$`` as word characters, then
``<LoginModuleClass> <flag> (<key>=<value>)* ;`` where the flag is required, requisite, sufficient or optional.
A client takes exactly one login module, as Kafka's ``JaasContext.loadClientContext`` requires.

The messages are Kafka's, and never contain an option's value (values are usually secrets).
"""

from __future__ import annotations

from dataclasses import dataclass, field

_EOF = ""
_WORD, _NUMBER, _QUOTED, _CHAR = "word", "number", "quoted", "char"
FLAGS = ("required", "requisite", "sufficient", "optional")
_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


class JaasError(ValueError):
    """``sasl.jaas.config`` is not valid JAAS syntax; the message names the problem, never a value."""


@dataclass(frozen=True)
class LoginModule:
    """One ``AppConfigurationEntry``: the login module class, its control flag and its options."""

    class_name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # options hold passwords: never print them
        return f"LoginModule({self.class_name!r}, {self.flag!r}, options={sorted(self.options)})"


def _is_word(ch: str) -> bool:
    o = ord(ch)
    return (ch.isascii() and ch.isalpha()) or ch in "-_$" or o >= 160


def _is_number(ch: str) -> bool:
    return (ch.isdigit() and ch.isascii()) or ch in ".-"


def tokens(text: str) -> list[tuple[str, str | None]]:
    """``(type, sval)`` pairs as ``StreamTokenizer`` returns them (``sval`` None for numbers and characters)."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ord(ch) <= 32:
            i += 1
        elif _is_number(ch):
            j = i + 1
            if ch == "-" and (j >= n or not (text[j].isdigit() or text[j] == ".")):
                out.append((_CHAR, None))  # a lone '-' is an ordinary character
                i = j
                continue
            seen_dot = ch == "."
            while j < n and ((text[j].isdigit() and text[j].isascii()) or (text[j] == "." and not seen_dot)):
                seen_dot = seen_dot or text[j] == "."
                j += 1
            out.append((_NUMBER, None))
            i = j
        elif _is_word(ch):
            j = i + 1
            while j < n and (_is_word(text[j]) or _is_number(text[j])):
                j += 1
            out.append((_WORD, text[i:j]))
            i = j
        elif ch in "\"'":
            i = _quoted(text, i, out)
        elif ch == "/":
            nxt = text[i + 1] if i + 1 < n else _EOF
            if nxt == "*":
                end = text.find("*/", i + 2)
                if end < 0:
                    return out
                i = end + 2
            else:  # '//' or a lone '/' (the default comment character): to the end of the line
                while i < n and text[i] not in "\r\n":
                    i += 1
        else:
            out.append((_CHAR, ch))
            i += 1
    return out


def _quoted(text: str, start: int, out: list[tuple[str, str | None]]) -> int:
    """A quoted string ends at the matching quote or, as in Java, unterminated at the end of the line."""
    quote, buf, i, n = text[start], [], start + 1, len(text)
    while i < n and text[i] != quote and text[i] not in "\r\n":
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            esc = text[i + 1]
            if "0" <= esc <= "7":
                digits = 1
                limit = 3 if esc <= "3" else 2  # \377 at most, as Java
                while digits < limit and i + 1 + digits < n and "0" <= text[i + 1 + digits] <= "7":
                    digits += 1
                buf.append(chr(int(text[i + 1:i + 1 + digits], 8)))
                i += 1 + digits
            else:
                buf.append(_ESCAPES.get(esc, esc))
                i += 2
        else:
            buf.append(ch)
            i += 1
    out.append((_QUOTED, "".join(buf)))
    return i + 1 if i < n and text[i] == quote else i


def parse(text: str) -> list[LoginModule]:
    """Every login module of a JAAS config string (Kafka's ``JaasConfig``); raises :class:`JaasError`."""
    toks = tokens(text)
    modules: list[LoginModule] = []
    i = 0
    while i < len(toks):
        kind, sval = toks[i]
        if sval is None or kind == _CHAR:
            raise JaasError("Login module not specified in JAAS config")
        if i + 1 >= len(toks):
            raise JaasError("Login module control flag not specified in JAAS config")
        flag = toks[i + 1][1]
        if flag is None or toks[i + 1][0] == _CHAR:
            raise JaasError("Login module control flag not specified in JAAS config")
        if flag.lower() not in FLAGS:
            raise JaasError(f"Invalid login module control flag '{flag}' in JAAS config")
        options: dict[str, str] = {}
        i += 2
        while i < len(toks) and toks[i] != (_CHAR, ";"):
            key = toks[i][1] if toks[i][0] != _CHAR else None
            value = toks[i + 2] if i + 2 < len(toks) else None
            if i + 1 >= len(toks) or toks[i + 1] != (_CHAR, "=") or value is None or value[0] in (_CHAR, _NUMBER):
                raise JaasError(f"Value not specified for key '{key}' in JAAS config")
            options[str(key)] = str(value[1])
            i += 3
        if i >= len(toks):
            raise JaasError("JAAS config entry not terminated by semi-colon")
        modules.append(LoginModule(sval, flag.lower(), options))
        i += 1
    if not modules:
        raise JaasError("Login module not specified in JAAS config")
    return modules


def parse_client(text: str) -> LoginModule:
    """The one login module of a client's ``sasl.jaas.config``."""
    modules = parse(text)
    if len(modules) != 1:
        raise JaasError(f"JAAS config property contains {len(modules)} login modules, should be 1 module")
    return modules[0]


def file_section(text: str, name: str) -> str | None:
    """The entries of section ``name`` of a JAAS file (``Name { <entries> };``), as a ``sasl.jaas.config``
    string; None when the file has no such section. Comments and quoted strings are skipped while looking."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            end = text.find(ch, i + 1)
            i = n if end < 0 else end + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif _is_word(ch):
            j = i
            while j < n and (_is_word(text[j]) or _is_number(text[j])):
                j += 1
            word, k = text[i:j], j
            while k < n and text[k].isspace():
                k += 1
            if k < n and text[k] == "{":
                body_end = _section_end(text, k + 1)
                if word == name:
                    return text[k + 1:body_end]
                i = body_end + 1
            else:
                i = j
        else:
            i += 1
    return None


def _section_end(text: str, start: int) -> int:
    i, n = start, len(text)
    while i < n and text[i] != "}":
        if text[i] in "\"'":
            end = text.find(text[i], i + 1)
            i = n if end < 0 else end + 1
        else:
            i += 1
    if i >= n:
        raise JaasError("JAAS file section not closed by '}'")
    return i
