"""``nodealer host``, ``nodealer join`` and ``nodealer tables``: play with
people on the LAN. In a terminal, ``host`` and ``join`` open the app
(:class:`tui.table_app.TableApp`) at the waiting room, then the table; with
``--headless`` (or not on a terminal, or a game this machine has no table
screen for) a sensible bot plays this seat, with a note saying so.

The host opens a lobby (:mod:`p2p.lobby`) and, unless ``--no-advertise``,
advertises it by mDNS (:mod:`p2p.discovery`); a joiner finds it by mDNS or
is told ``--connect HOST:PORT``. Once the table is full every seat signs the
same table and the game runs (:mod:`table.seating`). ``join`` with no table
named first resumes a table this identity holds a seat at in its own store
(after a crash or a quit): the game goes on where it stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .variants import parse_config

EXIT_CLEAN, EXIT_CHEATING, EXIT_PROBLEM = 0, 1, 2


def add_commands(commands: Any, games: list[str], count: Any) -> None:
    """The three subcommands (``commands`` is argparse's subparsers)."""
    host = commands.add_parser(
        "host",
        help="open a table on the LAN, seat who joins, play when full",
        description=(
            "Open a table: a lobby that seats whoever joins (nodealer join on the same LAN, "
            "or nodealer join --connect HOST:PORT), then the game, every deal shuffled with "
            "mental poker among the seats. In a terminal it opens the app (the waiting room, "
            "then your table); with --headless a bot plays your seat."
        ),
    )
    host.add_argument("game", choices=games, help="which game")
    host.add_argument("--players", type=count, default=None, help="seats at the table")
    host.add_argument("--name", default=None, help="the table's name (default: yours + game)")
    host.add_argument("--nickname", default=None, help="your name at the table")
    host.add_argument("--port", type=_port, default=0, help="lobby port (default: any free)")
    host.add_argument(
        "--interface",
        default="0.0.0.0",
        help="address to listen on and advertise (default: every interface)",
    )
    host.add_argument("--no-advertise", action="store_true", help="do not advertise by mDNS")
    host.add_argument(
        "--private",
        action="store_true",
        help="make a table code (like 4721-walnut) to read aloud: only who types it sits",
    )
    host.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a variant of the game (e.g. jokers=true, twos_reset=true for Bluff; "
        "decks=2, no_talking=true for Mao; time_limit=600 for the Bomb game)",
    )
    host.add_argument(
        "--start-after",
        type=float,
        default=None,
        metavar="SECONDS",
        help="start with the players seated by then, if the game allows that many",
    )
    _game_options(host)
    from .watch_serve import watch_port_options

    watch_port_options(host, count)
    host.set_defaults(handler=run_host)

    join = commands.add_parser(
        "join",
        help="take a seat at a table on the LAN (or go back to the one you hold)",
        description=(
            "Take a seat: with no TABLE, go back to a table you hold a seat at (after a "
            "crash or a quit), else the first open table found by mDNS; TABLE matches a "
            "table's name, its host's nickname or fingerprint, or a table id prefix. "
            "--connect HOST:PORT skips mDNS. In a terminal it opens the app (going back to a "
            "held table too); with --headless a bot plays your seat."
        ),
    )
    join.add_argument(
        "table",
        nargs="?",
        default=None,
        help="which table (see nodealer tables), or a private table's code (4721-walnut)",
    )
    join.add_argument("--connect", default=None, metavar="HOST:PORT", help="the host's lobby")
    join.add_argument(
        "--table-id",
        type=_table_id,
        default=None,
        metavar="HEX",
        help="the lobby must be this table (as advertised); else nothing is joined",
    )
    join.add_argument(
        "--host-fingerprint",
        type=_fingerprint,
        default=None,
        metavar="FP",
        help="the lobby's host must hold this key (as advertised); else nothing is joined",
    )
    join.add_argument(
        "--code",
        type=_code,
        default=None,
        metavar="CODE",
        help="a private table's code, as the host read it (like 4721-walnut)",
    )
    join.add_argument("--nickname", "--name", dest="nickname", default=None, help="your name")
    join.add_argument("--interface", default="0.0.0.0", help="address your game node listens on")
    join.add_argument(
        "--seconds", type=float, default=4.0, help="at most how long to look (joins once found)"
    )
    _common_options(join)
    join.set_defaults(handler=run_join)

    tables = commands.add_parser("tables", help="list the open tables found on the LAN")
    tables.add_argument("--seconds", type=float, default=3.0, help="how long to look")
    tables.add_argument("--interface", default=None, help="look on this local address only")
    tables.set_defaults(handler=run_tables)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0-65535)")
    return value


def _table_id(text: str) -> bytes:
    """A whole table id in hex, as an advert's ``tid`` (protocol.md §4)."""
    import re

    if not re.fullmatch(r"(?:[0-9a-f]{2}){1,64}", text.strip().lower()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a table id (1-64 bytes in hex)")
    return bytes.fromhex(text.strip())


def print_attempts(guesses: Any, shown: int) -> int:
    """Print the table-code tries ``guesses`` (p2p.lobby's GuessLimit)
    counted since ``shown`` of them were printed; returns how many are now."""
    from p2p.lobby.table_code import attempt_line

    new = min(guesses.total - shown, len(guesses.attempts))
    for attempt in guesses.attempts[len(guesses.attempts) - new :] if new > 0 else ():
        print(f"lobby: {attempt_line(attempt)}", file=sys.stderr, flush=True)
    return int(guesses.total)


def _code(text: str) -> str:
    """A private table's code (p2p/lobby/table_code.py), canonical."""
    from p2p.lobby import BadCode, parse_code

    try:
        return parse_code(text)
    except BadCode as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _table_or_code(table: str) -> tuple[str | None, str | None]:
    """``nodealer join TABLE``: a TABLE that reads as a table code
    (``4721-walnut``) is the code of a private table (found by mDNS, or at
    ``--connect``); anything else names a table. (table, code).

    >>> _table_or_code("4721-Walnut"), _table_or_code("ann")
    ((None, '4721-walnut'), ('ann', None))
    """
    from p2p.lobby import BadCode, parse_code

    try:
        return None, parse_code(table)
    except BadCode:
        return table, None


def _fingerprint(text: str) -> str:
    """A host's fingerprint, as an advert's ``fp`` (protocol.md §4)."""
    import re

    if not re.fullmatch(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){1,15}", text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a key fingerprint (XXXX-XXXX-…)")
    return text.strip()


def bell_option(parser: argparse.ArgumentParser) -> None:
    """``--bell/--no-bell``: the terminal bell's starting state at the table
    (ctrl+g still turns it off or on); neither: on in a terminal, as always."""
    parser.add_argument(
        "--bell",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="ring the terminal bell when it is your turn or a window opens (default: on; "
        "ctrl+g at the table turns it off or on)",
    )


def with_bell(app: Any, args: argparse.Namespace) -> Any:
    """The app, its bell starting as ``--bell``/``--no-bell`` said (if either)."""
    from .screens.common import set_bell

    if getattr(args, "bell", None) is not None:
        set_bell(app, args.bell)
    return app


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--headless", action="store_true", help="a bot plays (no screen)")
    bell_option(parser)
    parser.add_argument("--home", default=None, help="data folder (default: NODEALER_HOME)")
    parser.add_argument("--seed", type=int, default=0, help="the bot's seed (never the deal)")
    parser.add_argument(
        "--time-scale", type=float, default=1.0, help="real seconds per game second (timers)"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument(
        "--lang",
        choices=("en", "zh"),
        default="zh" if os.environ.get("NODEALER_LANG") == "zh" else "en",
        help="the language of the screens (zh: 中文; default NODEALER_LANG, else en)",
    )


def _game_options(parser: argparse.ArgumentParser) -> None:
    _common_options(parser)
    parser.add_argument("--unproven", action="store_true", help="skip the proofs (faster)")
    parser.add_argument("--rounds", type=int, default=None, help="Mao: end after R rounds")
    parser.add_argument(
        "--turn-time",
        type=int,
        default=None,
        metavar="S",
        help="a player idle S seconds on their turn has a sensible move made for them, "
        "marked auto (off by default)",
    )


def _nickname(given: str | None, command: str) -> str | None:
    """``--nickname`` (cut to 32 characters), else the name last chosen or
    the OS user's (a taken one is numbered by the host); None, said
    in one line on stderr, when the given one cannot be a nickname."""
    from p2p.lobby.messages import MAX_NICK, nickname_problem
    from table.names import default_name  # the name last chosen, else the login's

    if given is None:
        return default_name()
    name = given[:MAX_NICK].rstrip()
    problem = nickname_problem(name)
    if problem is not None:
        print(f"nodealer {command}: --nickname {given!r}: {problem}", file=sys.stderr)
        return None
    return name


def _home(args: argparse.Namespace) -> Path | None:
    if args.home is not None:
        home = Path(args.home)
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.environ["NODEALER_HOME"] = str(home)
        return home
    return None


def _player_for(seed: int) -> Any:
    from engines.core import game

    def make(settings: Any, seat: int) -> Any:
        bots = game(settings.game).sensible_bots(settings.seats, seed, _salt)  # seats as started
        bot = bots[seat]
        if settings.rounds is not None and hasattr(bot, "rounds"):
            bot.rounds = settings.rounds  # every seat's bot: the table agreed to it
        return bot

    return make


def _salt(n: int) -> bytes:
    import secrets

    return secrets.token_bytes(n)


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        print(text, flush=True)


def _update_printer(args: argparse.Namespace) -> Any:
    from .story import update_line
    from .storyteller import StoryTeller

    lang = getattr(args, "lang", "en")
    teller = StoryTeller()

    def show(update: Any) -> None:
        teller.names = getattr(args, "names", None)  # from the lobby, once seated
        if update.kind == "progress":  # progress goes to stderr
            if not args.quiet:
                print(update_line("progress", update.text, lang), file=sys.stderr, flush=True)
            return
        if args.quiet and update.kind in ("event", "stale"):
            return
        if update.kind == "event":
            for line in teller.tell(update.text, lang):
                print(f"  {line}", flush=True)
        else:
            print(update_line(update.kind, update.text, lang, teller.names), flush=True)

    return show


def _lobby_printer(args: argparse.Namespace) -> Any:
    from table.names import SeatNames

    from .watch_serve import spectators_text

    def show(state: Any) -> None:
        players = getattr(state, "players", ())
        if players:  # the story and the outcome read by name
            args.names = SeatNames(tuple(p.nickname for p in players),
                                   tuple(p.fingerprint for p in players))  # fmt: skip
        seated = ", ".join(f"{p.seat}: {p.nickname} ({p.fingerprint})" for p in players)
        watch = spectators_text(getattr(state, "watch", None), getattr(state, "watching", 0),
                                getattr(args, "lang", "en"))  # fmt: skip
        watch = f" - {watch}" if watch else ""
        _say(args, f"lobby: {state.taken}/{state.seats} seated - {seated}{watch}")

    return show


def _names_of(seat: Any) -> Any:
    """The seats' names a finished seat knows (the lobby's, or its store's)."""
    from table.names import SeatNames, names_of_log

    seated = getattr(seat, "seated", None)
    if seated is not None:
        return SeatNames(tuple(seated.nicknames), (), seated.seat)
    return names_of_log(seat.log_path)


def _finish(args: argparse.Namespace, seat: Any) -> int:
    from table.verify import verify_log

    from .story import result_text, verify_line

    result = seat.result
    names = _names_of(seat)
    print(result_text(str(result), getattr(args, "lang", "en"), names))
    print(f"saved log: {seat.log_path}")
    report = verify_log(seat.log_path)
    print(f"verify: {verify_line(report.lines()[-1], getattr(args, 'lang', 'en'), names)}")
    if report.exit_code == EXIT_CHEATING or result.faults or not result.audit.ok:
        return EXIT_CHEATING
    return EXIT_CLEAN if result.clean and report.exit_code == EXIT_CLEAN else EXIT_PROBLEM


def _screen_for(args: argparse.Namespace, game_name: str | None) -> bool:
    """Whether this seat is played on a screen (else a bot plays it, noted)."""
    if args.headless:
        return False
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("note: not a terminal - a sensible bot plays your seat (as with --headless)",
              file=sys.stderr)  # fmt: skip
        return False
    if game_name is not None:
        from .table_app import table_screens

        if game_name not in table_screens():
            print(
                f"note: no table screen for {game_name} on this machine yet - a sensible bot "
                "plays your seat (as with --headless)",
                file=sys.stderr,
            )
            return False
    return True


def _check_port(interface: str, port: int) -> str | None:
    """Why the lobby cannot listen on ``interface:port``, or None (checked
    before anything starts, so a port in use changes nothing)."""
    import socket

    family = socket.AF_INET6 if ":" in interface else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((interface, port))
    except OSError as exc:
        return f"cannot listen on {interface}:{port}: {exc.strerror or exc}"
    return None


def _run_app(args: argparse.Namespace, app: Any, command: str) -> int:
    with_bell(app, args).run()
    if app.problem is not None:
        print(f"nodealer {command}: {app.problem}", file=sys.stderr)
        return EXIT_PROBLEM
    if app.result is not None:
        from .story import result_text

        names = app.names or _names_of(app.result)
        print(result_text(str(app.result.result), getattr(args, "lang", "en"), names))
        print(f"saved log: {app.result.log_path}")
    elif app.seat is not None and app.table_screen is not None:
        print(f"nodealer {command}: you left the table before it ended; its log is kept "
              "(nodealer join goes back to it)", file=sys.stderr)  # fmt: skip
    else:
        print(f"nodealer {command}: you left the waiting room", file=sys.stderr)
    return int(app.exit_code)


def run_host(args: argparse.Namespace) -> int:
    import trio

    from engines.core import game
    from p2p.identity import Identity
    from table.seating import GameSettings, SeatingError, host_table

    nickname = _nickname(args.nickname, "host")
    if nickname is None:
        return EXIT_PROBLEM
    home = _home(args)
    engine = game(args.game)
    players = args.players or engine.default_seats
    name = args.name or f"{nickname}'s {args.game.capitalize()} table"
    try:
        config = parse_config(engine, args.config)
    except ValueError as exc:
        print(f"nodealer host: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    if args.rounds is not None and args.game != "mao":
        print("nodealer host: --rounds is for Mao", file=sys.stderr)
        return EXIT_PROBLEM
    try:
        settings = GameSettings(
            args.game, players, config, not args.unproven, name, args.rounds, args.turn_time
        )
    except SeatingError as exc:
        print(f"nodealer host: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    busy = _check_port(args.interface, args.port)
    if busy is not None:
        print(f"nodealer host: {busy} (choose another --port, or 0 for any free one)",
              file=sys.stderr)  # fmt: skip
        return EXIT_PROBLEM
    from .watch_serve import watch_request

    watch = watch_request(args)  # --watch-port / --spectators
    if args.private and watch is not None:  # spectators would need the code too
        print("nodealer host: a private table takes no spectators (its log would reach "
              "anyone who finds the watch port): leave out --watch-port/--spectators or "
              "--private", file=sys.stderr)  # fmt: skip
        return EXIT_PROBLEM
    code = None
    if args.private:
        from p2p.lobby import new_code

        code = args.code = new_code()  # never leaves this screen: read it aloud
    identity = Identity.load_or_create()
    if _screen_for(args, args.game):
        from .table_app import HostPlan, TableApp

        def advertise(lobby: Any, note: Callable[[str], None]) -> Any:
            if args.no_advertise:
                return trio.sleep(0)
            return _advertise(args, settings, identity, nickname, lobby, note)

        app = TableApp(
            HostPlan(
                settings,
                args.interface,
                args.port,
                min_seats=engine.min_seats,
                code=code,
                watch=watch,
            ),
            identity=identity,
            home=home,
            nickname=nickname,
            time_scale=args.time_scale,
            bot_for=_player_for(args.seed),
            advertise=advertise,
            lang=args.lang,
        )
        return _run_app(args, app, "host")

    async def main() -> Any:
        async with trio.open_nursery() as nursery:
            opened = trio.Event()
            where: list[Any] = []
            servers: list[Any] = []  # the watch port (--watch-port, --spectators)
            lobby_options: dict[str, Any] = {}
            if watch is not None:  # open before the lobby: its port goes into every lobby
                from .watch_serve import HostWatch, serving_line

                watching = HostWatch(home, *watch)
                servers.append(await watching.open(nursery))
                print(serving_line(servers[0], args.lang), flush=True)
                lobby_options = watching.lobby_options()

            def on_lobby(lobby: Any) -> None:
                where.append(lobby)
                opened.set()
                if watch is not None:
                    nursery.start_soon(watching.tell, lobby)
                if args.start_after is not None:
                    nursery.start_soon(start_later, lobby)
                if code is not None:
                    nursery.start_soon(show_wrong_codes, lobby)

            async def show_wrong_codes(lobby: Any) -> None:
                """The host sees every counted table-code try (from where, which
                try): read from the guess counter only, never from text a
                connection sent."""
                shown = 0
                while True:
                    await trio.sleep(0.2)
                    shown = print_attempts(lobby.machine.guesses, shown)

            async def start_later(lobby: Any) -> None:
                from p2p.lobby import NotEnoughPlayers

                await trio.sleep(args.start_after)
                try:
                    lobby.start()
                except NotEnoughPlayers as exc:
                    print(f"note: not started early: {exc}", file=sys.stderr)

            async def advertise_while_open() -> None:
                await opened.wait()
                if args.no_advertise:
                    return
                await _advertise(args, settings, identity, nickname, where[0])

            nursery.start_soon(advertise_while_open)
            seat = await host_table(
                identity,
                settings,
                home=home,
                nickname=nickname,
                host=args.interface,
                port=args.port,
                player=_player_for(args.seed)(settings, 0),
                time_scale=args.time_scale,
                on_lobby=lambda lobby: (on_lobby(lobby), _announce(args, settings, lobby)),
                on_change=_lobby_printer(args),
                on_update=_update_printer(args),
                min_seats=engine.min_seats,
                code=code,
                **lobby_options,
            )
            from .watch_serve import linger

            await linger(servers)  # the spectators get the end
            nursery.cancel_scope.cancel()
            return seat

    return _finish(args, trio.run(main))


def _announce(args: argparse.Namespace, settings: Any, lobby: Any) -> None:
    host = lobby.host
    if host in ("0.0.0.0", "::", ""):
        from p2p.discovery import local_addresses
        from p2p.netroute import lan_address  # the one mDNS leaves by (not docker0)

        host = lan_address([a for _, a in local_addresses()]) or "<this machine's address>"
    print(f"{settings}", flush=True)
    print(f"lobby open on {args.interface}:{lobby.port}; others join with:", flush=True)
    print("  nodealer join                       (same LAN, found by mDNS)", flush=True)
    print(f"  nodealer join --connect {host}:{lobby.port}", flush=True)
    code = getattr(args, "code", None)
    if code is not None:
        print(f"private table, code: {code}   (read it aloud; it never leaves this screen)",
              flush=True)  # fmt: skip
        print(f"  nodealer join --code {code}          (add it to either line above)",
              flush=True)  # fmt: skip


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


async def _advertise(
    args: argparse.Namespace,
    settings: Any,
    identity: Any,
    nickname: str,
    lobby: Any,
    note: Callable[[str], None] = _stderr,
) -> None:
    """Advertise the lobby while it takes seats; withdrawn (goodbye) once the
    table starts, unless it takes spectators: then it is republished as
    playing (``play=1``) and withdrawn when the table ends (this task is
    cancelled). ``note`` says why it could not be advertised."""
    from dataclasses import replace

    import trio

    from p2p.discovery import DiscoveryError, TableAd, advertise
    from p2p.lobby import Phase

    watch = lobby.state.watch  # (port, at most N): the table takes spectators

    if args.interface in ("0.0.0.0", "::", ""):
        from p2p.discovery import local_addresses
        from p2p.netroute import lan_address  # the one mDNS leaves by (not docker0)

        found = lan_address([a for _, a in local_addresses()])
        if found is None:
            note("note: no LAN address to advertise on; use --connect")
            return
        address = found
    else:
        address = args.interface
    ad = TableAd(
        lobby.table_id,
        settings.game,
        lobby.state.taken,
        settings.seats,
        identity.public.fingerprint,
        address,
        lobby.port,
        name=_fit(settings.name),
        host_name=_fit(nickname),
        proven=settings.proven,
        private=getattr(args, "code", None) is not None,  # the code itself never leaves
        watch_port=None if watch is None else watch[0],
        spectators=0 if watch is None else watch[1],
    )
    try:
        async with advertise(ad) as advert:
            while lobby.state.phase is not Phase.STARTED:
                await trio.sleep(0.25)
                taken = lobby.state.taken
                if taken != advert.ad.seats_taken and lobby.state.phase is Phase.OPEN:
                    await advert.update(taken)
                if watch is None and lobby.state.phase is not Phase.OPEN:
                    return  # withdrawn: nothing more to find here
            # a table that takes spectators stays listed to watch, until it ends
            await advert.republish(replace(advert.ad, seats_taken=lobby.state.taken,
                                           playing=True))  # fmt: skip
            await trio.sleep_forever()
    except DiscoveryError as exc:
        note(f"note: not advertised on the LAN ({exc}); use --connect")


def _fit(text: str, limit: int = 63) -> str:
    """Text cut to fit an advert's name field (UTF-8 bytes)."""
    data = text.encode()[:limit]
    return data.decode(errors="ignore")


def _is_asked_for(held: Any, args: argparse.Namespace) -> bool:
    """Whether a held table is the one ``join`` names, if it names one: the
    table id prefix, ``--table-id`` and ``--host-fingerprint`` (the host holds
    seat 0) must all match, so an advert's table is never swapped for another
    table this identity happens to hold."""
    spec = held.spec
    if args.table is not None and not spec.table_id.hex().startswith(args.table.lower()):
        return False
    if args.table_id is not None and spec.table_id != args.table_id:
        return False
    return args.host_fingerprint is None or spec.seats[0].fingerprint == args.host_fingerprint


def run_join(args: argparse.Namespace) -> int:
    import trio

    from p2p.discovery import BadHostPort, parse_hostport
    from p2p.identity import Identity
    from table.seating import held_tables, join_table, resume_table

    if args.connect is not None:
        try:
            where = parse_hostport(args.connect)
        except BadHostPort as exc:
            print(f"nodealer join: --connect {args.connect!r}: {exc}", file=sys.stderr)
            return EXIT_PROBLEM
    nickname = _nickname(args.nickname, "join")
    if nickname is None:
        return EXIT_PROBLEM
    home = _home(args)
    if args.table is not None and args.code is None:
        args.table, args.code = _table_or_code(args.table)
    identity = Identity.load_or_create()
    player_for = _player_for(args.seed)
    bind = args.interface
    options: dict[str, Any] = {
        "time_scale": args.time_scale,
        "on_update": _update_printer(args),
    }

    def in_app(plan: Any) -> int:
        """The join (or the way back to a held table) in the table app."""
        from .table_app import TableApp

        app = TableApp(
            plan,
            identity=identity,
            home=home,
            nickname=nickname,
            time_scale=args.time_scale,
            bot_for=player_for,
            lang=args.lang,
        )
        return _run_app(args, app, "join")

    held = [t for t in held_tables(identity, home) if _is_asked_for(t, args)]
    if args.connect is not None:  # a table held there goes on (its lobby closed at the start)
        from table.going_back import held_at

        held = held_at(where.host, where.port, held)
    if held:
        table = held[0]
        print(f"going back to {table.settings} (seat {table.seat})", flush=True)
        if _screen_for(args, table.settings.game):
            from .table_app import ResumePlan

            return in_app(ResumePlan(table, bind))
        seat = trio.run(
            lambda: resume_table(
                identity, table, home=home, bind=bind, player_for=player_for, **options
            )
        )
        return _finish(args, seat)
    if args.connect is None:
        found = trio.run(_find, args)
        if found is None:
            print(
                "nodealer join: no open table found on the LAN; is the host's lobby open? "
                "(or use --connect HOST:PORT)",
                file=sys.stderr,
            )
            return EXIT_PROBLEM
        host, port = found.address, found.port
        # the lobby there must be the table advertised (anyone may answer an address)
        expect_table = args.table_id or found.table_id
        expect_host = args.host_fingerprint or found.host_fingerprint
    else:
        host, port = where.host, where.port
        expect_table, expect_host = args.table_id, args.host_fingerprint
    if _screen_for(args, None):
        from .table_app import JoinPlan

        return in_app(JoinPlan(host, port, bind, expect_table, expect_host, args.code))
    seat = trio.run(
        lambda: join_table(
            identity,
            host,
            port,
            home=home,
            nickname=nickname,
            bind=bind,
            player_for=player_for,
            on_change=_lobby_printer(args),
            expect_table=expect_table,
            expect_host=expect_host,
            code=args.code,
            **options,
        )
    )
    return _finish(args, seat)


async def _find(args: argparse.Namespace) -> Any:
    """The table ``join`` asks for, as soon as it answers (a TableAd, or None)."""
    from p2p.discovery import find_table

    def wanted(ad: Any) -> bool:
        if not ad.takes_seats or (args.code is not None and not ad.private):
            return False
        if args.table_id is not None and ad.table_id != args.table_id:
            return False
        if args.host_fingerprint is not None and ad.host_fingerprint != args.host_fingerprint:
            return False
        return args.table is None or ad.matches(args.table)

    interface = None if args.interface in ("0.0.0.0", "::", "") else args.interface
    # with a code: a private table; without: a public one first (a private
    # one then says it needs a code)
    return await find_table(wanted, args.seconds, interface,
                            first=lambda ad: ad.private != (args.code is not None))  # fmt: skip


def run_tables(args: argparse.Namespace) -> int:
    import trio

    from p2p.discovery import find_tables

    ads = trio.run(find_tables, args.seconds, args.interface)
    if not ads:
        print("no open tables found")
    for ad in ads:
        print(f"{ad.table_id.hex()[:8]}  {ad}")
    return EXIT_CLEAN
