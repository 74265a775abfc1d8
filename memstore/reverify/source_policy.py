"""Which evidence sources may be fetched, and which ones remote callers may cite.

Re-verification fetches a fact's sources again on the machine that runs it (the
``memstore serve`` process, ``memstore reverify``, an embedding program). A source
is therefore a request made with that machine's rights: ``file:///etc/...`` reads
its files, ``http://127.0.0.1:PORT/...`` reaches its internal services. A
:class:`SourcePolicy` (the ``sources`` section of the settings) bounds both sides:

- fetching (``memstore.reverify.providers``): allowed ``schemes``, ``hosts`` (exact names,
  ``*.example.com``, ``*``, IP addresses and networks), file ``paths`` (checked after
  resolving links and ``..``), ``max_bytes``, a total ``timeout`` per fetch and at
  most ``max_redirects`` redirects, each of them checked like the first URL. A host
  matched only by a wildcard must resolve to public addresses (not loopback,
  private, link-local, multicast, reserved or unspecified) unless
  ``private_addresses`` is set; an exact name or address entry allows any address.
- citing (REST and MCP writes): ``remote`` lists what a remote caller may name as an
  evidence source; by default only ``inline`` (the text handed in with the fact).

``SourcePolicy()`` holds the defaults of the settings; ``SourcePolicy.unrestricted()``
is what a Store opened in-process without ``sources=`` uses (today's behaviour: any
file, any host, with the size, time and redirect limits).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import unquote, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memstore.errors import InvalidInput

if TYPE_CHECKING:
    from memstore.schemas import FactCreate

INLINE = "inline"
CALLABLE = "callable"
Scheme = Literal["file", "http", "https", "callable"]
Citable = Literal["inline", "file", "http", "https", "callable"]
#: Every kind of source a provider can fetch.
SCHEMES: tuple[Scheme, ...] = ("file", "http", "https", "callable")
#: What REST and MCP callers may cite unless the config says more.
REMOTE_DEFAULT: tuple[Citable, ...] = ("inline",)
DEFAULT_MAX_BYTES = 5_000_000
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_REDIRECTS = 5

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def source_kind(source: str) -> str:
    """``inline``, ``callable``, or the URL scheme of ``source`` (lower case; may be '')."""
    if source == INLINE:
        return INLINE
    if source.startswith(CALLABLE + ":"):
        return CALLABLE
    return urlsplit(source).scheme.lower()


def no_public_address(host: str) -> str:
    """Why a host matched only by a wildcard is not fetched: it resolves to no public
    address, or to none at all. One reason for both, and a host name's addresses never
    shown, so a reason does not tell a caller how names resolve inside the network."""
    literal = ip_address(host)
    if literal is not None and not is_public(literal):
        shown = f"host {host!r} is the non-public address {literal}"
    else:
        shown = f"host {host!r} has no public address (or none at all)"
    return f"{shown}; list it in sources.hosts (or set sources.private_addresses) to allow it"


def file_path(source: str) -> Path:
    """The local path a ``file://`` source names (ValueError for ``file://host/...``)."""
    parts = urlsplit(source)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{source!r} names a file on host {parts.netloc!r}, not a local file")
    return Path(unquote(parts.path))


def ip_address(host: str) -> IPAddress | None:
    """``host`` as an IP address (IPv4-mapped IPv6 as IPv4), or None for a name."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_public(address: IPAddress) -> bool:
    """False for loopback, private, link-local, multicast, reserved and unspecified."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


class SourcePolicy(BaseModel):
    """What re-verification may fetch and what remote callers may cite (see module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Kinds of source that may be fetched (``inline`` never is, and is always allowed).
    schemes: list[Scheme] = Field(default_factory=lambda: list(SCHEMES))
    #: Hosts http(s) sources may name: ``example.com``, ``*.example.com``, ``*`` (any
    #: public host), an IP address (``10.0.0.5``) or network (``10.0.0.0/8``).
    hosts: list[str] = Field(default_factory=lambda: ["*"])
    #: Let hosts matched only by a wildcard resolve to loopback/private/link-local addresses.
    private_addresses: bool = False
    #: Directories ``file://`` sources must lie in (after resolving links); empty (the
    #: default): no file is fetched until the operator lists its directories.
    paths: list[str] = Field(default_factory=list)
    #: Most bytes one fetch may read (body after decompression, or file size).
    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1, le=1_000_000_000)
    #: Most seconds one fetch may take in all (redirects and body included).
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0.0, le=3600.0)
    #: Most redirects one http(s) fetch follows; each target is checked like the first URL.
    max_redirects: int = Field(default=DEFAULT_MAX_REDIRECTS, ge=0, le=20)
    #: Kinds of source a REST or MCP caller may cite (the fetch rules above still apply).
    remote: list[Citable] = Field(default_factory=lambda: list(REMOTE_DEFAULT))

    @classmethod
    def unrestricted(cls) -> SourcePolicy:
        """Any scheme, host, address and file; only the size, time and redirect limits."""
        return cls(private_addresses=True, paths=["/"])

    @field_validator("schemes", "remote", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            return [v.strip().lower() if isinstance(v, str) else v for v in value]
        return value

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        hosts = []
        for entry in value:
            host = entry.strip().lower().rstrip(".")
            if "/" in host:
                try:
                    ipaddress.ip_network(host, strict=False)
                except ValueError:
                    raise ValueError(
                        f"{entry!r} is not a host name, *.domain, IP address or network "
                        "(give hosts without scheme or path)"
                    ) from None
            elif not host or (ip_address(host) is None and any(c in host for c in ":@?#\\ ")):
                raise ValueError(f"{entry!r} is not a host name, *.domain, IP address or network")
            elif (
                "*" in host and host != "*" and not (host.startswith("*.") and "*" not in host[2:])
            ):
                raise ValueError(f"{entry!r}: a wildcard is '*' or '*.domain'")
            hosts.append(host)
        return hosts

    @field_validator("paths")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not entry or not Path(entry).is_absolute():
                raise ValueError(f"{entry!r} is not an absolute directory path")
        return value

    @model_validator(mode="after")
    def _remote_fetchable(self) -> SourcePolicy:
        for kind in self.remote:
            if kind != INLINE and kind not in self.schemes:
                raise ValueError(f"remote lists {kind!r}, which schemes does not allow")
        return self

    # -- checks ----------------------------------------------------------------------

    def refusal(self, source: str) -> str | None:
        """Why ``source`` may not be fetched, or None. No DNS: resolved addresses are
        checked at fetch time (``memstore.reverify.providers``)."""
        kind = source_kind(source)
        if kind == INLINE:
            return None
        if kind not in self.schemes:
            shown = f"the {kind}: scheme" if kind else "a source without a scheme"
            return f"{shown} is not allowed (sources.schemes: {', '.join(self.schemes)})"
        if kind == "file":
            try:
                return self.path_refusal(file_path(source))
            except ValueError as exc:
                return str(exc)
        if kind in ("http", "https"):
            try:
                host = httpx.URL(source).host
            except httpx.InvalidURL as exc:
                return f"{source!r} is not a valid URL: {exc}"
            if not host:
                return f"{source!r} names no host"
            if self.host_match(host) is None:
                return f"host {host!r} is not in sources.hosts"
        return None

    def host_match(self, host: str) -> Literal["exact", "wildcard"] | None:
        """How ``host`` is allowed: by an exact name/address/network entry, only by a
        wildcard (its addresses must then be public), or not at all (None)."""
        host = host.strip("[]").lower().rstrip(".")
        address = ip_address(host)
        best: Literal["exact", "wildcard"] | None = None
        for entry in self.hosts:
            if entry == "*" or (entry.startswith("*.") and host.endswith(entry[1:])):
                best = "wildcard"
            elif "/" in entry:
                if address is not None and address in _network(entry):
                    return "exact"
            elif entry == host or (address is not None and ip_address(entry) == address):
                return "exact"
        return best

    def address_refusal(self, host: str, addresses: Iterable[IPAddress]) -> str | None:
        """Why ``host`` may not be reached at these resolved ``addresses``, or None."""
        match = self.host_match(host)
        if match is None:
            return f"host {host!r} is not in sources.hosts"
        if match == "exact" or self.private_addresses:
            return None
        for address in addresses:
            if not is_public(address):
                return no_public_address(host)
        return None

    def path_refusal(self, path: Path) -> str | None:
        """Why the file at ``path`` may not be read (links and ``..`` resolved), or None."""
        if not self.paths:
            return (
                "file sources are not allowed (sources.paths is empty); to allow them, list "
                "their directory in sources.paths in the config (MEMSTORE_SOURCES__PATHS)"
            )
        try:
            resolved = path.resolve()
            prefixes = [Path(p).resolve() for p in self.paths]
        except (OSError, RuntimeError, ValueError) as exc:
            return f"cannot resolve {path}: {exc}"
        if any(resolved.is_relative_to(prefix) for prefix in prefixes):
            return None
        return (
            f"{path} is outside sources.paths (links and '..' resolved); to allow it, list "
            "its directory in sources.paths in the config (MEMSTORE_SOURCES__PATHS)"
        )

    def remote_refusal(self, source: str) -> str | None:
        """Why a REST or MCP caller may not cite ``source``, or None."""
        kind = source_kind(source)
        if kind not in self.remote:
            shown = f"{kind}: sources" if kind else "sources other than 'inline'"
            return (
                f"{shown} may not be cited over the API (allowed: {', '.join(self.remote)}); "
                "to allow them, add the scheme to sources.remote in the server's config "
                "(MEMSTORE_SOURCES__REMOTE) and allow its targets in sources.hosts/paths"
            )
        return self.refusal(source)


def refuse_remote_sources(
    policy: SourcePolicy, facts: Sequence[FactCreate], prefix: str = ""
) -> None:
    """Raise InvalidInput naming the first evidence source of ``facts`` a REST or MCP
    caller may not cite (``evidence.0.source``; ``facts.3.evidence.0.source`` with
    ``prefix="facts"``, the fact's index appended)."""
    for i, fact in enumerate(facts):
        for j, item in enumerate(fact.evidence):
            refusal = policy.remote_refusal(item.source)
            if refusal is not None:
                where = f"{prefix}.{i}." if prefix else ""
                raise InvalidInput(f"{where}evidence.{j}.source", refusal)


def _network(entry: str) -> Network:
    return ipaddress.ip_network(entry, strict=False)
