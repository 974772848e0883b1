"""The conformance vector (tests/vectors/): a saved log and the verdict a
verifier written from protocol.md must reach (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

from table.verify import verify_log

VECTORS = Path(__file__).resolve().parent / "vectors"


def test_the_vector_verifies_to_its_recorded_verdict() -> None:
    report = verify_log(VECTORS / "bluff-2-proven.log")
    expected = json.loads((VECTORS / "bluff-2-proven.json").read_text())
    got = report.to_json()
    got["log"] = expected["log"]
    assert got == expected


def test_every_flipped_byte_is_caught(tmp_path) -> None:
    data = (VECTORS / "bluff-2-proven.log").read_bytes()
    for at in range(0, len(data), 97):
        bad = bytearray(data)
        bad[at] ^= 0x5A
        path = tmp_path / "flipped.log"
        path.write_bytes(bytes(bad))
        assert verify_log(path).exit_code in (1, 2), at
