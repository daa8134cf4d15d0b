// Package httpfetch is the http_fetch tool: it lets a model fetch a web page
// or an HTTP API over http or https and returns the response as readable
// text. HTML is reduced to text (scripts, styles and page chrome dropped,
// the title first, blocks on lines of their own, list items as "- "),
// JSON, XML and other text formats come back as they are, and any other
// content type (images, archives, binaries) is refused with its type and
// size.
//
// # Safety
//
// A model chooses the URLs, so the tool refuses anything that would let a
// prompt reach the machine it runs on or the network behind it (server-side
// request forgery):
//
//   - only http and https URLs, without user:password@ and no longer than
//     Config.MaxURLLength;
//   - host names such as localhost, *.localhost, *.internal (among them
//     metadata.google.internal), *.local, *.lan, *.home.arpa, names without
//     a dot, and IP addresses written in a non-standard form (2130706433,
//     0x7f.0.0.1, 127.1) are refused before anything is resolved;
//   - every address the tool connects to is checked when it is dialled,
//     after DNS resolution, so a name that resolves (or is re-bound) to a
//     forbidden address is refused too: loopback, private (RFC 1918,
//     fc00::/7), link-local, CGNAT (100.64.0.0/10), multicast, unspecified,
//     broadcast, reserved and documentation ranges, cloud metadata
//     addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200), and the
//     IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 forms of those
//     (see CheckAddr);
//   - each redirect is checked again (scheme, host, allow-list, literal
//     addresses), at most Config.MaxRedirects of them, and its connection
//     goes through the same dial-time check;
//   - Config.AllowHosts, when set, limits fetching (redirects included) to
//     the listed hosts; it narrows what may be fetched and never lifts any
//     other check;
//   - environment proxies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) are never
//     used: a proxy would make the connection for the tool, out of reach of
//     the address check;
//   - the response is read up to Config.MaxBytes, the text returned is cut
//     at Config.MaxChars, and the whole call is bounded by Config.Timeout.
//
// Only GET is allowed unless Config.AllowPost is set; a tool that may POST
// is not read-only and its Meta asks for a human's approval of each call.
//
// WithAllowAddr and WithAllowLoopback lift the address check for chosen
// addresses; they exist for tests against local servers and local
// development, and no pipeline setting reaches them.
package httpfetch
