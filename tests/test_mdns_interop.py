"""What ``nodealer host`` advertises is seen by the DNS-SD clients people
already have (issue 30): ``dig`` asking the host's address directly (legacy
unicast, RFC 6762 §6.7) for the PTR, then the SRV, TXT and A records, and
``avahi-browse`` where it is installed (macOS's ``dns-sd`` cannot run here).
Only inside network namespaces this test makes: a "host" and a "guest"
joined by a veth pair with link-local addresses; in the second test the host
has a second network (as a laptop with Docker or a VPN), named to sort
first, and must still advertise on the one multicast leaves by."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p2p.wire import PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.netns]


def _namespaces_or_skip() -> None:
    if sys.platform != "linux" or not shutil.which("ip") or os.geteuid() != 0:
        pytest.skip("needs Linux and root to make named network namespaces (ip netns)")
    if not shutil.which("dig"):
        pytest.skip("needs dig (dnsutils) for the legacy unicast queries")


NETWORK = r"""
set -eu
cleanup() {{ for ns in "$A" "$B" "$C"; do ip netns del "$ns" 2>/dev/null || true; done; }}
trap cleanup EXIT
for ns in "$A" "$B" "$C"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
# the party's network: host (A) to guest (B), link-local addresses
ip link add "${{T}}z" netns "$A" type veth peer name "${{T}}g" netns "$B"
ip -n "$A" addr add 169.254.77.1/24 dev "${{T}}z"
ip -n "$B" addr add 169.254.77.2/24 dev "${{T}}g"
ip -n "$A" link set "${{T}}z" up multicast on
ip -n "$B" link set "${{T}}g" up multicast on
ip -n "$B" route add 224.0.0.0/4 dev "${{T}}g"
{second}
ip -n "$A" route add 224.0.0.0/4 dev "${{T}}z"
export PYTHONPATH="$ROOT"
ip netns exec "$A" env NODEALER_HOME="$TMP/host" {py} -m tui.cli host bluff --players 2 \
    {interface} --nickname Alice --headless --unproven --time-scale 0.05 \
    > "$TMP/host.txt" 2>&1 &
HOST=$!
for _ in $(seq 100); do grep -q "lobby open" "$TMP/host.txt" && break; sleep 0.1; done
sleep 2  # the advert's probing and announcing
q() {{ ip netns exec "$B" dig +time=3 +tries=2 +short -p 5353 @169.254.77.1 "$@"; }}
PTR=$(q -t PTR _nodealer._tcp.local | head -1)
echo "PTR $PTR"
echo "SRV $(q -t SRV "$PTR")"
echo "TXT $(q -t TXT "$PTR")"
TARGET=$(q -t SRV "$PTR" | awk '{{print $4}}')
echo "A $(q -t A "$TARGET")"
if command -v avahi-browse >/dev/null; then
    AVAHI=$(ip netns exec "$B" timeout 10 avahi-browse -rtp _nodealer._tcp 2>&1 || true)
    echo "AVAHI $(echo "$AVAHI" | tr '\n' ' ')"
fi
echo "TABLES $(ip netns exec "$B" env NODEALER_HOME="$TMP/guest" {py} -m tui.cli tables \
    --seconds 3 2>&1 | tr '\n' ' ')"
kill "$HOST"
wait "$HOST" || true
"""

# a second network on the host, its interface named to sort before the party's
DOCKER_LIKE = r"""
ip link add "${{T}}a" netns "$A" type veth peer name "${{T}}c" netns "$C"
ip -n "$A" addr add 172.31.9.1/24 dev "${{T}}a"
ip -n "$C" addr add 172.31.9.2/24 dev "${{T}}c"
ip -n "$A" link set "${{T}}a" up multicast on
ip -n "$C" link set "${{T}}c" up
"""


def _run(tmp_path: Path, *, second: str, interface: str) -> dict[str, str]:
    tag = f"ndi{os.getpid() % 100000}"
    env = {**os.environ, "ROOT": str(ROOT), "TMP": str(tmp_path), "T": tag,
           "A": f"{tag}A", "B": f"{tag}B", "C": f"{tag}C"}  # fmt: skip
    script = NETWORK.format(py=sys.executable, second=second.format(), interface=interface)
    run = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert tag not in listed, "the namespaces were deleted"
    host = (tmp_path / "host.txt").read_text() if (tmp_path / "host.txt").exists() else ""
    assert run.returncode == 0, (run.stdout, run.stderr[-2000:], host[-2000:])
    out = {}
    for line in run.stdout.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    out["host"] = host
    return out


def _port(host_output: str) -> str:
    found = re.search(r"lobby open on \S+:(\d+)", host_output)
    assert found, host_output
    return found.group(1)


def test_dig_asks_the_host_directly_for_ptr_srv_txt_and_a(tmp_path: Path) -> None:
    _namespaces_or_skip()
    got = _run(tmp_path, second="", interface="--interface 169.254.77.1")
    assert got["PTR"] == "Alice's\\032Bluff\\032table._nodealer._tcp.local.", got
    priority, weight, port, target = got["SRV"].split()
    assert (priority, weight, port) == ("0", "0", _port(got["host"]))
    assert target.startswith("nodealer-") and target.endswith(".local."), got
    txt = got["TXT"]
    version = f'"v={PROTOCOL_VERSION}"'
    for item in ('"txtvers=1"', version, '"game=bluff"', '"seats=1/2"', '"hn=Alice"'):
        assert item in txt, txt
    assert re.search(r'"fp=[A-Z2-7]{4}(-[A-Z2-7]{4}){3}"', txt), txt
    assert got["A"] == "169.254.77.1"
    assert "Alice's Bluff table: bluff 1/2 seats" in got["TABLES"], got


def test_avahi_browse_sees_the_table(tmp_path: Path) -> None:
    _namespaces_or_skip()
    if not shutil.which("avahi-browse"):
        pytest.skip("avahi-browse is not installed (avahi-utils)")
    got = _run(tmp_path, second="", interface="--interface 169.254.77.1")
    # avahi-browse needs its daemon (over D-Bus) in the guest's namespace
    if "Daemon not running" in got["AVAHI"] or "D-Bus" in got["AVAHI"]:
        pytest.skip(f"avahi-browse is installed but cannot run here: {got['AVAHI'].strip()}")
    assert "_nodealer._tcp" in got["AVAHI"] and "169.254.77.1" in got["AVAHI"], got


def test_a_host_with_two_networks_advertises_on_the_one_multicast_leaves_by(
    tmp_path: Path,
) -> None:
    # the other network's interface sorts first (docker0 before wlan0): the
    # advert, and the --connect address the host prints, must be the party's
    _namespaces_or_skip()
    got = _run(tmp_path, second=DOCKER_LIKE, interface="")
    assert got["A"] == "169.254.77.1", got
    assert "Alice's Bluff table: bluff 1/2 seats" in got["TABLES"], got
    assert f"nodealer join --connect 169.254.77.1:{_port(got['host'])}" in got["host"]
