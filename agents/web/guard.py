"""What every request must be before the server reads it: addressed to this server by one of
its own names (the Host rule, and a page's Origin the same way: no DNS rebinding), and whole
within one deadline (not one timeout per read)."""

from __future__ import annotations

import io
import ipaddress
import re
import socket
import time
from http.server import BaseHTTPRequestHandler

_HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*\.?")
WILDCARDS = ("0.0.0.0", "::")


def host_name(name: str) -> str:
    """``name`` as a Host header spells it: lower case, an IPv6 address in brackets. ValueError
    for anything that is neither a DNS name nor an IP address."""
    bare = name.strip().lower()
    inner = bare[1:-1] if bare.startswith("[") and bare.endswith("]") else bare
    try:
        address = ipaddress.ip_address(inner)
    except ValueError:
        if not _HOST_NAME.fullmatch(bare) or len(bare) > 253:
            raise ValueError(f"not a host name or IP address: {name[:80]!r}") from None
        return bare.rstrip(".")
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def own_names(bound: str, allowed: tuple[str, ...] = ()) -> frozenset[str]:
    """The names a request may give this server in its Host (and a page in its Origin): the
    bind address, ``localhost``, the loopback addresses when the bind covers them (0.0.0.0,
    ::), and the names given with ``--allow-host``. A page elsewhere that points its own name
    at this machine (DNS rebinding) names none of them."""
    names = {host_name(bound), "localhost"} | {host_name(name) for name in allowed}
    if bound in WILDCARDS:
        names |= {"127.0.0.1", "[::1]"}
    return frozenset(names)


def names_server(value: str, scheme: str, names: frozenset[str], server_port: int) -> bool:
    """Whether ``value`` (a Host, or with ``scheme`` an Origin) is one of ``names`` (this
    server's, :func:`own_names`), with the server's ``server_port`` or none."""
    value = value.strip().lower()
    if not value.startswith(scheme):
        return False
    value = value[len(scheme) :]
    name, port = value, ""
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
        if rest and not rest.startswith(":"):
            return False
        port = rest[1:]
    elif ":" in value:
        name, _, port = value.partition(":")
    if port and port != str(server_port):
        return False
    return name in names


class DeadlineReader(io.RawIOBase):
    """The connection's bytes, read within the current request's deadline: a request dripped
    a byte at a time ends at the deadline, not after one timeout per read."""

    def __init__(self, handler: BaseHTTPRequestHandler, seconds: float) -> None:
        self._handler = handler  # its ``deadline``: time.monotonic() by which the request is whole
        self._seconds = seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        remaining = self._handler.deadline - time.monotonic()  # type: ignore[attr-defined]
        if remaining <= 0:
            raise TimeoutError(f"the request took longer than {self._seconds:.0f} s")
        connection: socket.socket = self._handler.connection
        connection.settimeout(remaining)
        return connection.recv_into(buffer)
