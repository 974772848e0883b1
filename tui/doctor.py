"""``nodealer doctor``: one plain line per check of what a LAN party needs
(the checks are :mod:`p2p.doctor`), each with what to do when it is not
right, in English or Chinese. Exit 0 when nothing failed, 1 otherwise."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p2p.doctor import FAIL, NOTE, OK, WARN, Finding, run_all

from .words import register, t

MARKS = {OK: "ok  ", NOTE: "note", WARN: "WARN", FAIL: "FAIL"}
CHECKS = {
    "python": "python",
    "interfaces": "interfaces",
    "multicast": "multicast",
    "mdns": "mDNS",
    "port": "game port",
    "firewall": "firewall",
    "home": "home folder",
}

register(
    {
        # the checks
        "python": "Python",
        "interfaces": "网络接口",
        "multicast": "组播",
        "mDNS": "mDNS",
        "game port": "游戏端口",
        "firewall": "防火墙",
        "home folder": "个人文件夹",
        "what to do": "怎么办",
        "{fails} failed, {warnings} to look at: fix the first FAIL first":
            "{fails} 项失败，{warnings} 项需要留意：先解决第一项失败",
        "all is well for a LAN party": "一切就绪，可以开局域网牌局",
        "{warnings} to look at, nothing failed": "{warnings} 项需要留意，没有失败",
        # p2p.doctor's findings
        "{python} on {os}; missing: {missing}": "{python}，{os}；缺少：{missing}",
        "install nodealer again (pip install .), which brings them":
            "重新安装 nodealer（pip install .），会一并装上",
        "{python} on {os}; {problem}": "{python}，{os}；{problem}",
        "install a PyNaCl built on a released libsodium (pip install --force-reinstall pynacl)":
            "安装基于正式版 libsodium 的 PyNaCl（pip install --force-reinstall pynacl）",
        "{python} on {os}; {libraries}": "{python}，{os}；{libraries}",
        "only loopback ({listed}): no other laptop can reach this one":
            "只有回环接口（{listed}）：别的电脑连不到这台",
        "join the party's Wi-Fi or cable, then run nodealer doctor again":
            "连上聚会的 Wi-Fi 或网线，再运行一次 nodealer doctor",
        "{listed}": "{listed}",
        "more than one network: if others do not see your table, host with --interface and "
        "the address on the party's network":
            "有不止一个网络：如果别人看不到你的牌桌，开桌时用 --interface 加聚会网络上的地址",
        "{address} is not an address of this machine": "{address} 不是这台电脑的地址",
        "give --interface one of: {addresses}": "--interface 请给其中一个：{addresses}",
        "no route for multicast ({group}): {why}; nodealer sends by the address it uses, "
        "tools that do not choose one (dig, avahi) cannot":
            "组播（{group}）没有路由：{why}；nodealer 会从它所用的地址发出，"
            "不指定地址的工具（dig、avahi）则不行",
        "connect to the party's network; on one with no default route: sudo ip route add "
        "224.0.0.0/4 dev IF; meanwhile join with --connect HOST:PORT":
            "连上聚会的网络；若网络没有默认路由：sudo ip route add 224.0.0.0/4 dev 接口名；"
            "在此之前可用 --connect 主机:端口 加入",
        "connect to the party's network; meanwhile join with --connect HOST:PORT":
            "连上聚会的网络；在此之前可用 --connect 主机:端口 加入",
        "{name} ({address}) has multicast off: the others will not hear mDNS from it":
            "{name}（{address}）关闭了组播：别人收不到它发出的 mDNS",
        "turn multicast on for {name} (sudo ip link set {name} multicast on), or join with "
        "--connect HOST:PORT":
            "打开 {name} 的组播（sudo ip link set {name} multicast on），或用 --connect "
            "主机:端口 加入",
        "mDNS would leave by {name} ({address}), not by your network":
            "mDNS 会从 {name}（{address}）发出，而不是从你的网络",
        "route multicast to the party's network (sudo ip route add 224.0.0.0/4 dev IF), or "
        "host with --interface ADDRESS":
            "把组播路由到聚会的网络（sudo ip route add 224.0.0.0/4 dev 接口名），或开桌时用 "
            "--interface 地址",
        "mDNS leaves by {name} ({address})": "mDNS 从 {name}（{address}）发出",
        "not tried: no address to use": "未检查：没有可用的地址",
        "see the multicast line above": "见上面组播一行",
        "cannot use mDNS (UDP {port}) on {address}: {why}":
            "无法在 {address} 上使用 mDNS（UDP {port}）：{why}",
        "another program may hold UDP 5353 for itself; close it, or join with --connect "
        "HOST:PORT":
            "可能有别的程序独占了 UDP 5353；关掉它，或用 --connect 主机:端口 加入",
        "our own mDNS query failed on {address}: {why}": "在 {address} 上自查 mDNS 失败：{why}",
        "no answer to our own mDNS query on {address} within {seconds} s":
            "在 {address} 上自查 mDNS，{seconds} 秒内没有回应",
        "multicast does not come back on this network: open UDP 5353 in the firewall (see the "
        "firewall line), or join with --connect HOST:PORT (the host prints it)":
            "这个网络上的组播收不回来：在防火墙里放行 UDP 5353（见防火墙一行），或用 --connect "
            "主机:端口 加入（开桌的人会打印出来）",
        "our own query on {address} was answered in {ms} ms (this machine's side works)":
            "在 {address} 上的自查在 {ms} 毫秒内得到回应（本机这一端正常）",
        "TCP port {port} is in use by another program": "TCP 端口 {port} 被别的程序占用了",
        "host with another --port, or leave --port out (any free port)":
            "开桌时换一个 --port，或不写 --port（任选空闲端口）",
        "cannot listen on TCP port {port}: {why}": "无法监听 TCP 端口 {port}：{why}",
        "choose a port above 1024 with --port, or leave it out":
            "用 --port 选一个大于 1024 的端口，或不写",
        "a connection to {address}:{port} got no answer in {seconds} s: something drops it":
            "连接 {address}:{port} 在 {seconds} 秒内没有回应：有东西把它丢弃了",
        "a firewall: allow TCP port {port} (see the firewall line), host with --port {port}":
            "是防火墙：放行 TCP 端口 {port}（见防火墙一行），开桌时用 --port {port}",
        "a connection to {address}:{port} failed: {why}": "连接 {address}:{port} 失败：{why}",
        "a firewall refuses it: allow TCP port {port} (see the firewall line)":
            "防火墙拒绝了它：放行 TCP 端口 {port}（见防火墙一行）",
        "TCP port {port} takes connections at {address} (from this machine; a firewall may "
        "still stop the others: see below)":
            "TCP 端口 {port} 在 {address} 上可以连接（从本机测试；防火墙仍可能挡住别人：见下）",
        "Windows Defender Firewall asks the first time you host":
            "第一次开桌时 Windows Defender 防火墙会询问",
        "allow Python on Private networks; if this network is Public, make it Private "
        "(Settings > Network > Properties)":
            "允许 Python 用于专用网络；如果这个网络是公用网络，"
            "把它改成专用网络（设置 > 网络 > 属性）",
        "macOS asks whether Python may accept incoming connections the first time you host":
            "第一次开桌时 macOS 会问是否允许 Python 接受传入连接",
        "click Allow (System Settings > Network > Firewall > Options lists it)":
            "点“允许”（系统设置 > 网络 > 防火墙 > 选项 里可以看到）",
        "ufw is on: it stops the others' connections and mDNS":
            "ufw 已开启：它会挡住别人的连接和 mDNS",
        "let the party's network in: sudo ufw allow from {subnet} (afterwards: sudo ufw "
        "delete allow from {subnet})":
            "放行聚会的网络：sudo ufw allow from {subnet}（结束后：sudo ufw delete allow from "
            "{subnet}）",
        "firewalld is installed": "装有 firewalld",
        "if it runs, let the party's network in: sudo firewall-cmd --zone=trusted "
        "--add-source={subnet}":
            "如果它在运行，放行聚会的网络：sudo firewall-cmd --zone=trusted --add-source={subnet}",
        "no ufw or firewalld here": "这里没有 ufw 或 firewalld",
        "no identity key yet ({key}): it is made, private, the first time you play":
            "还没有身份密钥（{key}）：第一次玩时会生成，只有你能读",
        "your identity key {key} is {problem}": "你的身份密钥 {key}：{problem}",
        "chmod 600 {key}; chmod 700 {folder}": "chmod 600 {key}；chmod 700 {folder}",
        "your identity key {key} is outside your user profile":
            "你的身份密钥 {key} 不在你的用户文件夹里",
        "keep it under your profile (unset NODEALER_HOME), where only you and administrators "
        "can read it":
            "把它放在用户文件夹里（取消 NODEALER_HOME），那里只有你和管理员能读",
        "your identity key {key} is in your user profile (its privacy is the profile's)":
            "你的身份密钥 {key} 在你的用户文件夹里（隐私由该文件夹的权限保护）",
        "others may look into {folder} (mode {mode})": "别人可以查看 {folder}（权限 {mode}）",
        "chmod 700 {folder}": "chmod 700 {folder}",
        "your identity key {key} and saved games are private":
            "你的身份密钥 {key} 和保存的牌局只有你能读",
    }
)


def line(finding: Finding, lang: str = "en") -> str:
    """One finding as one line: mark, check, what was seen, what to do."""
    fields = dict(finding.fields)
    said = f"{MARKS[finding.status]} {t(CHECKS[finding.check], lang)}: "
    said += t(finding.says, lang, **fields)
    if finding.todo is not None:
        said += f" — {t('what to do', lang)}: {t(finding.todo, lang, **fields)}"
    return said


def summary(findings: list[Finding], lang: str = "en") -> str:
    fails = sum(f.status == FAIL for f in findings)
    warnings = sum(f.status == WARN for f in findings)
    if fails:
        return t("{fails} failed, {warnings} to look at: fix the first FAIL first", lang,
                 fails=fails, warnings=warnings)  # fmt: skip
    if warnings:
        return t("{warnings} to look at, nothing failed", lang, warnings=warnings)
    return t("all is well for a LAN party", lang)


def run_doctor(args: argparse.Namespace) -> int:
    from p2p.identity import config_dir, data_dir

    if args.home is not None:
        os.environ["NODEALER_HOME"] = str(Path(args.home))
    findings = run_all(interface=args.interface, port=args.port, seconds=args.seconds,
                       config=config_dir(), data=data_dir())  # fmt: skip
    for finding in findings:
        print(line(finding, args.lang), flush=True)
    print(summary(findings, args.lang))
    return 1 if any(f.status == FAIL for f in findings) else 0


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0-65535)")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0.1 <= value <= 60:
        raise argparse.ArgumentTypeError(f"{value} is not 0.1 to 60 seconds")
    return value


def add_command(commands: Any, lang_option: Callable[[argparse.ArgumentParser], None]) -> None:
    """``nodealer doctor`` on the ``nodealer`` command's subparsers."""
    doctor = commands.add_parser(
        "doctor",
        help="check this machine for a LAN party (network, mDNS, port, firewall, privacy)",
        description=(
            "What 'it doesn't see my table' needs: this machine's interfaces and which "
            "carries multicast, whether mDNS answers come back (a query for a throw-away "
            "service of its own, never a table), whether the game port takes connections, "
            "the firewall to open, the privacy of your nodealer folder, the Python and "
            "library versions. One line per check, with what to do. Exit 1 if one failed."
        ),
    )
    doctor.add_argument("--interface", default=None,
                        help="the address to check (default: the one mDNS leaves by)")  # fmt: skip
    doctor.add_argument("--port", type=_port, default=0,
                        help="the TCP port you host with (default: any free one)")  # fmt: skip
    doctor.add_argument("--seconds", type=_seconds, default=3.0,
                        help="how long to wait for an answer (default 3)")  # fmt: skip
    doctor.add_argument("--home", default=None,
                        help="your data folder (default: NODEALER_HOME)")  # fmt: skip
    lang_option(doctor)
    doctor.set_defaults(handler=run_doctor)
