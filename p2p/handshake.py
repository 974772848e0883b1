"""The connection handshake: prove key possession, agree on table and version.

Theory of operation
-------------------
The handshake is symmetric and sans-I/O. On a fresh TCP connection each side
sends ``hello`` at once: protocol version, table id, its public key, a fresh
32-byte nonce from ``secrets`` and the TCP port it listens on. On the other
side's hello, a side checks that the version and table id are its own and
that the key holds a seat, is not banned and is not its own; then it sends
``auth``: its signature over
``canonical("nodealer/handshake", version, table id, own key, peer key,
peer nonce, own nonce)``. On the peer's auth it checks that signature with
the peer's nonce - fresh, chosen by itself - so the peer holds the key now.
Both keys are in the signed bytes, so an auth cannot be reflected back.

Any failure raises :class:`HandshakeError` with the reason; the node logs it
and closes the connection. The handshake does not encrypt or MAC the
connection: every message that changes state is itself signed (§3), so a
connection only needs to know whose messages to expect.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from typing import Any

from p2p.envelope import TableSpec
from p2p.identity import Identity, PeerKey
from p2p.wire import WireError, canonical, message

HANDSHAKE_TAG = "nodealer/handshake"


class HandshakeError(WireError):
    """The peer failed the handshake (wrong table, version, key or proof)."""


class Handshake:
    """One side of one connection's handshake."""

    def __init__(
        self,
        identity: Identity,
        table: TableSpec,
        listen_port: int = 0,
        banned: Collection[PeerKey] = (),
    ) -> None:
        self.identity = identity
        self.table = table
        self.listen_port = listen_port
        self.banned = frozenset(banned)
        self.nonce = secrets.token_bytes(32)
        self.peer_key: PeerKey | None = None
        self.peer_seat: int | None = None
        self.peer_port: int = 0
        self._peer_nonce: bytes | None = None
        self.done = False

    def hello(self) -> dict[str, Any]:
        """The first message to send."""
        return message(
            "hello",
            v=self.table.version,
            table=self.table.table_id,
            key=self.identity.public.raw,
            nonce=self.nonce,
            port=self.listen_port,
        )

    def _transcript(self, signer: PeerKey, verifier: PeerKey, v_nonce: bytes, s_nonce: bytes):
        return canonical(
            HANDSHAKE_TAG,
            self.table.version,
            self.table.table_id,
            signer.raw,
            verifier.raw,
            v_nonce,
            s_nonce,
        )

    def receive(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """Take the peer's next message; return what to send back (or None).

        Raises :class:`HandshakeError` on anything wrong."""
        if self.done:
            raise HandshakeError("handshake already complete")
        if self._peer_nonce is None:
            return self._on_hello(msg)
        return self._on_auth(msg)

    def _on_hello(self, msg: dict[str, Any]) -> dict[str, Any]:
        if msg["k"] != "hello":
            raise HandshakeError(f"expected hello, got {msg['k']!r}")
        if msg["v"] != self.table.version:
            raise HandshakeError(
                f"peer speaks protocol version {msg['v']}, we speak {self.table.version}"
            )
        if msg["table"] != self.table.table_id:
            raise HandshakeError(f"peer is at another table ({msg['table'].hex()[:16]})")
        try:
            key = PeerKey(msg["key"])
        except ValueError as exc:
            raise HandshakeError(f"peer sent an unusable public key: {exc}") from exc
        if key in self.banned:
            raise HandshakeError(f"peer {key} is banned")
        if key == self.identity.public:
            raise HandshakeError("peer presented our own key")
        seat = self.table.seat_of(key)
        if seat is None:
            raise HandshakeError(f"peer {key} holds no seat at this table")
        self.peer_key, self.peer_seat, self.peer_port = key, seat, msg["port"]
        self._peer_nonce = msg["nonce"]
        sig = self.identity.sign(
            self._transcript(self.identity.public, key, self._peer_nonce, self.nonce)
        )
        return message("auth", s=sig)

    def _on_auth(self, msg: dict[str, Any]) -> None:
        if msg["k"] != "auth":
            raise HandshakeError(f"expected auth, got {msg['k']!r}")
        assert self.peer_key is not None and self._peer_nonce is not None
        data = self._transcript(self.peer_key, self.identity.public, self.nonce, self._peer_nonce)
        if not self.peer_key.verify(msg["s"], data):
            raise HandshakeError(f"peer {self.peer_key} did not prove possession of its key")
        self.done = True
        return None
