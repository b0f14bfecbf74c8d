// proxy_test.go: tests of relay proxy selection, no_proxy matching and the
// HTTP CONNECT tunnel (proxy.go), with a local CONNECT proxy that requires
// Basic credentials in front of the fake wss:// relay of relay_test.go.

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestRelayProxySelection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target string
		env    map[string]string
		want   string // proxy as relayProxy.String, "" for direct
		err    string
	}{
		{"no settings", "wss://relay.example", nil, "", ""},
		{"https_proxy", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:3128"}, "http://a.example:3128 (from https_proxy)", ""},
		{"HTTPS_PROXY", "wss://relay.example", map[string]string{"HTTPS_PROXY": "http://b.example:3128"}, "http://b.example:3128 (from HTTPS_PROXY)", ""},
		{"lowercase https wins", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "HTTPS_PROXY": "http://b.example:2"}, "http://a.example:1 (from https_proxy)", ""},
		{"all_proxy fallback", "wss://relay.example", map[string]string{"all_proxy": "http://c.example:3"}, "http://c.example:3 (from all_proxy)", ""},
		{"ALL_PROXY fallback", "wss://relay.example", map[string]string{"ALL_PROXY": "http://d.example:4"}, "http://d.example:4 (from ALL_PROXY)", ""},
		{"lowercase all wins", "wss://relay.example", map[string]string{"all_proxy": "http://c.example:3", "ALL_PROXY": "http://d.example:4"}, "http://c.example:3 (from all_proxy)", ""},
		{"https before all", "wss://relay.example", map[string]string{"ALL_PROXY": "http://d.example:4", "HTTPS_PROXY": "http://b.example:2"}, "http://b.example:2 (from HTTPS_PROXY)", ""},
		{"empty lowercase skipped", "wss://relay.example", map[string]string{"https_proxy": " ", "HTTPS_PROXY": "http://b.example:2"}, "http://b.example:2 (from HTTPS_PROXY)", ""},
		{"http_proxy ignored", "wss://relay.example", map[string]string{"http_proxy": "http://e.example:5", "HTTP_PROXY": "http://e.example:5"}, "", ""},
		{"no scheme", "wss://relay.example", map[string]string{"https_proxy": "proxy.corp"}, "http://proxy.corp:80 (from https_proxy)", ""},
		{"https proxy", "wss://relay.example", map[string]string{"https_proxy": "https://proxy.corp"}, "https://proxy.corp:443 (from https_proxy)", ""},
		{"credentials hidden", "wss://relay.example", map[string]string{"https_proxy": "http://u:hunter2@proxy.corp:8080"}, "http://proxy.corp:8080 (from https_proxy)", ""},
		{"socks refused", "wss://relay.example", map[string]string{"https_proxy": "socks5://u:hunter2@proxy.corp:1080"}, "", `https_proxy uses the unsupported proxy scheme "socks5"`},
		{"bad port", "wss://relay.example", map[string]string{"all_proxy": "http://u:hunter2@proxy.corp:http"}, "", "all_proxy does not contain a valid proxy URL"},
		{"no_proxy", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "relay.example"}, "", ""},
		{"NO_PROXY", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "NO_PROXY": ".example"}, "", ""},
		{"lowercase no_proxy wins", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "other.example", "NO_PROXY": "relay.example"}, "http://a.example:1 (from https_proxy)", ""},
		{"no_proxy port", "wss://relay.example:8443", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "relay.example:443"}, "http://a.example:1 (from https_proxy)", ""},
		{"no_proxy default port", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "relay.example:443"}, "", ""},
		{"loopback IPv4", "wss://127.0.0.1:8443", map[string]string{"https_proxy": "http://a.example:1"}, "", ""},
		{"loopback IPv6", "wss://[::1]:8443", map[string]string{"https_proxy": "http://a.example:1"}, "", ""},
		{"localhost", "wss://localhost", map[string]string{"all_proxy": "http://a.example:1"}, "", ""},
		{"plain ws", "ws://127.0.0.1:8080", map[string]string{"https_proxy": "http://a.example:1", "all_proxy": "http://a.example:1"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := url.Parse(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			p, err := relayProxyFor(target, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error reveals the proxy password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if p != nil {
				got = p.String()
			}
			if got != tc.want {
				t.Errorf("proxy %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNoProxyMatches(t *testing.T) {
	for _, tc := range []struct {
		list, host, port string
		want             bool
	}{
		{"", "relay.example", "443", false},
		{"*", "relay.example", "443", true},
		{"relay.example", "relay.example", "443", true},
		{"example", "relay.example", "443", true},
		{".example", "relay.example", "443", true},
		{".example", "example", "443", true},
		{"*.example", "relay.example", "443", true},
		{"lay.example", "relay.example", "443", false},
		{"relay.example.org", "relay.example", "443", false},
		{"RELAY.Example.", "relay.example", "443", true},
		{"relay.example", "RELAY.EXAMPLE.", "443", true},
		{" other.example , relay.example ", "relay.example", "443", true},
		{"other.example,,", "relay.example", "443", false},
		{"relay.example:443", "relay.example", "443", true},
		{"relay.example:8443", "relay.example", "443", false},
		{"192.0.2.1", "192.0.2.1", "443", true},
		{"192.0.2.1:443", "192.0.2.1", "443", true},
		{"192.0.2.1:80", "192.0.2.1", "443", false},
		{"192.0.2.1", "relay.example", "443", false},
		{"example", "192.0.2.1", "443", false},
		{"10.0.0.0/8", "10.1.2.3", "443", true},
		{"10.0.0.0/8", "11.0.0.1", "443", false},
		{"10.0.0.0/8", "relay.example", "443", false},
		{"2001:db8::1", "2001:db8::1", "443", true},
		{"[2001:db8::1]:443", "2001:db8::1", "443", true},
		{"[2001:db8::1]:80", "2001:db8::1", "443", false},
		{"2001:db8::/32", "2001:db8::5", "443", true},
		{"2001:db8::/32", "2001:db9::5", "443", false},
	} {
		if got := noProxyMatches(tc.list, tc.host, tc.port); got != tc.want {
			t.Errorf("noProxyMatches(%q, %q, %q) = %v, want %v", tc.list, tc.host, tc.port, got, tc.want)
		}
	}
}

// proxyFake is a minimal HTTP CONNECT proxy that demands Basic
// credentials and forwards every tunnel to one local address.
type proxyFake struct {
	t        *testing.T
	ln       net.Listener
	user     string
	password string
	upstream string

	mu       sync.Mutex
	accepted int
	targets  []string
}

func newProxyFake(t *testing.T, user, password, upstream string) *proxyFake {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxyFake{t: t, ln: ln, user: user, password: password, upstream: upstream}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.accepted++
			p.mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); p.serve(c) }()
		}
	}()
	return p
}

func (p *proxyFake) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, req.Method+" "+req.Host)
	p.mu.Unlock()
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.password))
	if req.Method != http.MethodConnect || req.Header.Get("Proxy-Authorization") != want {
		_, _ = io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\nVia: test\r\n\r\n"); err != nil {
		return
	}
	go func() { _, _ = io.Copy(up, br); up.Close() }()
	_, _ = io.Copy(c, up)
}

func (p *proxyFake) seen() (int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, append([]string(nil), p.targets...)
}

func TestRelayThroughConnectProxy(t *testing.T) {
	r := newRelayFake(t, true, nil, func(n int, c *relayFakeConn) {
		c.acceptRequest()
		c.finish()
	})
	port := r.baseURL().Port()
	// The relay answers as example.com (a name in the httptest certificate),
	// so the tunnel target is a real host name, not loopback.
	ep := r.endpoint()
	ep.BaseURL.Host = "example.com:" + port
	roots := &tls.Config{RootCAs: r.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	const password = "p@ss:w rd"
	proxyURL := func(p *proxyFake, pw string) string {
		return "http://" + url.UserPassword("agent", pw).String() + "@" + p.ln.Addr().String()
	}
	// Direct connections to example.com land on the local relay.
	direct := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); host == "example.com" {
			addr = "127.0.0.1:" + port
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}

	t.Run("authenticated tunnel", func(t *testing.T) {
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.TLSConfig = roots
		opt.Getenv = func(k string) string {
			return map[string]string{"https_proxy": proxyURL(p, password), "no_proxy": "other.example"}[k]
		}
		if _, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if _, targets := p.seen(); len(targets) != 1 || targets[0] != "CONNECT example.com:"+port {
			t.Errorf("proxy saw %q, want one CONNECT example.com:%s", targets, port)
		}
	})

	t.Run("rejected credentials are final", func(t *testing.T) {
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.TLSConfig = roots
		opt.Getenv = func(k string) string { return map[string]string{"ALL_PROXY": proxyURL(p, "wrong-secret")}[k] }
		_, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt)
		var status *proxyStatusError
		if !errors.As(err, &status) || status.Status != http.StatusProxyAuthRequired {
			t.Fatalf("error %v, want a 407 proxy refusal", err)
		}
		if !strings.Contains(err.Error(), "ALL_PROXY") || strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("error %q should name ALL_PROXY and hide the password", err)
		}
		if accepted, _ := p.seen(); accepted != 1 {
			t.Errorf("%d proxy connections, want 1 (no retry)", accepted)
		}
	})

	t.Run("no_proxy bypass", func(t *testing.T) {
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.TLSConfig = roots
		opt.Dialer = direct
		opt.Getenv = func(k string) string {
			return map[string]string{"https_proxy": proxyURL(p, password), "no_proxy": "localhost,.com"}[k]
		}
		if _, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if accepted, _ := p.seen(); accepted != 0 {
			t.Errorf("%d proxy connections despite no_proxy", accepted)
		}
	})

	t.Run("loopback relay is never proxied", func(t *testing.T) {
		plain := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			c.acceptRequest()
			c.finish()
		})
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.Getenv = func(k string) string {
			return map[string]string{"https_proxy": proxyURL(p, password), "all_proxy": proxyURL(p, password), "http_proxy": proxyURL(p, password)}[k]
		}
		if _, err := rtRunExchange(t, plain.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if accepted, _ := p.seen(); accepted != 0 {
			t.Errorf("%d proxy connections for a loopback relay", accepted)
		}
	})
}

func TestProxyTunnelKeepsEarlyBytes(t *testing.T) {
	// A proxy may send tunnel bytes in the same packet as its answer.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\nearly tunnel bytes")
	}()
	u, err := parseProxyURL("https_proxy", "http://"+ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p := &relayProxy{url: u, source: "https_proxy"}
	conn, err := p.dial(rtContext(t), (&net.Dialer{}).DialContext, nil, "relay.example:443")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := io.ReadAll(conn)
	if err != nil || string(got) != "early tunnel bytes" {
		t.Errorf("tunnel read %q, %v", got, err)
	}
}
