"""The ``nodealer`` command line.

Subcommands are added here as the layers below them become real; every
subcommand does what it says or fails with a clear message (exit code 2 for
a usage error), never a placeholder.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from .exits import EXIT_INTERRUPTED, EXIT_PIPE, EXIT_PROBLEM
from .replay_command import own_fingerprint, run_replay
from .words import register, t

register(
    {
        "proven": "带证明",
        "unproven": "不带证明",
        "ok": "通过",
        "seat {seat}": "座位{seat}",
        "{game}: {seats} players on 127.0.0.1 ({mode} deals); you are {name}": (
            "{game}：{seats} 名玩家，在 127.0.0.1 上（{mode}的发牌）；你是 {name}"
        ),
        "{game}: {seats} bot seats, {mode} mental-poker deals": (
            "{game}：{seats} 个机器人座位，{mode}的心理扑克发牌"
        ),
        "players: {names}": "玩家：{names}",
        "your log: {path}": "你的日志：{path}",
        "the game did not finish; saved logs are kept": "游戏没有打完；保存的日志都还在",
        "try another --seed": "换一个 --seed 试试",
        "try another --seed or more --rounds": "换一个 --seed 或者多打几局（--rounds）",
        "nothing was caught: the cheat never had its chance at this table (it needs "
        "{chance}); {more}": "什么也没抓到：这一桌没有给作弊的机会（它需要{chance}）；{more}",
        "a key reveal of its own": "轮到自己公开密钥",
        "a shuffle pass of its own": "轮到自己洗牌",
        "its lock pass of the first deal": "第一次发牌时轮到自己上锁",
        "a proof about its identity card: it must play cards of kind A or B (K12) "
        "while holding another card": "证明一次与身份牌有关的出牌：它得按 A 类或 B 类出牌（K12），"
        "而且手里还有别的牌",
        "a move of its own": "轮到自己走一步",
        "a running timer (v2: while another seat is the sequencer)": (
            "有计时器在走（v2：且别的座位当排序者）"
        ),
        "the final reveals at the end of the game": "游戏结束时的最后公开",
        "a verdict of its own secret rule: it must win a round to write one": (
            "为自己的秘密规则作一次裁决：它得先赢一局才能写规则"
        ),
        "a move to put into the log as the sequencer": "作为排序者往日志里写一步",
        "({who} was told to cheat: it {what})": "（{who} 被要求作弊：它{what}）",
        "outcome: {outcome}": "结果：{outcome}",
        "{entries} log entries, {seconds} s; your log: {path}": (
            "日志 {entries} 条，用时 {seconds} 秒；你的日志：{path}"
        ),
        "{bodies} log bodies, {events} engine events, {deals} deals, all keys revealed, "
        "audit: {audit}, {seconds} s": (
            "日志 {bodies} 条，引擎事件 {events} 个，发牌 {deals} 次，所有密钥已公开，"
            "审计：{audit}，用时 {seconds} 秒"
        ),
        "log copied to {path}": "日志已复制到 {path}",
        "caught by the table: {fault}": "牌桌抓到作弊：{fault}",
        "bots' identities and logs kept in {path}": "机器人的身份和日志保存在 {path}",
        "clean: {outcome}": "干净：{outcome}",
        "cheating found": "发现作弊",
        "verify: {verdict}": "核查：{verdict}",
        "CHEATING: {fault}": "作弊：{fault}",
        "reveals a made-up key": "公开了一个编造的密钥",
        "{game} is for {lo}-{hi} players, not {n}": "{game} 要 {lo}-{hi} 名玩家，不是 {n} 名",
        "--rounds is for Mao": "--rounds 只用于毛",
        "--cheat {name} is for {games}": "--cheat {name} 只用于 {games}",
        "note: no screen here (the output is not a terminal, or --cheat): a sensible "
        "bot plays your seat (as with --headless)": (
            "提示：这里没有界面（输出不是终端，或用了 --cheat）：由一个稳健的机器人替你出牌"
            "（与 --headless 相同）"
        ),
        "interrupted; saved logs are kept": "已中断；保存的日志都还在",
        "no saved games yet (nodealer play, host or join saves them)": (
            "还没有保存的游戏（nodealer play、host 或 join 会保存）"
        ),
        "shuffles one card in twice": "洗牌时把一张牌放进去两次",
        "locks another position's card to read it": "给别的位置的牌上锁，想偷看它",
        "proves its play against another card": "拿另一张牌来证明它的出牌",
        "signs a move for another seat": "替别的座位签了一步",
        "times out a timer it may not (v2: not the sequencer; v3: before it started)": (
            "宣布它无权宣布的计时结束（v2：不是排序者；v3：计时器还没开始）"
        ),
        "withholds its final reveal": "扣着最后的公开不做",
        "posts a false verdict for its secret rule": "为自己的秘密规则发布了错误的裁决",
        "puts, as sequencer, a move another seat never signed into the log": (
            "作为排序者，把别的座位没签过的一步写进日志"
        ),
        "puts, as sequencer, another seat's move into the log a second time": (
            "作为排序者，把别的座位的一步再写进日志一次"
        ),
        "signs, as sequencer, two different entries for one place": (
            "作为排序者，为同一个位置签了两条不同的记录"
        ),
    }
)


def _version() -> str:
    try:
        return version("nodealer")
    except PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def _count(text: str) -> int:
    """A whole number of seats or bots (argparse: a bad one is a usage error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value


def _lang_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        choices=("en", "zh"),
        default=os.environ.get("NODEALER_LANG")
        if os.environ.get("NODEALER_LANG") == "zh"
        else "en",
        help="the language of everything printed (zh: 中文; default NODEALER_LANG, else en)",
    )


def build_parser() -> argparse.ArgumentParser:
    from table.pace import PACES

    parser = argparse.ArgumentParser(
        prog="nodealer",
        description="Fair card games for a LAN party with no server and no dealer.",
    )
    parser.add_argument("--version", action="version", version=f"nodealer {_version()}")
    parser.add_argument(
        "--lang",
        dest="home_lang",
        choices=("en", "zh"),
        default=None,
        help="the language of the home screen (nodealer with no command; default NODEALER_LANG)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="a whole game between bot seats, dealt with mental poker, audited",
        description=(
            "Play one game between bot seats in this process. Every deal is really "
            "shuffled, locked, dealt and revealed with mental poker (each seat its own "
            "keys), every proof is checked, and at the end every seat reveals its keys "
            "and every deal is audited."
        ),
    )
    demo.add_argument("game", choices=_games(), help="which game")
    demo.add_argument(
        "--players", type=_count, default=None, help="seats at the table (default: per game)"
    )
    demo.add_argument(
        "--seed", type=int, default=0, help="bot seed (never the deal: deals use secrets)"
    )
    demo.add_argument(
        "--unproven", action="store_true", help="skip the zero-knowledge proofs (faster)"
    )
    demo.add_argument("--quiet", action="store_true", help="print only the summary")
    _lang_option(demo)
    demo.set_defaults(handler=_demo)

    verify = commands.add_parser(
        "verify",
        help="check a saved game log offline and name any cheater",
        description=(
            "Replay a saved table log offline: every signature and the hash chain, the "
            "setup, every deal message, proof, key and move against the game's rules, "
            "every timer's authority, the final reveals and the audit of every deal. "
            "A peer's log is <data dir>/tables/<table id>/log (data dir: $NODEALER_HOME, "
            "else $XDG_DATA_HOME/nodealer, else ~/.local/share/nodealer). "
            "Exit 0: clean; 1: cheating found (seat, fingerprint, entry, reason); "
            "2: the file cannot be verified."
        ),
    )
    verify.add_argument(
        "log", help="path of a saved log file, or a table id prefix (see nodealer games)"
    )
    verify.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document (schema: protocol.md §7.4) instead of text",
    )
    _lang_option(verify)
    verify.set_defaults(handler=_verify)

    play = commands.add_parser(
        "play",
        help="a whole game between real peers on 127.0.0.1 (you at seat 0), then verified",
        description=(
            "Start PLAYERS peers in this process, each with its own identity and store, "
            "joined in a real TCP mesh on 127.0.0.1. You hold seat 0 (your own identity; "
            "your seat's log is kept with your other games); the others are bots whose "
            "stores are removed at the end unless --keep. Until the table screens land "
            "your seat is played by a sensible bot too (--headless says so). Prints the "
            "story of the game and a summary, then verifies the saved log: exit 0 when "
            "the game ended cleanly and its log verifies, 1 when a cheat was found."
        ),
    )
    play.add_argument("game", choices=_games(), help="which game")
    play.add_argument(
        "--players", type=_count, default=None, help="seats at the table (default: per game)"
    )
    play.add_argument("--headless", action="store_true", help="every seat a bot (no screen)")
    from .lan import bell_option

    bell_option(play)
    play.add_argument("--seed", type=int, default=0, help="bot seed (never the deal)")
    play.add_argument("--log", default=None, help="also write the table's log to this file")
    play.add_argument(
        "--name",
        default=None,
        help="your name at the table, kept for the next games (default: the name last "
        "chosen, else your login name)",
    )
    play.add_argument("--rounds", type=_count, default=None, help="Mao: end after R rounds")
    play.add_argument(
        "--unproven", action="store_true", help="skip the zero-knowledge proofs (faster)"
    )
    play.add_argument(
        "--time-scale",
        type=_positive,
        default=None,
        help="real seconds per game second for timers (default: 1, real seconds, on the "
        "screen, as at a LAN table; 0.1 when bots play every seat)",
    )
    play.add_argument(
        "--home",
        default=None,
        help="your data folder (default: NODEALER_HOME, else ~/.local/share/nodealer)",
    )
    play.add_argument(
        "--pace",
        choices=PACES,
        default="human",
        help="with the screen: human (bots wait 4 s and never take your turn within "
        "12 s), quick (bots at once, your turn still yours for 12 s), off",
    )
    play.add_argument(
        "--turn-time",
        type=_count,
        default=None,
        metavar="S",
        help="with the screen: idle S seconds on your turn, a sensible move is made for "
        "you, marked auto (off by default)",
    )
    play.add_argument("--keep", action="store_true", help="keep the bots' identities and logs")
    play.add_argument(
        "--cheat",
        choices=_cheats(),
        default=None,
        help="one seat cheats this way (seat 1; the sequencer's tricks: seat 0), "
        "to show what nodealer catches",
    )
    play.add_argument("--verbose", action="store_true", help="every event, protocol included")
    play.add_argument("--quiet", action="store_true", help="print only the summary")
    from .watch import add_command as add_watch
    from .watch_serve import watch_port_options

    watch_port_options(play, _count)
    _lang_option(play)
    play.set_defaults(handler=_play)
    add_watch(commands, _lang_option)

    from .lan import add_commands

    add_commands(commands, _games(), _count)
    from .doctor import add_command as add_doctor

    add_doctor(commands, _lang_option)
    games = commands.add_parser("games", help="this machine's saved games")
    _lang_option(games)
    games.set_defaults(handler=_list_games)
    replay = commands.add_parser(
        "replay", help="step through a saved game, every card shown once the log reveals it"
    )
    replay.add_argument("log", help="a saved log file or a table id prefix (nodealer games)")
    replay.add_argument(
        "--text", action="store_true", help="print the steps instead of opening the screen"
    )
    replay.add_argument(
        "--at",
        metavar="N",
        help="start at move N (the move number shown on screen, as in the page's #turn=N), "
        "or body:N (the table as it stood after table body N, numbered from 0 as in "
        "protocol.md) or entry:N (log entry #N, as verify names a fault); --text prints "
        "from there, --html prints a link that opens there",
    )
    replay.add_argument(
        "--html",
        metavar="FILE",
        help="write the game as one self-contained web page to share (no network; every "
        "hand shown once the log reveals it; #turn=N in its address opens move N)",
    )
    _lang_option(replay)
    replay.set_defaults(handler=run_replay)
    return parser


def _home(parser: argparse.ArgumentParser, run: Any = None, lang: str | None = None) -> int:
    """The home screen (the LAN's tables found by mDNS), then what was
    chosen there, in the language home spoke (``NODEALER_LANG``, or F2 on
    home); when that ends (a game over, ``q`` or a confirmed ``^q`` at a
    table, a replay closed) home opens again, until ``q`` on home.
    ``run(app)`` runs the home app and returns its choice (tests; default
    ``app.run()``)."""
    from engines.core import games as registered
    from p2p.discovery import browse
    from p2p.identity import Identity
    from table.names import default_name
    from table.seating import held_tables

    from .app import SCREENS
    from .games import saved_games
    from .screens.home import Waiting
    from .table_app import LanHomeApp

    identity = Identity.load_or_create()
    who = f"{default_name()} ({identity.public.fingerprint})"
    choices = [(name, g.default_seats) for name, g in registered().items() if name in SCREENS]
    if lang is None:
        lang = "zh" if os.environ.get("NODEALER_LANG") == "zh" else "en"
    while True:
        # a table this home holds unfinished is offered first (issue 27, item 8)
        waiting = [Waiting.of(held) for held in held_tables(identity)]
        app = LanHomeApp(who, choices, saved_games(), lan=browse, hostable=list(registered()),
                         lang=lang, waiting=waiting)  # fmt: skip
        choice = app.run() if run is None else run(app)
        if not choice:
            return 0
        lang = app.lang  # F2 on home carries on into the game
        code = main([*choice_argv(choice), "--lang", lang])
        if code >= 128:
            # a signal ended it (its terminal closed: SIGHUP, 129): so it
            # ends home, which would otherwise open again on a dead terminal
            return code


def choice_argv(choice: str) -> list[str]:
    """The command for what was chosen on the home screen
    (:mod:`tui.screens.home`): a table picked from the LAN list is joined
    by its address, requiring the table id and host fingerprint its advert
    named.

    >>> choice_argv('lan:{"connect": "10.0.0.2:4000", "table": "1a2b", "host": "AAAA-BBBB"}')
    ['join', '--connect', '10.0.0.2:4000', '--table-id', '1a2b', '--host-fingerprint', 'AAAA-BBBB']
    >>> choice_argv("join:10.0.0.2:4000 4721-walnut")
    ['join', '--connect', '10.0.0.2:4000', '--code', '4721-walnut']
    >>> choice_argv("back:1a2b3c4d5e6f7a8b")  # a held table: join goes back to it
    ['join', '--table-id', '1a2b3c4d5e6f7a8b']
    """
    kind, _, value = choice.partition(":")
    if kind == "play":
        return ["play", value]
    if kind == "back":
        return ["join", "--table-id", value]
    if kind == "join":  # HOST:PORT, then a private table's code if one was typed
        where, _, code = value.partition(" ")
        return ["join", "--connect", where, *(["--code", code] if code else [])]
    if kind == "watch":  # a spectator's big screen (tui.watch)
        return ["watch", "--connect", value]
    if kind == "watchlan":  # a LAN table's advertised watch port; it must serve that table
        ad = json.loads(value)
        return ["watch", "--connect", ad["connect"], "--table-id", ad["table"]]
    if kind == "lan":
        ad = json.loads(value)
        code = ["--code", ad["code"]] if ad.get("code") else []
        return ["join", "--connect", ad["connect"], "--table-id", ad["table"],
                "--host-fingerprint", ad["host"], *code]  # fmt: skip
    if kind == "host":
        plan = json.loads(value)
        config = [arg for pair in plan["config"] for arg in ("--config", pair)]
        private = ["--private"] if plan.get("private") else []
        private += ["--spectators", str(plan["spectators"])] if plan.get("spectators") else []
        return ["host", plan["game"], "--players", str(plan["seats"]), "--name", plan["name"],
                *config, *private]  # fmt: skip
    return ["replay", value]


def _list_games(args: argparse.Namespace) -> int:
    from .games import saved_games

    found = saved_games(me=own_fingerprint())
    if not found:
        print(t("no saved games yet (nodealer play, host or join saves them)", args.lang))
    for saved in found:
        print(saved.line(args.lang))
    return 0


def _cheats() -> list[str]:
    from table.cheats import CHEATS

    return sorted(CHEATS)


def _wrong_players(engine: Any, seats: int, lang: str) -> str:
    from .story import game_name

    return t(
        "{game} is for {lo}-{hi} players, not {n}",
        lang,
        game=game_name(engine.name, lang),
        lo=engine.min_seats,
        hi=engine.max_seats,
        n=seats,
    )


def _games() -> list[str]:
    from engines.core import games

    return list(games())


def _demo(args: argparse.Namespace) -> int:
    import secrets
    import time

    from engines.bots import sensible_bots
    from engines.core import game
    from table.local import LocalTable, TableFault
    from table.machine import TableSetup

    from .story import game_name, outcome_text, story

    lang = args.lang
    engine = game(args.game)
    seats = engine.default_seats if args.players is None else args.players
    if not engine.min_seats <= seats <= engine.max_seats:
        print(f"nodealer demo: {_wrong_players(engine, seats, lang)}", file=sys.stderr)
        return 2
    setup = TableSetup(b"demo/" + args.game.encode(), args.game, seats, proven=not args.unproven)
    bots = sensible_bots(args.game, seats, args.seed, salt_source=secrets.token_bytes)
    local = LocalTable(setup, bots, seed=args.seed)
    shown = 0

    def show(author: int, body: dict) -> None:
        nonlocal shown
        if args.quiet:
            return
        for event in local.table.events[shown:]:
            line = story(str(event), lang)
            if line:
                print(f"  {line}")
        shown = len(local.table.events)

    local.on_body = show
    print(t("{game}: {seats} bot seats, {mode} mental-poker deals", lang,
            game=game_name(args.game, lang), seats=seats,
            mode=t("proven" if setup.proven else "unproven", lang)))  # fmt: skip
    start = time.perf_counter()
    try:
        outcome = local.play()
    except TableFault as exc:
        print(f"nodealer demo: refused: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start
    table = local.table
    print(t("outcome: {outcome}", lang, outcome=outcome_text(str(outcome), lang)))
    audit = table.audit()
    print(t("{bodies} log bodies, {events} engine events, {deals} deals, all keys revealed, "
            "audit: {audit}, {seconds} s", lang, bodies=len(local.log), events=len(table.events),
            deals=len(table.deals), audit=t("ok", lang) if audit.ok else audit,
            seconds=f"{elapsed:.1f}"))  # fmt: skip
    return 0


def _verify(args: argparse.Namespace) -> int:

    from table.names import names_of_log
    from table.verify import verify_log

    from .games import UnknownGame, find_log
    from .story import verify_line

    try:
        path = find_log(args.log)
    except UnknownGame as exc:
        path = Path(args.log)  # verify says what is wrong with it
        if not any(c in args.log for c in "/."):
            print(f"nodealer verify: {exc} (see nodealer games)", file=sys.stderr)
            return EXIT_PROBLEM
    report = verify_log(path)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        return report.exit_code
    names = names_of_log(path)
    me = own_fingerprint()
    if report.spec is not None and me is not None:
        names = names.seen_by(next((s for s, k in enumerate(report.spec.seats)
                                    if k.fingerprint == me), None))  # fmt: skip
    for line in report.lines():
        print(verify_line(line, args.lang, names))
    if report.exit_code == 2:
        print(f"nodealer verify: {report.problem or 'nothing to verify'}", file=sys.stderr)
    return report.exit_code


def _play(args: argparse.Namespace) -> int:
    import shutil
    import tempfile
    import time

    import trio

    from engines.core import game
    from p2p.identity import Identity, config_dir, data_dir
    from table.bot_table import play_bot_table
    from table.names import SeatNames, default_name, remember_name
    from table.pace import pace_named
    from table.session import Update
    from table.verify import verify_log

    from .story import coloured, fault_text, game_name, outcome_text, update_line
    from .storyteller import StoryTeller

    lang = args.lang
    engine = game(args.game)
    seats = engine.default_seats if args.players is None else args.players
    if not engine.min_seats <= seats <= engine.max_seats:
        print(f"nodealer play: {_wrong_players(engine, seats, lang)}", file=sys.stderr)
        return EXIT_PROBLEM
    if args.rounds is not None and args.game != "mao":
        print("nodealer play: " + t("--rounds is for Mao", lang), file=sys.stderr)
        return EXIT_PROBLEM
    cheat = None
    if args.cheat is not None:
        from table.cheats import CHEATS, cheating_at

        cheat = CHEATS[args.cheat]
        if not cheat.fits(args.game):
            print("nodealer play: " + t("--cheat {name} is for {games}", lang, name=cheat.name,
                                        games=", ".join(cheat.games)), file=sys.stderr)  # fmt: skip
            return EXIT_PROBLEM
    if args.name is not None:
        from p2p.lobby.messages import nickname_problem

        problem = nickname_problem(args.name)
        if problem is not None:
            print(f"nodealer play: --name {args.name!r}: {problem}", file=sys.stderr)
            return EXIT_PROBLEM
    key_home = Path(args.home) if args.home is not None else config_dir()
    if args.name is not None:
        remember_name(args.name, key_home)  # the next games use it too
    names = SeatNames.for_play(args.name or default_name(key_home), seats, me=0)
    if args.home is not None:
        home = Path(args.home)
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        identity = Identity.load_or_create(home)
    else:
        home = data_dir()
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        identity = Identity.load_or_create(config_dir())
    (home / "tables").mkdir(parents=True, exist_ok=True, mode=0o700)
    bots_home = Path(tempfile.mkdtemp(prefix=f"nodealer-{args.game}-bots-"))
    from .app import SCREENS

    if not args.headless and args.game in SCREENS and cheat is None and sys.stdout.isatty():
        from .app import PlayApp
        from .lan import with_bell
        from .watch_serve import watch_request

        app = PlayApp(
            args.game,
            seats,
            bots_home=bots_home,
            own=(identity, home),
            proven=not args.unproven,
            seed=args.seed,
            time_scale=SCREEN_TIME_SCALE if args.time_scale is None else args.time_scale,
            lang=args.lang,
            rounds=args.rounds,
            pace=pace_named(args.pace, {0}),
            name=names.name(0),
            turn_time=args.turn_time,
            watch=watch_request(args),  # seat 0 serves spectators (--watch-port, --spectators)
        )
        try:
            with_bell(app, args).run()
        finally:
            if not args.keep:
                shutil.rmtree(bots_home, ignore_errors=True)
        _after_screen(app, args)
        return app.exit_code
    if not args.headless:
        note = (
            "note: no screen here (the output is not a terminal, or --cheat): a sensible "
            "bot plays your seat (as with --headless)"
        )
        print(t(note, args.lang), file=sys.stderr)

    live = sys.stderr.isatty()
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")

    teller = StoryTeller(names)

    def show(seat: int, update: Update) -> None:
        if seat != 0:
            return
        if update.kind == "progress":  # on stderr: a live line on a terminal
            text = update_line("progress", update.text, lang)
            if live:
                print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)
            elif not args.quiet:
                print(text, file=sys.stderr, flush=True)
            return
        if live:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        if args.quiet:
            return
        if update.kind == "event":
            lines = [update.text] if args.verbose else teller.tell(update.text, lang)
            for line in lines:
                print(f"  {coloured(line) if colour else line}", flush=True)
        elif update.kind != "stale" or args.verbose:
            print(update_line(update.kind, update.text, lang, names), flush=True)

    mode = t("proven" if not args.unproven else "unproven", lang)
    print(t("{game}: {seats} players on 127.0.0.1 ({mode} deals); you are {name}", lang,
            game=game_name(args.game, lang), seats=seats, mode=mode,
            name=names.name(0, lang)))  # fmt: skip
    cheater = 1 if cheat is None else cheat.seat
    start = time.perf_counter()
    try:
        from .watch_serve import watched

        peers = trio.run(
            watched,
            args,
            lambda on_session=None: play_bot_table(
                args.game,
                seats,
                bots_home,
                proven=not args.unproven,
                seed=args.seed,
                time_scale=BOTS_TIME_SCALE if args.time_scale is None else args.time_scale,
                on_update=show,
                own=(identity, home),
                rounds=args.rounds,
                names=names,
                on_session=on_session,
                **(
                    {}
                    if cheat is None
                    else {
                        "make_session": cheating_at(cheater, cheat),
                        "duty_wait": 3.0,
                        "final_wait": 8.0,
                    }
                ),
            )
        )
        elapsed = time.perf_counter() - start
        mine = peers[0]
        said = ", ".join(f"{names.name(p.seat, lang)} ({p.fingerprint})" for p in peers)
        print(t("players: {names}", lang, names=said))
        result = mine.result
        if result.outcome is not None:
            outcome = outcome_text(str(result.outcome), lang, names)
            print(t("outcome: {outcome}", lang, outcome=outcome))
        print(t("{entries} log entries, {seconds} s; your log: {path}", lang,
                entries=result.entries, seconds=f"{elapsed:.1f}", path=mine.log_path))  # fmt: skip
        if args.log is not None:
            shutil.copyfile(mine.log_path, args.log)
            print(t("log copied to {path}", lang, path=args.log))
        for found in result.faults:
            fault = fault_text(str(found), lang, names)
            print(t("caught by the table: {fault}", lang, fault=fault))
        # the cheater's own log may lack the evidence others hold (an
        # equivocating sequencer never sees the other branch): read an
        # honest seat's log then
        witness = peers[1] if cheat is not None and cheater == 0 else mine
        report = verify_log(witness.log_path)
    finally:
        if args.keep:
            print(t("bots' identities and logs kept in {path}", lang, path=bots_home))
        else:
            shutil.rmtree(bots_home, ignore_errors=True)
    verdict = report.lines()[-1]
    if verdict.startswith("clean: "):
        verdict = t("clean: {outcome}", lang, outcome=outcome_text(verdict[7:], lang, names))
    elif verdict.startswith("CHEATING: ") or verdict.startswith("outcome: "):
        verdict = t("cheating found", lang)
    print(t("verify: {verdict}", lang, verdict=verdict))
    for found in report.faults:
        print(t("CHEATING: {fault}", lang, fault=fault_text(str(found), lang, names)))
    if cheat is not None:
        what = cheat.what if lang == "en" else t(cheat.what, lang)
        print(t("({who} was told to cheat: it {what})", lang, who=names.name(cheater, lang),
                what=what))  # fmt: skip
        if report.exit_code == 0:
            print(_no_chance(cheat, args.game, lang))
    return report.exit_code


def _no_chance(cheat: Any, game: str, lang: str) -> str:
    """Why a cheat was not caught: it never had the moment it needs."""
    more = t("try another --seed or more --rounds" if game == "mao" else "try another --seed",
             lang)  # fmt: skip
    return t("nothing was caught: the cheat never had its chance at this table (it needs "
             "{chance}); {more}", lang, chance=t(cheat.chance, lang), more=more)  # fmt: skip


def _after_screen(app: Any, args: argparse.Namespace) -> None:
    """After the play screen closed: the outcome and where the log is, as
    ``host``/``join`` print them; ``--log`` gets its copy."""
    import shutil

    from .story import outcome_text

    lang = args.lang
    if app.outcome is not None:
        said = outcome_text(app.outcome, lang, app.names)
        print(t("outcome: {outcome}", lang, outcome=said))
    log_path = app.log_path
    if log_path is None:  # left before the end: the log so far is kept all the same
        store = getattr(getattr(app.session, "node", None), "store", None)
        log_path = getattr(store, "log_path", None)
        print(t("the game did not finish; saved logs are kept", lang))
    if log_path is None or not Path(log_path).is_file():
        return
    print(t("your log: {path}", lang, path=log_path))
    if args.log is not None:
        shutil.copyfile(log_path, args.log)
        print(t("log copied to {path}", lang, path=args.log))


def _quiet_stdout() -> None:
    """Point stdout at the null device, so that Python's flush at exit
    does not print ``Broken pipe`` either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file behind stdout
        pass
SCREEN_TIME_SCALE = 1.0
"""``play`` on the screen: every game timer in real seconds (K16's 10 s
detonation window, M23's 10 s), as LAN tables run them."""
BOTS_TIME_SCALE = 0.1
"""``play`` with bots at every seat (no person waits): timers run ten times faster."""


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order (trio wraps
    what a task raised in a group)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _problem(exc: BaseException) -> str | None:
    """One line a person can act on, for a failure of this machine rather
    than of nodealer (a full disk, a read-only or missing folder, a bad
    identity key); None: not one of those (a bug: let the traceback show)."""
    from p2p.discovery import DiscoveryError
    from p2p.identity import IdentityError
    from p2p.lobby import LobbyError
    from p2p.store import StoreError
    from table.session import SessionError

    for leaf in _leaves(exc):
        if isinstance(leaf, IdentityError | SessionError | StoreError | LobbyError):
            return str(leaf)
        if isinstance(leaf, DiscoveryError):
            return f"{leaf} (use --connect HOST:PORT on a network without multicast)"
        if isinstance(leaf, OSError):
            where = f" ({leaf.filename})" if leaf.filename else ""
            if leaf.errno in (errno.ENOSPC, errno.EDQUOT):
                return (
                    f"the disk is full{where}: free some space and run the command again "
                    "(what was written so far is kept)"
                )
            if leaf.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                return (
                    f"cannot write{where}: {leaf.strerror}; choose a folder you can write "
                    "to (--home, or NODEALER_HOME)"
                )
            if leaf.errno in (errno.ENOTDIR, errno.EEXIST, errno.ENOENT, errno.EISDIR):
                return f"{leaf.strerror}{where}: NODEALER_HOME and --home must name folders"
            return f"{leaf.strerror or leaf}{where}"
    return None


class _PlainCards:
    """stdout for a terminal that cannot show suit symbols (not UTF-8):
    cards fall back to ASCII names (``QS``, ``10H``) instead of crashing."""

    SUITS = str.maketrans({"♠": "S", "♥": "H", "♦": "D", "♣": "C", "×": "x"})

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        plain = text.translate(self.SUITS)
        encoding = getattr(self._stream, "encoding", None) or "ascii"
        return self._stream.write(plain.encode(encoding, "replace").decode(encoding))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _plain_if_needed() -> None:
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if encoding and encoding != "utf8":
        sys.stdout = _PlainCards(sys.stdout)  # type: ignore[assignment]


def main(argv: Sequence[str] | None = None) -> int:
    _plain_if_needed()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            parser.print_help()
            return 0
        # home, under the same signal handling as every command: a terminal
        # closed under it (SIGHUP) ends it, where it had spun on a dead tty
        args.command = "home"

        def handler(_: argparse.Namespace) -> int:
            return _home(parser, lang=args.home_lang)

    else:
        handler = getattr(args, "handler", None)
        if handler is None:  # pragma: no cover - every subparser sets one
            parser.error(f"unknown command {args.command!r}")
    from .signals import Stop, signals_as_interrupt, tell

    stop = Stop()
    try:
        with signals_as_interrupt(stop):  # SIGTERM, SIGHUP: as Ctrl-C
            code = int(handler(args) or 0)
            sys.stdout.flush()  # here, not at exit: a closed pipe is answered below
        if stop.signum is not None:  # a screen that took the interrupt and closed
            raise KeyboardInterrupt
        return code
    except BaseException as exc:
        pipe = any(isinstance(leaf, BrokenPipeError) for leaf in _leaves(exc))
        if stop.signum is None and pipe:
            _quiet_stdout()  # the reader went away (``| head``): nothing more to say
            return EXIT_PIPE
        # after a signal, whatever ended the command (a terminal closed under
        # it fails its writes) is that signal's doing
        if stop.signum is not None or any(isinstance(x, KeyboardInterrupt) for x in _leaves(exc)):
            lang = getattr(args, "lang", "en")
            said = stop.said(t("interrupted; saved logs are kept", lang), lang)
            tell(f"nodealer {args.command}: {said}")
            return stop.exit_code(EXIT_INTERRUPTED)
        problem = _problem(exc)
        if problem is None:
            raise
        print(f"nodealer {args.command}: {problem}", file=sys.stderr)
        return EXIT_PROBLEM


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
