"""The REST side-by-side check (compat/rest_side_by_side.py) as a test: the same requests against Apache Kafka
Connect 4.3.1 and our worker give the same status codes, JSON keys, values (all but the run-specific ones listed in
``RUN_SPECIFIC``) and ``Location``/``Content-Type`` headers, apart from the documented differences.

Starts the reference Kafka Connect (Java, ~10-20 s) and one worker of ours on the session's Kafka broker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.rest_side_by_side import render, run_comparison
from stack import StackEndpoints

pytestmark = pytest.mark.integration


def test_same_status_codes_and_keys_as_java_connect(stack: StackEndpoints, tmp_path: Path) -> None:
    outcomes = run_comparison(stack.kafka_bootstrap, work_dir=tmp_path)
    report = render(outcomes)
    print(report)
    assert not [o for o in outcomes if o.failed], report
