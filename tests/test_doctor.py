"""``nodealer doctor``: each check says what it saw and, when something is
wrong, what to do, in English and Chinese. The whole command runs only inside
network namespaces this test makes (it sends mDNS): one like a machine on
its own (loopback with multicast routed), one with no multicast route, and
one where the game port is taken or dropped by a firewall rule."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p2p import doctor
from p2p.doctor import FAIL, NOTE, OK, WARN, Finding
from p2p.identity import Identity
from tui import words
from tui.doctor import line, summary

ROOT = Path(__file__).resolve().parent.parent


def _strings(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def test_every_sentence_doctor_can_say_has_chinese_words() -> None:
    tree = ast.parse((ROOT / "p2p" / "doctor.py").read_text(encoding="utf-8"))
    said: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding":
            said += [s for arg in node.args[2:4] if (s := _strings(arg)) is not None]
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_todo"):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Return) and sub.value is not None:
                    said += [s for s in [_strings(sub.value)] if s is not None]
    assert len(said) > 40
    missing = [s for s in said if not words.known(s)]
    assert not missing, missing


def test_a_line_says_the_check_what_it_saw_and_what_to_do() -> None:
    bad = Finding("port", FAIL, "TCP port {port} is in use by another program",
                  "host with another --port, or leave --port out (any free port)",
                  {"port": 4567})  # fmt: skip
    assert line(bad) == ("FAIL game port: TCP port 4567 is in use by another program — what "
                         "to do: host with another --port, or leave --port out (any free port)")
    assert line(bad, "zh") == ("FAIL 游戏端口: TCP 端口 4567 被别的程序占用了 — 怎么办: "
                               "开桌时换一个 --port，或不写 --port（任选空闲端口）")  # fmt: skip
    good = Finding("firewall", OK, "no ufw or firewalld here")
    assert line(good) == "ok   firewall: no ufw or firewalld here"
    assert summary([good]) == "all is well for a LAN party"
    assert summary([good, bad, Finding("home", WARN, "x")]) == (
        "1 failed, 1 to look at: fix the first FAIL first")


def test_the_firewall_advice_is_the_os_own(tmp_path: Path) -> None:
    lan = "10.1.2.0/24"
    assert doctor.firewall(lan, "Windows", tmp_path).status == NOTE
    assert "Private networks" in doctor.firewall(lan, "Windows", tmp_path).todo
    assert "Allow" in doctor.firewall(None, "Darwin", tmp_path).todo
    assert doctor.firewall(lan, "Linux", tmp_path).status == OK
    (tmp_path / "etc" / "firewalld").mkdir(parents=True)
    found = doctor.firewall(lan, "Linux", tmp_path)
    assert found.status == NOTE and line(found).endswith("--zone=trusted --add-source=10.1.2.0/24")
    (tmp_path / "etc" / "ufw").mkdir()
    (tmp_path / "etc" / "ufw" / "ufw.conf").write_text("# ufw\nENABLED=yes\n")
    found = doctor.firewall(lan, "Linux", tmp_path)
    assert found.status == WARN
    assert line(found) == (
        "WARN firewall: ufw is on: it stops the others' connections and mDNS — what to do: let "
        "the party's network in: sudo ufw allow from 10.1.2.0/24 (afterwards: sudo ufw delete "
        "allow from 10.1.2.0/24)")
    assert "192.168.1.0/24" in line(doctor.firewall(None, "Linux", tmp_path))  # an example


def test_the_home_folder_privacy(tmp_path: Path) -> None:
    config, data = tmp_path / "cfg", tmp_path / "data"
    assert doctor.home_privacy(config, data).status == OK  # no key yet: made private later
    Identity.load_or_create(config)
    assert doctor.home_privacy(config, data).status == OK
    os.chmod(config, 0o755)
    found = doctor.home_privacy(config, data)
    assert found.status == WARN and f"chmod 700 {config}" in line(found)
    os.chmod(config / "identity.key", 0o644)
    found = doctor.home_privacy(config, data)
    assert found.status == FAIL and "chmod 600" in line(found)


def test_the_python_line_names_the_libraries() -> None:
    found = doctor.python_and_libraries()
    assert found.status == OK
    for name in ("trio", "zeroconf", "PyNaCl", "textual"):
        assert name in found.fields["libraries"]


def test_the_lan_address_is_the_one_multicast_leaves_by_else_the_first() -> None:
    from p2p.netroute import lan_address, multicast_route

    assert lan_address([]) is None
    assert lan_address(["203.0.113.9", "198.51.100.7"]) == "203.0.113.9"  # not ours: the first
    source, _ = multicast_route()  # a UDP connect: nothing is sent
    if source is not None:
        assert lan_address(["203.0.113.9", source]) == source


def test_the_game_port_on_loopback_taken_and_free() -> None:
    import socket

    free = doctor.game_port("127.0.0.1", 0, 2.0)
    assert free.status == OK and free.fields["port"] > 0
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", 0))
        holder.listen(1)
        taken = doctor.game_port("127.0.0.1", holder.getsockname()[1], 2.0)
    assert taken.status == FAIL and "in use by another program" in line(taken)


# ------------------------------------------------------------- in namespaces


def _namespace_or_skip() -> None:
    if sys.platform != "linux" or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs Linux network namespaces (unshare, ip)")
    probe = subprocess.run(["unshare", "-n", "--", "true"], capture_output=True, timeout=10)
    if probe.returncode != 0:
        pytest.skip("cannot create a network namespace here (unshare -n refused)")


MULTICAST = "ip link set lo multicast on; ip route add 224.0.0.0/4 dev lo"


def _doctor_in_namespace(
    tmp_path: Path, setup: str, *args: str, teardown: str = ""
) -> tuple[int, list[str]]:
    script = f"""
set -eu
ip link set lo up
{setup}
set +e
"$PY" -m tui.cli doctor --seconds 3 {" ".join(args)}
echo "rc=$?"
{teardown}
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NODEALER_HOME": str(tmp_path / "home"),
           "PY": sys.executable}  # fmt: skip
    run = subprocess.run(["unshare", "-n", "--", "bash", "-c", script], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert lines and lines[-1].startswith("rc="), run.stdout + run.stderr
    return int(lines[-1][3:]), lines[:-1]


def _check(lines: list[str], name: str) -> str:
    (found,) = [x for x in lines if x[5:].startswith(f"{name}:")]
    return found


@pytest.mark.netns
def test_doctor_on_a_machine_alone_with_multicast(tmp_path: Path) -> None:
    _namespace_or_skip()
    rc, lines = _doctor_in_namespace(tmp_path, MULTICAST)
    assert rc == 0, lines
    assert _check(lines, "interfaces").startswith("WARN interfaces: only loopback (lo 127.0.0.1 "
                                                  "(multicast))")  # fmt: skip
    assert _check(lines, "multicast") == "ok   multicast: mDNS leaves by lo (127.0.0.1)"
    assert _check(lines, "mDNS").startswith("ok   mDNS: our own query on 127.0.0.1 was answered")
    assert _check(lines, "game port").startswith("ok   game port: TCP port ")
    assert _check(lines, "python").startswith("ok   python: ")
    assert _check(lines, "home folder").startswith("ok   home folder: no identity key yet")
    assert lines[-1] == "1 to look at, nothing failed"
    assert len(lines) == 8  # one line per check, and the summary


@pytest.mark.netns
def test_doctor_without_a_multicast_route_says_what_to_do(tmp_path: Path) -> None:
    # nodealer pins its interface (zeroconf sets IP_MULTICAST_IF), so its own
    # mDNS still works; tools that choose none cannot, and doctor says so
    _namespace_or_skip()
    rc, lines = _doctor_in_namespace(tmp_path, "", "--lang", "en")
    assert rc == 0, lines
    multicast = _check(lines, "multicast")
    assert multicast.startswith("WARN multicast: no route for multicast (224.0.0.251): Network "
                                "is unreachable; nodealer sends by the address it uses"), lines
    assert ("what to do: connect to the party's network; on one with no default route: sudo ip "
            "route add 224.0.0.0/4 dev IF; meanwhile join with --connect HOST:PORT") in multicast
    assert _check(lines, "mDNS").startswith("ok   mDNS: our own query on 127.0.0.1")
    assert lines[-1] == "2 to look at, nothing failed"
    rc, lines = _doctor_in_namespace(tmp_path, "", "--lang", "zh")
    assert rc == 0
    assert _check(lines, "组播").startswith("WARN 组播: 组播（224.0.0.251）没有路由"), lines
    assert "怎么办: 连上聚会的网络" in _check(lines, "组播")
    assert lines[-1] == "2 项需要留意，没有失败"


@pytest.mark.netns
def test_doctor_names_an_interface_with_multicast_off(tmp_path: Path) -> None:
    _namespace_or_skip()
    veth = ("ip link add nd0 type veth peer name nd1; ip addr add 169.254.9.1/16 dev nd0; "
            "ip addr add 169.254.9.2/16 dev nd1; ip link set nd0 up; ip link set nd1 up; "
            "ip link set nd0 multicast off")  # fmt: skip
    rc, lines = _doctor_in_namespace(tmp_path, veth, "--interface", "169.254.9.1")
    assert rc == 1, lines
    assert _check(lines, "multicast") == (
        "FAIL multicast: nd0 (169.254.9.1) has multicast off: the others will not hear mDNS "
        "from it — what to do: turn multicast on for nd0 (sudo ip link set nd0 multicast on), "
        "or join with --connect HOST:PORT")
    assert "169.254.9.1 (no multicast)" in _check(lines, "interfaces")


@pytest.mark.netns
def test_doctor_with_mdns_dropped_by_a_firewall(tmp_path: Path) -> None:
    _namespace_or_skip()
    if not shutil.which("nft"):
        pytest.skip("needs nft (nftables) to drop UDP 5353 inside the namespace")
    rc, lines = _doctor_in_namespace(tmp_path, f"{MULTICAST}\n{_drop('udp dport 5353')}")
    assert rc == 1, lines
    assert _check(lines, "mDNS") == (
        "FAIL mDNS: no answer to our own mDNS query on 127.0.0.1 within 3 s — what to do: "
        "multicast does not come back on this network: open UDP 5353 in the firewall (see the "
        "firewall line), or join with --connect HOST:PORT (the host prints it)")


def _drop(match: str) -> str:
    return ('nft add table inet doctor && nft add chain inet doctor input '
            '"{ type filter hook input priority 0; }" && '
            f'nft add rule inet doctor input {match} drop')  # fmt: skip


@pytest.mark.netns
def test_doctor_with_the_game_port_taken(tmp_path: Path) -> None:
    _namespace_or_skip()
    hold = f'"$PY" -c "{_HOLD}" > /dev/null 2>&1 & HOLD=$!; sleep 1'
    rc, lines = _doctor_in_namespace(tmp_path, f"{MULTICAST}\n{hold}", "--port", "4567",
                                     teardown='kill "$HOLD"')  # fmt: skip
    assert rc == 1, lines
    port = _check(lines, "game port")
    assert port == ("FAIL game port: TCP port 4567 is in use by another program — what to do: "
                    "host with another --port, or leave --port out (any free port)")
    assert _check(lines, "mDNS").startswith("ok   mDNS")  # the rest still checked


_HOLD = ("import socket, time; s = socket.socket(); s.bind(('0.0.0.0', 4567)); s.listen(); "
         "time.sleep(60)")  # fmt: skip


@pytest.mark.netns
def test_doctor_with_the_game_port_dropped_by_a_firewall(tmp_path: Path) -> None:
    _namespace_or_skip()
    if not shutil.which("nft"):
        pytest.skip("needs nft (nftables) to drop the port inside the namespace")
    rc, lines = _doctor_in_namespace(tmp_path, f"{MULTICAST}\n{_drop('tcp dport 4567')}",
                                     "--port", "4567")  # fmt: skip
    assert rc == 1, lines
    port = _check(lines, "game port")
    assert port.startswith("FAIL game port: a connection to 127.0.0.1:4567 got no answer in "
                           "3 s: something drops it — what to do: a firewall: allow TCP port "
                           "4567"), lines  # fmt: skip
