"""An AES-GCM payload codec whose keys carry ids, so a namespace's keys can rotate.

Each payload is serialised whole (metadata and data), sealed with the current key under a
fresh 96-bit nonce, and stored as ``nonce + ciphertext`` with the key's id in the metadata
(``encryption-key-id``, also bound to the ciphertext as associated data). Decoding picks the
key by that id, so payloads written under an older key stay readable while it is kept.
Payloads that are not encrypted (written before the codec was turned on) pass through.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_BYTES = 12
KEY_BYTES = (16, 24, 32)
KEY_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class CodecKeyError(ValueError):
    """Payload keys are missing, malformed or cannot open a payload; the message says which."""


class UnknownCodecKeyError(CodecKeyError):
    """A payload was sealed with a key id this process does not hold."""

    def __init__(self, key_id: str, known: Iterable[str]) -> None:
        super().__init__(
            f"a payload is encrypted with key {key_id!r}, which this process does not have "
            f"(it has: {', '.join(known) or 'none'}); add that key to ASSAY_CODEC_KEYS or "
            "ASSAY_CODEC_KEY_FILE (after the current one) to read it")
        self.key_id = key_id


class PayloadDecryptionError(CodecKeyError):
    """A payload did not authenticate under the key its id names: a wrong key, or tampering."""

    def __init__(self, key_id: str) -> None:
        super().__init__(
            f"a payload did not decrypt with key {key_id!r}: the key configured under that id "
            "is not the one that encrypted it (or the payload was altered); check "
            "ASSAY_CODEC_KEYS / ASSAY_CODEC_KEY_FILE")
        self.key_id = key_id


class KeyRing:
    """Named AES keys; the first encrypts, every one decrypts."""

    def __init__(self, keys: Sequence[tuple[str, bytes]]) -> None:
        if not keys:
            raise CodecKeyError("no payload key given: set ASSAY_CODEC_KEYS to ID=BASE64 (a key "
                                "of 32 random bytes), or ASSAY_CODEC_KEY_FILE")
        self._keys: dict[str, AESGCM] = {}
        for key_id, key in keys:
            if not KEY_ID_PATTERN.match(key_id):
                raise CodecKeyError(f"payload key id {key_id!r} must be 1-64 letters, digits, "
                                    "'.', '_' or '-'")
            if len(key) not in KEY_BYTES:
                raise CodecKeyError(f"payload key {key_id!r} is {len(key)} bytes; AES-GCM takes "
                                    "16, 24 or 32 (use 32)")
            if key_id in self._keys:
                raise CodecKeyError(f"payload key id {key_id!r} is given twice")
            self._keys[key_id] = AESGCM(key)
        self.current = keys[0][0]

    @classmethod
    def parse(cls, text: str, *, source: str) -> KeyRing:
        """Keys from ``ID=BASE64`` entries separated by commas or new lines (``#`` comments)."""
        entries: list[tuple[str, bytes]] = []
        for raw in re.split(r"[,\n]", text):
            entry = raw.split("#", 1)[0].strip()
            if not entry:
                continue
            key_id, sep, encoded = entry.partition("=")
            if not sep:
                raise CodecKeyError(f"{source}: an entry is not ID=BASE64 (the key's id, '=', "
                                    "then the key in base64)")
            try:
                key = base64.b64decode(encoded.strip(), validate=True)
            except binascii.Error:
                raise CodecKeyError(f"{source}: the key of {key_id.strip()!r} is not "
                                    "base64") from None
            entries.append((key_id.strip(), key))
        if not entries:
            raise CodecKeyError(f"{source} holds no key")
        try:
            return cls(entries)
        except CodecKeyError as err:
            raise CodecKeyError(f"{source}: {err}") from None

    @property
    def ids(self) -> list[str]:
        """Every key id, the current first."""
        return list(self._keys)

    def seal(self, plain: bytes) -> bytes:
        """``plain`` encrypted with the current key: nonce then ciphertext and tag."""
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._keys[self.current].encrypt(nonce, plain, self.current.encode())

    def open(self, key_id: str, sealed: bytes) -> bytes:
        """What :meth:`seal` sealed under ``key_id``."""
        aead = self._keys.get(key_id)
        if aead is None:
            raise UnknownCodecKeyError(key_id, self.ids)
        try:
            return aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], key_id.encode())
        except InvalidTag:
            raise PayloadDecryptionError(key_id) from None


def new_key() -> str:
    """A fresh 32-byte key in base64, for ``ID=...`` in ASSAY_CODEC_KEYS."""
    return base64.b64encode(os.urandom(32)).decode()


class EncryptionCodec(PayloadCodec):
    """Encrypts every payload with the ring's current key; decrypts by the payload's key id."""

    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each payload sealed whole, its key id beside it."""
        return [Payload(metadata={"encoding": ENCODING, KEY_ID: self.ring.current.encode()},
                        data=self.ring.seal(p.SerializeToString())) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each encrypted payload opened; plaintext ones (written before) as they are."""
        return [self._open(p) for p in payloads]

    def _open(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        key_id = payload.metadata.get(KEY_ID)
        if not key_id:
            raise CodecKeyError(f"an encrypted payload carries no {KEY_ID!r}: it was not "
                                "written by Assay's codec")
        return Payload.FromString(self.ring.open(key_id.decode(), payload.data))
