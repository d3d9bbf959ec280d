"""The compiled writer (``converters._jackson``) against the pure-Python reference (``dumps_reference``): random
JSON-ready trees with text of every kind of character, 64-bit ints, pre-serialized JSON, and what it refuses."""

from __future__ import annotations

import random
from typing import Any

import pytest

from converters.json_writer import RawText, dumps_jackson, dumps_reference

POOLS = [(0x20, 0x7E)] * 6 + [(0x00, 0x1F), (0x7F, 0xFF), (0x100, 0x2FFF), (0x3000, 0xD7FF), (0xE000, 0xFFFF),
                              (0x10000, 0x10FFFF)]


def _text(rng: random.Random) -> str:
    chars = []
    for _ in range(rng.randint(0, 30)):
        lo, hi = rng.choice(POOLS)
        chars.append(chr(rng.randint(lo, hi)))
    chars += rng.sample(['"', "\\", "\n", "\t", "\b", "\f", "\r", "/", "\u2028", "😀", "é", "\\u001f"], k=3)
    rng.shuffle(chars)
    return "".join(chars)


def _tree(rng: random.Random, depth: int) -> tuple[Any, Any]:
    """A tree for the compiled writer and the same for the reference (raw text as bytes / RawText)."""
    pick = rng.random()
    if depth > 0 and pick < 0.2:
        pairs = [(_text(rng), _tree(rng, depth - 1)) for _ in range(rng.randint(0, 6))]
        return {k: v[0] for k, v in pairs}, {k: v[1] for k, v in pairs}
    if depth > 0 and pick < 0.35:
        items = [_tree(rng, depth - 1) for _ in range(rng.randint(0, 6))]
        return [i[0] for i in items], [i[1] for i in items]
    if pick < 0.6:
        text = _text(rng)
        return text, text
    if pick < 0.8:
        number = rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-(2**63), 2**63 - 1), rng.randint(-99, 99)])
        return number, number
    if pick < 0.9:
        raw = rng.choice([b"1.0E10", b"-0.0", b"4.9E-324", b'{"a":[1,"x"]}', b"123.456"])
        return raw, RawText(raw)
    flag = rng.choice([True, False, None])
    return flag, flag


@pytest.mark.parametrize("seed", range(20))
def test_random_trees_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        fast, reference = _tree(rng, 4)
        assert dumps_jackson(fast) == dumps_reference(reference)


@pytest.mark.parametrize("tree", ["\ud800", {"a": "x\udfff"}, 2**63, [-(2**63) - 1], 1.5, {1: 2}, {"a": object()}])
def test_what_only_the_reference_writes_is_refused(tree: Any) -> None:
    with pytest.raises((ValueError, TypeError, OverflowError)):
        dumps_jackson(tree)
