// proxy.go: proxy selection and HTTP CONNECT tunnelling for relay
// connections (client-relay transport). Settings come from https_proxy /
// HTTPS_PROXY, then all_proxy / ALL_PROXY, minus no_proxy / NO_PROXY, with
// the lowercase name winning as curl and the reference client read them.

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// proxyMaxResponse bounds the CONNECT answer a proxy may send before the
// tunnel starts, so a hostile proxy cannot make us buffer without limit.
const proxyMaxResponse = 8 << 10

// relayProxy is the proxy chosen for one relay URL.
type relayProxy struct {
	url    *url.URL // http or https, host:port, optional userinfo
	source string   // environment variable it came from
}

// String names the proxy without its credentials.
func (p *relayProxy) String() string {
	return p.url.Scheme + "://" + p.url.Host + " (from " + p.source + ")"
}

// proxyStatusError is a proxy's refusal of the CONNECT request.
type proxyStatusError struct {
	Status int
	Proxy  string // as relayProxy.String
	Source string
}

func (e *proxyStatusError) Error() string {
	msg := fmt.Sprintf("proxy %s refused the tunnel to the relay with HTTP %d", e.Proxy, e.Status)
	if e.Status == http.StatusProxyAuthRequired {
		msg += "; check the user name and password in " + e.Source
	}
	return msg
}

// relayProxyFor selects the proxy for a relay URL, or nil for a direct
// connection. Loopback relays are never proxied: a ws:// relay is loopback
// only, and a local relay behind a remote proxy would be unreachable.
func relayProxyFor(target *url.URL, getenv func(string) string) (*relayProxy, error) {
	if target.Scheme != "wss" || relayLoopbackHost(target.Hostname()) {
		return nil, nil
	}
	source, value := proxyFirstEnv(getenv, "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
	if value == "" {
		return nil, nil
	}
	u, err := parseProxyURL(source, value)
	if err != nil {
		return nil, err
	}
	_, noProxy := proxyFirstEnv(getenv, "no_proxy", "NO_PROXY")
	port := target.Port()
	if port == "" {
		port = "443"
	}
	if noProxyMatches(noProxy, target.Hostname(), port) {
		return nil, nil
	}
	return &relayProxy{url: u, source: source}, nil
}

func proxyFirstEnv(getenv func(string) string, names ...string) (string, string) {
	for _, name := range names {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return name, v
		}
	}
	return "", ""
}

// parseProxyURL never echoes the value: it may hold a password.
func parseProxyURL(source, value string) (*url.URL, error) {
	raw := value
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s does not contain a valid proxy URL", source)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("%s uses the unsupported proxy scheme %q; use http:// or https://", source, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%s names no proxy host", source)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("%s has an invalid proxy port", source)
	}
	return &url.URL{Scheme: scheme, User: u.User, Host: net.JoinHostPort(host, port)}, nil
}

// noProxyMatches reports whether host:port bypasses the proxy. Entries are
// comma separated: "*", a domain (with or without a leading "." or "*.",
// matching the domain and its subdomains), an IP literal, a CIDR prefix, each
// optionally with ":port" ("[v6]:port" for IPv6). Names are never resolved.
func noProxyMatches(list, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	hostIP, hostErr := netip.ParseAddr(host)
	for _, entry := range strings.Split(list, ",") {
		entry = strings.ToLower(strings.TrimSpace(entry))
		if entry == "" {
			continue
		}
		if entry == "*" {
			return true
		}
		if strings.Contains(entry, "/") {
			if prefix, err := netip.ParsePrefix(entry); err == nil && hostErr == nil && prefix.Contains(hostIP.Unmap()) {
				return true
			}
			continue
		}
		name, entryPort := noProxySplit(entry)
		if entryPort != "" && entryPort != port {
			continue
		}
		if ip, err := netip.ParseAddr(name); err == nil {
			if hostErr == nil && ip.Unmap() == hostIP.Unmap() {
				return true
			}
			continue
		}
		name = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(name, "*"), "."), ".")
		if name != "" && hostErr != nil && (host == name || strings.HasSuffix(host, "."+name)) {
			return true
		}
	}
	return false
}

func noProxySplit(entry string) (host, port string) {
	if strings.HasPrefix(entry, "[") {
		end := strings.Index(entry, "]")
		if end < 0 {
			return entry, ""
		}
		host, rest := entry[1:end], entry[end+1:]
		return host, strings.TrimPrefix(rest, ":")
	}
	if _, err := netip.ParseAddr(entry); err == nil {
		return entry, "" // a bare IPv6 literal has colons but no port
	}
	if i := strings.LastIndexByte(entry, ':'); i >= 0 {
		if _, err := strconv.Atoi(entry[i+1:]); err == nil {
			return entry[:i], entry[i+1:]
		}
	}
	return entry, ""
}

// dial opens a CONNECT tunnel to target ("host:port") through the proxy.
// The relay's own TLS runs inside the tunnel, end to end.
func (p *relayProxy) dial(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), tlsConfig *tls.Config, target string) (net.Conn, error) {
	conn, err := dial(ctx, "tcp", p.url.Host)
	if err != nil {
		return nil, fmt.Errorf("connecting to proxy %s: %w", p, err)
	}
	tunnel, err := p.handshake(ctx, conn, tlsConfig, target)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return tunnel, nil
}

func (p *relayProxy) handshake(ctx context.Context, conn net.Conn, tlsConfig *tls.Config, target string) (net.Conn, error) {
	// Unblock reads and writes when the caller gives up.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}

	if p.url.Scheme == "https" {
		cfg := &tls.Config{}
		if tlsConfig != nil {
			cfg = tlsConfig.Clone()
		}
		cfg.ServerName = p.url.Hostname()
		cfg.NextProtos = nil
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("TLS with proxy %s: %w", p, err)
		}
		conn = tc
	}

	var req strings.Builder
	req.WriteString("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n")
	if p.url.User != nil {
		password, _ := p.url.User.Password()
		credentials := base64.StdEncoding.EncodeToString([]byte(p.url.User.Username() + ":" + password))
		req.WriteString("Proxy-Authorization: Basic " + credentials + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return nil, fmt.Errorf("sending CONNECT to proxy %s: %w", p, err)
	}

	br := bufio.NewReader(&io.LimitedReader{R: conn, N: proxyMaxResponse})
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the CONNECT answer of proxy %s: %w", p, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &proxyStatusError{Status: resp.StatusCode, Proxy: p.String(), Source: p.source}
	}
	if !stop() {
		return nil, ctx.Err()
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	// Bytes the proxy sent after its answer already belong to the tunnel.
	if n := br.Buffered(); n > 0 {
		early, _ := br.Peek(n)
		return &proxyConn{Conn: conn, early: append([]byte(nil), early...)}, nil
	}
	return conn, nil
}

// proxyConn replays tunnel bytes read ahead with the CONNECT answer.
type proxyConn struct {
	net.Conn
	early []byte
}

func (c *proxyConn) Read(b []byte) (int, error) {
	if len(c.early) > 0 {
		n := copy(b, c.early)
		c.early = c.early[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
