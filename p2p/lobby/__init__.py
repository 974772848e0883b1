"""The lobby: from "a host on the LAN and some people who want to play" to a
table every seat has agreed to.

Theory of operation
-------------------
The host opens a lobby (a TCP port) for an opaque *settings* map (the game,
its configuration: the lobby never looks inside) and a number of seats. A
joiner connects and both sides run the handshake of :mod:`p2p.handshake` in
its lobby mode: the same proof of both keys and the same sealed channel, but
any key is admitted (a lobby has no seats yet) and the transcript and channel
carry their own tags, so nothing signed in a lobby handshake verifies as a
table handshake or the reverse. Every later frame is sealed.

1. The host sends ``lobby`` (table id, settings, seats, who is seated) at
   once. The joiner checks the settings against what it expects and sends
   ``request``: nickname, the settings digest it agrees to, the port its game
   node will listen on, signed by its key. The host seats it (``lobby`` to
   every seated joiner) or answers ``refused`` with a reason and closes.
2. When every seat is taken (or the host calls :meth:`LobbyHost.start` with
   at least ``min_seats`` seated) the host sends ``spec``: the table id, every
   seat's key, nickname and address, the settings digest, signed by the host.
   Each joiner checks it against the last ``lobby`` and its own request and
   answers ``agree`` (its signature over the spec) or ``refused`` (and
   leaves). A joiner that leaves before the start loses its seat, the later
   ones move up, and a spec in flight is void (a new one follows).
3. Once every seat agreed, the host sends ``start`` with all the agreements;
   each joiner verifies every one. Only then do both sides return the same
   :class:`SeatedTable`, enough to start a :class:`p2p.node.Node`.

A *private* table (``code=``, :mod:`p2p.lobby.table_code`) runs SPAKE2 on
the table code before step 1, bound to the table id and both keys: only a
joiner who proves it knows the code sees the table, and a joiner only sits
at a host that proves it knows the code too. Every exchange is a try
counted when the host sends ``pake`` (given back if the code is right), per
address and in all: an address out of tries is not answered for a while,
and a table out of tries in all says it is paused, for how long.

The exact messages, signatures, checks and limits are in protocol.md §4 (the
lobby). As in :mod:`p2p.log` and :mod:`p2p.node`, the rules are sans-I/O
(:class:`LobbyHostMachine`, :class:`LobbyJoinerMachine`: bytes and time in,
effects out) and the trio drivers (:func:`host_lobby`, :func:`join_lobby`)
only move bytes. Anything malformed or refused closes that one connection
with a clear reason and changes nothing else. Strangers cannot cost the host
much: at most ``PENDING_TOTAL`` connections not yet seated (``PENDING_PER_HOST``
per remote address), each bound by ``request_timeout``, with frames of at
most ``JOINER_FRAME`` bytes.
"""

from __future__ import annotations

from .drivers import (
    LobbyHost,
    host_lobby,
    join_lobby,
)
from .machines import (
    LobbyHostMachine,
    LobbyJoinerMachine,
)
from .messages import (
    AlreadySeated,
    BadHostMessage,
    BadSpec,
    HostLeft,
    HostUnreachable,
    LobbyError,
    LobbyState,
    NicknameTaken,
    NotEnoughPlayers,
    Phase,
    Player,
    PrivateTable,
    Refused,
    Removed,
    SeatedTable,
    SettingsChanged,
    SettingsMismatch,
    TableFull,
    VersionMismatch,
    WrongCode,
    WrongHost,
    canonical_settings,
    settings_digest,
)
from .table_code import BadCode, new_code, parse_code

__all__ = [
    "AlreadySeated",
    "BadCode",
    "BadHostMessage",
    "BadSpec",
    "HostLeft",
    "HostUnreachable",
    "LobbyError",
    "LobbyHost",
    "LobbyHostMachine",
    "LobbyJoinerMachine",
    "LobbyState",
    "NicknameTaken",
    "NotEnoughPlayers",
    "Phase",
    "Player",
    "PrivateTable",
    "Refused",
    "Removed",
    "SeatedTable",
    "SettingsChanged",
    "SettingsMismatch",
    "TableFull",
    "VersionMismatch",
    "WrongCode",
    "WrongHost",
    "canonical_settings",
    "host_lobby",
    "join_lobby",
    "new_code",
    "parse_code",
    "settings_digest",
]
