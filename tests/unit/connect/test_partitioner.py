import random

from kafka.partitioner.default import murmur2 as reference_murmur2

from connect.clients import murmur2


def test_murmur2_matches_kafkas_for_every_tail_length() -> None:
    rng = random.Random(7)
    samples = [b"", b"a", b"ab", b"abc", b"abcd", b'{"schema":null,"payload":{"id":"1004"}}']
    samples += [rng.randbytes(rng.randint(0, 300)) for _ in range(500)]
    for data in samples:
        assert murmur2(data) == reference_murmur2(data)


def test_known_java_values() -> None:
    # Values of org.apache.kafka.common.utils.Utils.murmur2 as published in Kafka's UtilsTest.
    assert murmur2(b"21") == (-973932308) & 0xFFFFFFFF
    assert murmur2(b"foobar") == (-790332482) & 0xFFFFFFFF
    assert murmur2(b"a-little-bit-long-string") == (-985981536) & 0xFFFFFFFF
    assert murmur2(b"a-little-bit-longer-string") == (-1486304829) & 0xFFFFFFFF
    assert murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == (-58897971) & 0xFFFFFFFF
    assert murmur2(bytes([ord("a"), ord("b"), ord("c")])) == 479470107
