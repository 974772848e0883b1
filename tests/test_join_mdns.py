"""``nodealer join`` by mDNS joins as soon as the table it wants answers
(issue 27, item 9), not after the whole ``--seconds`` browse. Real
processes, real mDNS, inside a private network namespace this test creates
(``unshare -n``: loopback only, multicast routed on it) - never on a real
interface."""

from __future__ import annotations

import os
import sys

import pytest

from table.verify import verify_log
from tests.test_lan import ROOT, _namespaces_or_skip

BROWSE = 30.0  # the joiner may look this long; it must not need to

SCRIPT = r"""
set -eu
ip link set lo up
ip link set lo multicast on
ip route add 224.0.0.0/4 dev lo
test "$(ip -o link show | wc -l)" = 1   # nothing but loopback in here
export PYTHONPATH="$ROOT"
NODEALER_HOME="$TMP/host" {py} -m tui.cli host bluff --players 2 --interface 127.0.0.1 \
    --nickname Alice --headless --unproven --time-scale 0.05 > "$TMP/host.txt" 2>&1 &
HOST=$!
# the host advertises once its lobby is open
for i in $(seq 200); do grep -q "lobby open" "$TMP/host.txt" && break; sleep 0.05; done
sleep 1
START=$(date +%s.%N)
NODEALER_HOME="$TMP/guest" {py} -m tui.cli join --interface 127.0.0.1 --nickname Bob \
    --headless --time-scale 0.05 --seconds {browse} > "$TMP/guest.txt" 2>&1 &
GUEST=$!
for i in $(seq 1200); do grep -q "^lobby:" "$TMP/guest.txt" && break; sleep 0.05; done
END=$(date +%s.%N)
echo "$START $END" > "$TMP/seated.txt"
wait $GUEST
wait $HOST
"""


@pytest.mark.slow
@pytest.mark.netns
def test_join_by_mdns_takes_the_table_once_it_answers(tmp_path) -> None:
    import subprocess

    _namespaces_or_skip()
    script = SCRIPT.format(py=sys.executable, browse=BROWSE)
    env = {**os.environ, "ROOT": str(ROOT), "TMP": str(tmp_path)}
    run = subprocess.run(
        ["unshare", "-n", "--", "bash", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    outputs = {p.name: p.read_text() for p in tmp_path.glob("*.txt")}
    assert run.returncode == 0, (run.stderr[-2000:], outputs)
    start, end = map(float, outputs["seated.txt"].split())
    took = end - start
    # found and seated in a few seconds (a Python start, an mDNS answer, the
    # lobby), where waiting out the browse took all 30
    assert took < BROWSE / 3, (took, outputs["guest.txt"])
    for name in ("host", "guest"):
        (log,) = (tmp_path / name).glob("tables/*/log")
        assert verify_log(log).exit_code == 0
        assert "verify: clean" in outputs[f"{name}.txt"]
    print(f"join by mDNS seated {took:.2f} s after it started")
