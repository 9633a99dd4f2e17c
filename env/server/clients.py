"""Who a request's client is: the key ENV_SESSIONS_PER_CLIENT counts sessions and HTTP episodes by.

    client_of(scope)          # "203.0.113.7"; an IPv6 client by its /64: "2001:db8:1:2::/64"

The address is the connection's peer as the ASGI server gives it. Behind a balancer that peer is the balancer, and
every client would be one: ``python -m env.server`` has uvicorn take the client from X-Forwarded-For instead, but only
on connections from ENV_TRUSTED_PROXIES (the rightmost address of the header that is not a trusted proxy's, as a
balancer appends the address it saw). A client that sends its own X-Forwarded-For to the server directly, or through a
hop that is not trusted, is counted by its own address: a forged header buys no new identity.

An IPv6 host is given a whole /64 (SLAAC and privacy addresses pick any address in it at will), so one /64 is one
client, as an IPv4 address is; an IPv4-mapped IPv6 address is its IPv4 client. A peer that is no IP address (a Unix
socket, the test client's "testclient") is that string; no peer at all is "unknown".
"""

from __future__ import annotations

import ipaddress

from starlette.types import Scope

IPV6_CLIENT_PREFIX = 64


def client_key(host: str | None) -> str:
    """The client an address belongs to (see the module's docstring)."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:256]  # not an address: a socket path or a test client's name, kept as given
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        if address.is_loopback:
            return str(address)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


def client_of(scope: Scope) -> str:
    peer = scope.get("client")
    return client_key(peer[0] if peer else None)
