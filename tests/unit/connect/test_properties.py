from connect.config.properties import parse_properties


def test_separators_comments_and_continuations() -> None:
    text = """
# a comment
! another comment
bootstrap.servers=127.0.0.1:9092
group.id : connect-cluster
plain value with spaces
listeners=http://127.0.0.1:8083,\\
    http://127.0.0.1:8084
path=C:\\\\temp\\tfile
unicode=caf\\u00e9
empty=
"""
    props = parse_properties(text)
    assert props == {
        "bootstrap.servers": "127.0.0.1:9092",
        "group.id": "connect-cluster",
        "plain": "value with spaces",
        "listeners": "http://127.0.0.1:8083,http://127.0.0.1:8084",
        "path": "C:\\temp\tfile",
        "unicode": "café",
        "empty": "",
    }


def test_later_keys_win() -> None:
    assert parse_properties("a=1\na=2\n") == {"a": "2"}
