"""Which store a stack's workers read, as one comparable string."""

from __future__ import annotations

from pathlib import Path

from workers.connection.identity import StackIdentity, other_stack_message, store_location
from workers.settings import Settings


def test_the_store_location_is_absolute_and_names_an_s3_endpoint(tmp_path: Path) -> None:
    assert store_location(Settings(data_dir=tmp_path)) == str(tmp_path / "store")
    assert store_location(Settings(data_dir=tmp_path, store_url=f"file://{tmp_path}/s/")) == (
        str(tmp_path / "s"))
    s3 = Settings(data_dir=tmp_path, store_url="s3://bucket/prefix/",
                  store_endpoint_url="http://minio:9000")
    assert store_location(s3) == "s3://bucket/prefix at http://minio:9000"


def test_the_refusal_names_the_other_stack_and_how_to_take_another_port(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "mine")
    said = other_stack_message(settings, StackIdentity(data_dir="/srv/theirs", store="/s"))
    assert "data directory /srv/theirs, not this one" in said
    assert "ASSAY_TEMPORAL_ADDRESS=" in said and "ASSAY_TEMPORAL_UI_PORT=" in said
