"""The connection handshake: prove key possession, agree on table and version.

Theory of operation
-------------------
The handshake is symmetric and sans-I/O. On a fresh TCP connection each side
sends ``hello`` at once: protocol version, table id, its public key, a fresh
32-byte nonce from ``secrets``, a fresh X25519 key for this connection only
and the TCP port it listens on. On the other side's hello, a side checks that
the version and table id are its own and that the key holds a seat, is not
banned and is not its own; then it sends ``auth``: its signature over
``canonical("nodealer/handshake", version, table id, own key, peer key,
peer nonce, own nonce, own X25519 key, peer X25519 key, own port, peer
port)`` - every field of both hellos. On the peer's auth
it checks that signature with the peer's nonce - fresh, chosen by itself - so
the peer holds the key now. Both keys are in the signed bytes, so an auth
cannot be reflected back.

A relay (someone who forwards each side's hello and auth to the other) would
pass that check, so the connection is bound to the handshake: both sides
derive two keys (one per direction) from the X25519 exchange and seal every
later frame with ChaCha20-Poly1305 (:class:`Channel`). The relay knows
neither ephemeral secret: it can pass ciphertext on unchanged, or drop it,
but not read, inject, replay or reorder anything - and a relay that swaps in
its own X25519 keys breaks the signatures. Messages that change state are
still signed themselves (§3), which is what a saved log is checked with.

Any failure raises :class:`HandshakeError` with the reason; the node logs it
and closes the connection.

A *lobby* handshake (``lobby=True``, :mod:`p2p.lobby`) is the same exchange
for a table that has no seats yet: any key but our own (or a banned one) is
admitted and ``peer_seat`` stays None. Its transcript and channel use their
own tags (``nodealer/lobby-handshake``, ``nodealer/lobby-channel``), so a
lobby handshake never verifies as a table handshake, nor the reverse.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from p2p.envelope import TableSpec
from p2p.identity import Identity, PeerKey
from p2p.wire import MalformedFrame, WireError, canonical, message

HANDSHAKE_TAG = "nodealer/handshake"
CHANNEL_TAG = "nodealer/channel"
LOBBY_HANDSHAKE_TAG = "nodealer/lobby-handshake"
LOBBY_CHANNEL_TAG = "nodealer/lobby-channel"


class Channel:
    """Seals the frames we send and opens the peer's, after a handshake: one
    ChaCha20-Poly1305 key per direction, the frame's number as the nonce."""

    def __init__(self, send_key: bytes, receive_key: bytes) -> None:
        self._send = ChaCha20Poly1305(send_key)
        self._receive = ChaCha20Poly1305(receive_key)
        self._sent = 0
        self._received = 0

    def seal(self, payload: bytes) -> bytes:
        nonce = self._sent.to_bytes(12, "big")
        self._sent += 1
        return self._send.encrypt(nonce, payload, None)

    def open(self, sealed: bytes) -> bytes:
        """The payload, or :class:`MalformedFrame` if it is not the peer's next frame."""
        try:
            payload = self._receive.decrypt(self._received.to_bytes(12, "big"), sealed, None)
        except InvalidTag:
            raise MalformedFrame(
                "frame failed authentication: not sealed by the peer of this handshake"
            ) from None
        self._received += 1
        return payload


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
        *,
        lobby: bool = False,
    ) -> None:
        self.identity = identity
        self.table = table
        self.lobby = lobby  # admit any key, under the lobby's own tags
        self._tag = LOBBY_HANDSHAKE_TAG if lobby else HANDSHAKE_TAG
        self._channel_tag = LOBBY_CHANNEL_TAG if lobby else CHANNEL_TAG
        self.listen_port = listen_port
        self.banned = frozenset(banned)
        self.nonce = secrets.token_bytes(32)
        self._ephemeral = X25519PrivateKey.generate()
        self.ephemeral = self._ephemeral.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.channel: Channel | None = None  # once done
        self._peer_ephemeral = b""
        self._keys: tuple[bytes, bytes] | None = None
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
            eph=self.ephemeral,
            port=self.listen_port,
        )

    def _transcript(
        self,
        signer: PeerKey,
        verifier: PeerKey,
        v_nonce: bytes,
        s_nonce: bytes,
        s_eph: bytes,
        v_eph: bytes,
        s_port: int,
        v_port: int,
    ) -> bytes:
        return canonical(
            self._tag,
            self.table.version,
            self.table.table_id,
            signer.raw,
            verifier.raw,
            v_nonce,
            s_nonce,
            s_eph,
            v_eph,
            s_port,
            v_port,
        )

    def _derive_keys(self, peer: PeerKey, peer_nonce: bytes, peer_eph: bytes) -> None:
        try:
            shared = self._ephemeral.exchange(X25519PublicKey.from_public_bytes(peer_eph))
        except ValueError as exc:  # a low-order point: no shared secret
            raise HandshakeError(f"peer {peer} sent an unusable X25519 key") from exc
        mine = (self.identity.public.raw, self.nonce, self.ephemeral)
        theirs = (peer.raw, peer_nonce, peer_eph)
        low, high = sorted([mine, theirs])
        info = canonical(self._channel_tag, self.table.version, self.table.table_id, *low, *high)
        okm = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=info).derive(shared)
        low_to_high, high_to_low = okm[:32], okm[32:]
        self._keys = (low_to_high, high_to_low) if mine == low else (high_to_low, low_to_high)

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
        seat = None if self.lobby else self.table.seat_of(key)
        if seat is None and not self.lobby:
            raise HandshakeError(f"peer {key} holds no seat at this table")
        self._derive_keys(key, msg["nonce"], msg["eph"])
        self.peer_key, self.peer_seat, self.peer_port = key, seat, msg["port"]
        self._peer_nonce, self._peer_ephemeral = msg["nonce"], msg["eph"]
        sig = self.identity.sign(
            self._transcript(
                self.identity.public,
                key,
                self._peer_nonce,
                self.nonce,
                self.ephemeral,
                self._peer_ephemeral,
                self.listen_port,
                self.peer_port,
            )
        )
        return message("auth", s=sig)

    def _on_auth(self, msg: dict[str, Any]) -> None:
        if msg["k"] != "auth":
            raise HandshakeError(f"expected auth, got {msg['k']!r}")
        assert self.peer_key is not None and self._peer_nonce is not None
        assert self._keys is not None
        data = self._transcript(
            self.peer_key,
            self.identity.public,
            self.nonce,
            self._peer_nonce,
            self._peer_ephemeral,
            self.ephemeral,
            self.peer_port,
            self.listen_port,
        )
        if not self.peer_key.verify(msg["s"], data):
            raise HandshakeError(f"peer {self.peer_key} did not prove possession of its key")
        self.channel = Channel(*self._keys)
        self.done = True
        return None
