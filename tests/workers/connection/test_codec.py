"""The payload codec: sealing, key ids and rotation, and the errors of a wrong or missing key."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure

from client.assay import DATA_CONVERTER
from workers.connection import (
    CodecKeyError,
    EncryptionCodec,
    KeyRing,
    PayloadDecryptionError,
    UnknownCodecKeyError,
    data_converter,
    key_ring,
)
from workers.connection.codec import ENCODING, KEY_ID
from workers.settings import Settings

MARKER = "okapi-canary-5d1e"
K1 = base64.b64encode(b"1" * 32).decode()
K2 = base64.b64encode(b"2" * 32).decode()


def plain(text: str) -> Payload:
    return DATA_CONVERTER.payload_converter.to_payloads([text])[0]


async def test_a_sealed_payload_hides_its_bytes_and_opens_to_the_same_payload() -> None:
    codec = EncryptionCodec(KeyRing.parse(f"k1={K1}", source="test"))
    original = plain(f"the plan mentions {MARKER}")
    [sealed] = await codec.encode([original])
    assert sealed.metadata["encoding"] == ENCODING and sealed.metadata[KEY_ID] == b"k1"
    assert MARKER.encode() not in sealed.SerializeToString()
    [opened] = await codec.decode([sealed])
    assert opened == original
    again = await codec.encode([original])
    assert again[0].data != sealed.data  # a fresh nonce each time


async def test_rotation_encrypts_with_the_new_key_and_still_reads_the_old() -> None:
    old = EncryptionCodec(KeyRing.parse(f"k1={K1}", source="test"))
    [written_before] = await old.encode([plain(MARKER)])
    rotated = EncryptionCodec(KeyRing.parse(f"k2={K2}\nk1={K1}  # kept while k1 payloads live",
                                            source="test"))
    assert rotated.ring.ids == ["k2", "k1"]
    [written_after] = await rotated.encode([plain(MARKER)])
    assert written_after.metadata[KEY_ID] == b"k2"
    assert await rotated.decode([written_before, written_after]) == [plain(MARKER)] * 2
    with pytest.raises(UnknownCodecKeyError, match=r"'k2'.*it has: k1"):
        await old.decode([written_after])


async def test_a_wrong_key_under_the_same_id_is_refused_by_name_not_garbage() -> None:
    [sealed] = await EncryptionCodec(KeyRing.parse(f"k1={K1}", source="t")).encode([plain("x")])
    impostor = EncryptionCodec(KeyRing.parse(f"k1={K2}", source="t"))
    with pytest.raises(PayloadDecryptionError, match="did not decrypt with key 'k1'"):
        await impostor.decode([sealed])


async def test_a_tampered_payload_or_key_id_is_refused() -> None:
    codec = EncryptionCodec(KeyRing.parse(f"k1={K1},k2={K2}", source="t"))
    [sealed] = await codec.encode([plain("x")])
    flipped = Payload(metadata=dict(sealed.metadata), data=sealed.data[:-1] + b"\0")
    relabelled = Payload(metadata={**sealed.metadata, KEY_ID: b"k2"}, data=sealed.data)
    for bad in (flipped, relabelled):
        with pytest.raises(PayloadDecryptionError):
            await codec.decode([bad])


async def test_plaintext_payloads_written_before_the_codec_pass_through() -> None:
    codec = EncryptionCodec(KeyRing.parse(f"k1={K1}", source="t"))
    assert await codec.decode([plain("old")]) == [plain("old")]


@pytest.mark.parametrize(("text", "says"), [
    ("", "holds no key"),
    ("k1", "not ID=BASE64"),
    ("k1=not*base64", "not base64"),
    (f"k1={base64.b64encode(b'short').decode()}", "is 5 bytes"),
    (f"k1={K1},k1={K2}", "given twice"),
    (f"bad id={K1}", "must be 1-64"),
])
def test_malformed_keys_are_refused_naming_the_setting(text: str, says: str) -> None:
    settings = Settings(codec_keys=SecretStr(text))
    with pytest.raises(CodecKeyError, match=f"^ASSAY_CODEC_KEYS.*{says}"):
        data_converter(settings)


def test_with_no_key_the_converter_is_the_plain_one() -> None:
    assert data_converter(Settings()) is DATA_CONVERTER


async def test_with_a_key_file_every_payload_and_failure_message_is_encrypted(
        tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text(f"# current first\nk2={K2}\nk1={K1}\n")
    settings = Settings(codec_key_file=keys)
    ring = key_ring(settings)
    assert ring is not None and ring.current == "k2"
    converter = data_converter(settings)
    data = {"context": MARKER, "inputs": [f"{MARKER}.csv"]}
    [payload] = await converter.encode([data])
    assert MARKER.encode() not in payload.SerializeToString()
    assert await converter.decode([payload], [dict[str, object]]) == [data]
    failure = Failure()
    await converter.encode_failure(ValueError(f"job failed on {MARKER}"), failure)
    assert MARKER.encode() not in failure.SerializeToString()
    assert MARKER in str(await converter.decode_failure(failure))
