"""How to reach a search index on an S3-compatible object store (``store.object_store``).

A store's index may live at an ``s3://bucket/prefix`` URI (``store.index``) on AWS S3 or
any S3-compatible store (SeaweedFS, MinIO, Ceph, ...). :class:`ObjectStore` holds the
endpoint, region, credentials and TLS settings; LanceDB gets them as its
``storage_options``. Fields left unset fall back to LanceDB's own sources (the
``AWS_*`` environment variables, an instance role). Credentials are ``SecretStr``:
never in ``repr``, logs or ``memstore config show``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

S3_SCHEME = "s3"


def is_uri(location: str) -> bool:
    """Whether an index location is a URI (``scheme://...``), not a local directory."""
    return "://" in location


def is_s3(location: str) -> bool:
    """Whether an index location is an ``s3://`` URI."""
    return urlsplit(location).scheme.lower() == S3_SCHEME


def check_index_uri(uri: str) -> str:
    """``uri`` if it is a usable index URI; ValueError saying why not (an ``s3://``
    URI needs a bucket)."""
    if is_s3(uri) and not urlsplit(uri).netloc:
        raise ValueError(f"{uri!r} names no bucket: use s3://<bucket>/<prefix>")
    return uri


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{round(value * 1000)}ms"


class ObjectStore(BaseModel):
    """Where and how to reach the object store that holds an ``s3://`` index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Send requests (and credentials) over plain HTTP; needed for an ``http://`` endpoint
    #: (declared before ``endpoint``, whose check reads it).
    allow_http: bool = False
    #: ``http(s)://host[:port]`` of an S3-compatible store; unset: AWS S3.
    endpoint: str | None = Field(default=None, min_length=1)
    #: The bucket's region (AWS finds it alone; most S3-compatible stores want one).
    region: str | None = Field(default=None, min_length=1)
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    session_token: SecretStr | None = None
    #: Skip TLS certificate checks (a self-signed test store; never in production).
    allow_invalid_certificates: bool = False
    #: Address buckets as ``<bucket>.<endpoint host>`` instead of ``<endpoint>/<bucket>``.
    virtual_hosted_style: bool = False
    #: Seconds one request may take in all (unset: LanceDB's 30 s) and to connect (5 s).
    timeout: float | None = Field(default=None, gt=0.0, le=3600.0)
    connect_timeout: float | None = Field(default=None, gt=0.0, le=600.0)
    #: A local directory where this host keeps a copy of the index's files that searches
    #: read (``memstore.index.read_cache``); unset: searches read the store itself.
    read_cache: Path | None = None

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s)://host[:port] address")
        if parts.scheme == "http" and not info.data.get("allow_http"):
            raise ValueError(
                f"{value!r} is plain HTTP: use https://, or set allow_http: true to send the "
                "index and the credentials unencrypted"
            )
        return value.rstrip("/")

    @model_validator(mode="after")
    def _keys_together(self) -> ObjectStore:
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise ValueError("access_key_id and secret_access_key must be set together")
        if self.session_token is not None and self.access_key_id is None:
            raise ValueError("session_token needs access_key_id and secret_access_key")
        return self

    @property
    def configured(self) -> bool:
        """Whether any field differs from its default."""
        return self != ObjectStore()

    def storage_options(self) -> dict[str, str]:
        """These settings as LanceDB ``storage_options`` (unset fields left out; the read
        cache is memstore's, not LanceDB's)."""
        secret = {
            "aws_access_key_id": self.access_key_id,
            "aws_secret_access_key": self.secret_access_key,
            "aws_session_token": self.session_token,
        }
        options: dict[str, Any] = {
            "aws_endpoint": self.endpoint,
            "aws_region": self.region,
            **{k: v.get_secret_value() for k, v in secret.items() if v is not None},
            "timeout": _seconds(self.timeout),
            "connect_timeout": _seconds(self.connect_timeout),
        }
        flags = {
            "allow_http": self.allow_http,
            "allow_invalid_certificates": self.allow_invalid_certificates,
            "aws_virtual_hosted_style_request": self.virtual_hosted_style,
        }
        options.update({k: "true" for k, on in flags.items() if on})
        return {k: str(v) for k, v in options.items() if v is not None}
