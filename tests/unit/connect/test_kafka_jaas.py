"""``sasl.jaas.config`` parsed as Kafka's ``JaasConfig`` (a ``java.io.StreamTokenizer``) parses it."""

from __future__ import annotations

import pytest

from connect.kafka_clients.jaas import JaasError, file_section, parse, parse_client

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.mark.parametrize(("text", "module", "flag", "options"), [
    (f'{PLAIN} required username="alice" password="alice-secret";', PLAIN, "required",
     {"username": "alice", "password": "alice-secret"}),
    # unquoted values: words may hold digits, dots and dashes after their first letter
    (f"{PLAIN} required username=alice password=s3cr.et-x;", PLAIN, "required",
     {"username": "alice", "password": "s3cr.et-x"}),
    # single quotes, whitespace and new lines anywhere
    (f"\n  {PLAIN}\n\tREQUIRED\n username = 'bob'\n password='p w';\n", PLAIN, "required",
     {"username": "bob", "password": "p w"}),
    # escapes inside quotes: \" \\ \n \t and octal, as StreamTokenizer reads them
    (f'{PLAIN} required username="a\\"b" password="c\\\\d\\n\\t\\101\\0";', PLAIN, "required",
     {"username": 'a"b', "password": "c\\d\n\tA\x00"}),
    # an unknown escape keeps the character; '=' and ';' inside quotes are text
    (f'{PLAIN} optional username="x\\qy" password="a=b;c";', PLAIN, "optional",
     {"username": "xqy", "password": "a=b;c"}),
    # comments: // to the end of the line, /* */, and a lone '/' (StreamTokenizer's comment character)
    (f"/* c */ {PLAIN} sufficient // why\n username=\"u\" /* x */ password=\"p\";", PLAIN, "sufficient",
     {"username": "u", "password": "p"}),
    # several options, '$' and '_' in keys, the last of a repeated key wins
    ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule requisite clientId=\"id\" "
     "clientSecret=\"s\" scope=\"a b\" extension_trace_id=\"t\" $x=y k=\"1\" k=\"2\";",
     "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", "requisite",
     {"clientId": "id", "clientSecret": "s", "scope": "a b", "extension_trace_id": "t", "$x": "y", "k": "2"}),
    # a quoted string runs to the end of the line when its quote is missing, as in Java
    (f'{PLAIN} required username="alice\n;', PLAIN, "required", {"username": "alice"}),
    # non-ASCII letters are word characters
    (f"{PLAIN} required username=héloïse password=\"ü\";", PLAIN, "required",
     {"username": "héloïse", "password": "ü"}),
])
def test_valid(text: str, module: str, flag: str, options: dict[str, str]) -> None:
    parsed = parse_client(text)
    assert (parsed.class_name, parsed.flag, parsed.options) == (module, flag, options)


@pytest.mark.parametrize(("text", "message"), [
    ("", "Login module not specified in JAAS config"),
    ("   // only a comment", "Login module not specified in JAAS config"),
    (PLAIN, "Login module control flag not specified in JAAS config"),
    (f"{PLAIN} mandatory username=\"a\";", "Invalid login module control flag 'mandatory' in JAAS config"),
    (f'{PLAIN} required username "a";', "Value not specified for key 'username' in JAAS config"),
    (f"{PLAIN} required username=;", "Value not specified for key 'username' in JAAS config"),
    (f"{PLAIN} required username=", "Value not specified for key 'username' in JAAS config"),
    # an unquoted value starting with a digit is a number to StreamTokenizer, not a word
    (f"{PLAIN} required username=a password=123abc;", "Value not specified for key 'password' in JAAS config"),
    (f'{PLAIN} required username="a" password="b"', "JAAS config entry not terminated by semi-colon"),
    (f'{PLAIN} required username="a"; {PLAIN} required username="b";',
     "JAAS config property contains 2 login modules, should be 1 module"),
    ("; x required;", "Login module not specified in JAAS config"),
])
def test_invalid(text: str, message: str) -> None:
    with pytest.raises(JaasError) as caught:
        parse_client(text)
    assert str(caught.value) == message


def test_several_modules_parse_for_a_jaas_file() -> None:
    modules = parse(f'{PLAIN} required username="a"; {PLAIN} optional;')
    assert [(m.flag, m.options) for m in modules] == [("required", {"username": "a"}), ("optional", {})]


def test_repr_hides_option_values() -> None:
    module = parse_client(f'{PLAIN} required username="alice" password="top-secret";')
    assert "top-secret" not in repr(module) and "alice" not in repr(module) and "password" in repr(module)


def test_a_jaas_file_section() -> None:
    text = ('// the broker\'s and the client\'s logins\nKafkaServer {\n  ' + PLAIN + ' required username="admin" '
            'password="x}y";\n};\n/* KafkaClient { not this one }; */\nKafkaClient {\n  ' + PLAIN +
            ' required\n  username="alice"\n  password="alice-secret";\n};\n')
    section = file_section(text, "KafkaClient")
    assert section is not None
    assert parse_client(section).options == {"username": "alice", "password": "alice-secret"}
    assert file_section(text, "Client") is None
    with pytest.raises(JaasError, match="not closed"):
        file_section("KafkaClient { x required;", "KafkaClient")
