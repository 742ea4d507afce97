"""Who a login comes from: the peer, or what a trusted proxy in front forwarded."""

from __future__ import annotations

import ipaddress

import pytest

from gateway.server import client_address, peer_ip

PROXIES = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("fd00::/8"))


@pytest.mark.parametrize(
    ("peer", "ip"),
    [("ipv4:1.2.3.4:5678", "1.2.3.4"), ("ipv6:[::1]:5678", "::1"), ("unix:/tmp/s", "/tmp/s")],
)
def test_the_peers_address(peer: str, ip: str) -> None:
    assert peer_ip(peer) == ip


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        # a client names itself: ignored, it is no proxy of ours
        ("ipv4:203.0.113.9:4000", ["198.51.100.1"], "203.0.113.9"),
        # our proxy forwards the client's address
        ("ipv4:10.1.2.3:4000", ["198.51.100.1"], "198.51.100.1"),
        # a client's own header before our proxy's: the nearest untrusted hop counts
        ("ipv4:10.1.2.3:4000", ["1.1.1.1, 198.51.100.1"], "198.51.100.1"),
        # two proxies of ours in a row
        ("ipv4:10.1.2.3:4000", ["198.51.100.1, 10.9.9.9"], "198.51.100.1"),
        ("ipv6:[fd00::5]:4000", ["2001:db8::7"], "2001:db8::7"),
        # our proxy with nothing forwarded: the proxy itself
        ("ipv4:10.1.2.3:4000", [], "10.1.2.3"),
    ],
)
def test_a_trusted_proxys_forwarded_address_counts_and_no_one_elses(
    peer: str, forwarded: list[str], client: str
) -> None:
    assert client_address(peer, forwarded, PROXIES) == client
