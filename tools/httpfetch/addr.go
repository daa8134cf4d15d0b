package httpfetch

import (
	"fmt"
	"net/netip"
)

// addrError is the refusal of an address the tool will not connect to.
type addrError struct {
	// host is the name that resolved to addr; empty for a literal address.
	host   string
	addr   netip.Addr
	reason string
}

func (e *addrError) Error() string {
	if e.host != "" {
		return fmt.Sprintf("%v: %s resolved to %s, which is %s; http_fetch only connects to public addresses", ErrBlocked, e.host, e.addr, e.reason)
	}
	return fmt.Sprintf("%v: %s is %s; http_fetch only connects to public addresses", ErrBlocked, e.addr, e.reason)
}

func (e *addrError) Unwrap() error { return ErrBlocked }

// CheckAddr returns nil when the tool may connect to addr, or an error
// wrapping ErrBlocked that says why it may not: addr is loopback, private
// (RFC 1918, RFC 4193 fc00::/7), link-local, multicast, unspecified,
// broadcast, shared (CGNAT 100.64.0.0/10), reserved, set aside for
// documentation or benchmarks, a cloud metadata address, or an IPv6 form of
// one of those (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64
// 64:ff9b::/96, 6to4 2002::/16). Teredo, site-local and every IPv6 address
// outside the global unicast range 2000::/3 (NAT64 of a public address
// apart) are refused too. The zone of an IPv6 address is ignored.
func CheckAddr(addr netip.Addr) error {
	if reason := addrReason(addr); reason != "" {
		return &addrError{addr: addr, reason: reason}
	}
	return nil
}

// special is one address range with the reason it is refused.
type special struct {
	prefix netip.Prefix
	reason string
}

// Read-only tables of the ranges refused beyond those netip.Addr's methods
// name (IsLoopback, IsPrivate, ...), checked in order.
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OCI, DigitalOcean...
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
	}
	special4 = []special{
		{netip.MustParsePrefix("0.0.0.0/8"), `in 0.0.0.0/8 ("this network")`},
		{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
		{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment address"},
		{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
		{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
		{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
		{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay anycast address"},
		{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
		{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
		{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	}
	special6 = []special{
		{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
		{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
		{netip.MustParsePrefix("100::/64"), "a discard-only address"},
		{netip.MustParsePrefix("2001::/32"), "a Teredo tunnel address"},
		{netip.MustParsePrefix("2001::/23"), "an IETF protocol assignment address"},
		{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
		{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	}
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	compat4   = netip.MustParsePrefix("::/96")
	global6   = netip.MustParsePrefix("2000::/3")
)

// addrReason says why addr is refused, as a noun phrase ("a private
// address"), or returns "" when it is allowed.
func addrReason(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not a valid IP address"
	}
	addr = addr.WithZone("")
	for _, m := range metadataAddrs {
		if addr == m {
			return "a cloud metadata address"
		}
	}
	if addr.Is4In6() {
		v4 := addr.Unmap()
		if r := addrReason(v4); r != "" {
			return fmt.Sprintf("the IPv4-mapped form of %s, %s", v4, r)
		}
		return ""
	}
	if r := commonReason(addr); r != "" {
		return r
	}
	if addr.Is4() {
		for _, s := range special4 {
			if s.prefix.Contains(addr) {
				return s.reason
			}
		}
		return ""
	}
	return reason6(addr)
}

// commonReason covers the classes netip.Addr names, for both families.
func commonReason(addr netip.Addr) string {
	switch {
	case addr.IsUnspecified():
		return "the unspecified address"
	case addr.IsLoopback():
		return "a loopback address"
	case addr.IsPrivate():
		return "a private address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	return ""
}

// reason6 covers the IPv6 ranges beyond commonReason's, checking the IPv4
// address embedded in the NAT64, 6to4 and IPv4-compatible forms.
func reason6(addr netip.Addr) string {
	b := addr.As16()
	switch {
	case nat64.Contains(addr):
		v4 := netip.AddrFrom4([4]byte(b[12:16]))
		if r := addrReason(v4); r != "" {
			return fmt.Sprintf("the NAT64 form of %s, %s", v4, r)
		}
		return ""
	case sixToFour.Contains(addr):
		v4 := netip.AddrFrom4([4]byte(b[2:6]))
		if r := addrReason(v4); r != "" {
			return fmt.Sprintf("the 6to4 form of %s, %s", v4, r)
		}
		return ""
	case compat4.Contains(addr):
		return fmt.Sprintf("the deprecated IPv4-compatible form of %s", netip.AddrFrom4([4]byte(b[12:16])))
	}
	for _, s := range special6 {
		if s.prefix.Contains(addr) {
			return s.reason
		}
	}
	if !global6.Contains(addr) {
		return "a reserved address (outside the global unicast range 2000::/3)"
	}
	return ""
}
