"""Record how each Debezium release's MongoDB Java driver writes doubles in Extended JSON (the ``after``/``before``
/``updateDescription``/key text of Debezium's records) into ``tests/unit/mongodb/golden/driver_doubles.tsv``: the
edges (zeros, subnormals, the limits, NaN and the infinities, Java's plain/scientific boundaries, whole numbers,
every power of ten) and a few thousand random bit patterns, each in RELAXED and STRICT mode, per release. The first
line names the releases, their drivers and the JDK (whose ``Double.toString`` picks the digits).

    python -m compat.debezium.doubles [--out PATH]

The unit test ``tests/unit/mongodb/test_driver_doubles.py`` checks the compiled writer against it.
"""

from __future__ import annotations

import random
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from compat.debezium import releases
from stack import procs

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "unit" / "mongodb" / "golden" / "driver_doubles.tsv"


def corpus() -> list[float]:
    """The doubles recorded: the edges, the powers of ten, then random bit patterns (fixed seed)."""
    edges = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 10.0, 100.0, 3.25, 1e-3, 9.999e-4, 1e-4, 1e6, 9999999.0, 1e7,
             12345678.0, 1e15, 1e16, 1e17, 2.0 ** 53, 2.0 ** 63, 1e21, 1e22, 1e23, 1e300, 1.5e300, -1.5e300, 1e-300,
             1e-7, -1e-7, 1.7976931348623157e308, 2.2250738585072014e-308, 2.225073858507201e-308, 5e-324,
             float("nan"), float("inf"), float("-inf")]
    powers = [float(f"{mantissa}e{exponent}") for exponent in range(-325, 310) for mantissa in ("1", "1.2345")]
    rng = random.Random(20261125)
    randoms = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    return edges + powers + randoms


def bits(value: float) -> str:
    return f"{struct.unpack('<Q', struct.pack('<d', value))[0]:016x}"


def driver_json(release: str, values: list[float]) -> list[str]:
    """``<bits>\\t<relaxed>\\t<strict>`` per value, by the driver ``release`` bundles."""
    plugin = releases.plugin_path(release) / "debezium-connector-mongodb"
    source = Path(__file__).with_name("DriverDoubles.java")
    javac = str(Path(procs.java()).resolve().with_name("javac"))
    with tempfile.TemporaryDirectory(prefix="driver-doubles-") as tmp:
        subprocess.run([javac, "-d", tmp, "-cp", f"{plugin}/*", str(source)], check=True, timeout=120)
        result = subprocess.run([procs.java(), "-cp", f"{plugin}/*:{tmp}", "DriverDoubles"],
                                input="".join(bits(v) + "\n" for v in values), capture_output=True, text=True,
                                check=True, timeout=300)
    return result.stdout.splitlines()


def record(out: Path) -> int:
    values = corpus()
    columns = {release: driver_json(release, values) for release in releases.available()}
    produced = ", ".join(f"Debezium {r} (MongoDB Java driver {releases.driver_version(r)})" for r in columns)
    header = (f"# recorded_with: {produced}, on {releases.java_version()}\n"
              "# bits\t" + "\t".join(f"{r} relaxed\t{r} strict" for r in columns) + "\n")
    rows = []
    for index, value in enumerate(values):
        cells = [columns[r][index].split("\t") for r in columns]
        assert all(c[0] == bits(value) for c in cells)
        rows.append("\t".join([bits(value), *(part for c in cells for part in c[1:])]) + "\n")
    out.write_text(header + "".join(rows))
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    from compat.debezium import harness
    return harness.record_main(argv, __doc__, GOLDEN, record, "doubles", minimum=1000)


if __name__ == "__main__":
    sys.exit(main())
