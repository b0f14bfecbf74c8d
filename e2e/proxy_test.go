// End-to-end relay connection through an HTTP CONNECT proxy (client-relay
// transport; the proxy variables as the reference client reads them). The
// test's proxy accepts CONNECT with Basic credentials and, standing in for
// the remote relay, terminates TLS for relay.example.test with a test CA
// (given to agentknock through SSL_CERT_FILE) and forwards to the local
// serve: the whole run goes through the proxy as it would in production.
// no_proxy is checked against a TLS front on a non-loopback address of this
// machine, since loopback relays are never proxied.
package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const proxiedRelayHost = "relay.example.test"

// connectProxy is a CONNECT proxy: a tunnel to proxiedRelayHost:443 ends at
// its own TLS front for the upstream serve, any other is a plain tunnel.
type connectProxy struct {
	ln       net.Listener
	upstream string // serve's host:port
	wantAuth string // the exact Proxy-Authorization it accepts
	tls      *tls.Config

	mu       sync.Mutex
	connects []connectRecord
	conns    map[net.Conn]bool
	wg       sync.WaitGroup
}

type connectRecord struct {
	method, target    string
	authOK, tunnelled bool
}

// startConnectProxy listens on addr; with wantAuth empty it is not a proxy
// but a direct TLS front (a remote relay's address) that counts connections.
func startConnectProxy(t *testing.T, addr, upstream, wantAuth string, cert tls.Certificate) *connectProxy {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{
		ln: ln, upstream: upstream, wantAuth: wantAuth,
		tls:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		conns: map[net.Conn]bool{},
	}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *connectProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.forget(c)
			if p.wantAuth == "" {
				p.mu.Lock()
				p.connects = append(p.connects, connectRecord{method: "direct", tunnelled: true})
				p.mu.Unlock()
				c.SetDeadline(time.Now().Add(processGuard))
				terminateTLS(c, p.tls, p.upstream)
				return
			}
			p.handle(c)
		}()
	}
}

func (p *connectProxy) forget(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *connectProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *connectProxy) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(processGuard))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	rec := connectRecord{method: req.Method, target: req.RequestURI, authOK: req.Header.Get("Proxy-Authorization") == p.wantAuth}
	rec.tunnelled = req.Method == http.MethodConnect && rec.authOK
	p.mu.Lock()
	p.connects = append(p.connects, rec)
	p.mu.Unlock()
	switch {
	case req.Method != http.MethodConnect:
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	case !rec.authOK:
		io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"e2e\"\r\nContent-Length: 0\r\n\r\n")
		return
	}
	// Bytes the client sent after the CONNECT may already sit in br.
	client := &bufferedConn{Conn: c, r: br}
	if rec.target == proxiedRelayHost+":443" {
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		terminateTLS(client, p.tls, p.upstream)
		return
	}
	// Any other target: an ordinary tunnel.
	up, err := net.DialTimeout("tcp", rec.target, 5*time.Second)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	pipe(client, up)
}

// pipe copies both ways until both directions end.
func pipe(a net.Conn, b net.Conn) {
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(b, a); closeWrite(b); done <- struct{}{} }()
	go func() { io.Copy(a, b); closeWrite(a); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	switch c := c.(type) {
	case interface{ CloseWrite() error }:
		c.CloseWrite()
	case *bufferedConn:
		closeWrite(c.Conn)
	default:
		c.Close()
	}
}

// terminateTLS plays the remote relay's TLS front: it serves TLS on c and
// forwards the plain bytes to upstream.
func terminateTLS(c net.Conn, cfg *tls.Config, upstream string) {
	tc := tls.Server(c, cfg)
	if err := tc.Handshake(); err != nil {
		return
	}
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	pipe(tc, up)
}

func (p *connectProxy) records() []connectRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]connectRecord(nil), p.connects...)
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// testCA makes a CA file for SSL_CERT_FILE and a certificate it signed
// for proxiedRelayHost and ips.
// nonLoopbackIP is an IPv4 address of an up interface other than loopback.
func nonLoopbackIP() net.IP {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				return n.IP.To4()
			}
		}
	}
	return nil
}

func testCA(t *testing.T, dir string, ips ...net.IP) (caFile string, cert tls.Certificate) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "agentknock e2e CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: proxiedRelayHost},
		DNSNames:     []string{proxiedRelayHost},
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}
}

func TestRunThroughProxy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "proxied")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	s := w.startServe(approvePairingPolicy, "")
	w.pair()

	password := "p@ss:" + secretValue(t, "proxy")
	userinfo := "e2e-user:" + password
	caFile, cert := testCA(t, w.root)
	proxy := startConnectProxy(t, "127.0.0.1:0", strings.TrimPrefix(s.url, "ws://"),
		"Basic "+base64.StdEncoding.EncodeToString([]byte(userinfo)), cert)
	proxyURL := (&url.URL{Scheme: "http", User: url.UserPassword("e2e-user", password), Host: proxy.ln.Addr().String()}).String()
	proxied := []string{
		"AGENTKNOCK_RELAY_URL=wss://" + proxiedRelayHost,
		"SSL_CERT_FILE=" + caFile,
		"SSL_CERT_DIR=" + filepath.Join(w.root, "no-certs"),
	}

	// The whole exchange goes through the proxy, with its credentials.
	r := w.agentknockWith(runOpts{env: append(proxied, "https_proxy="+proxyURL)},
		"-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run through the proxy: %s\nproxy saw %+v", r, proxy.records())
	}
	recs := proxy.records()
	if len(recs) == 0 {
		t.Fatal("the proxy saw no connection")
	}
	for _, rec := range recs {
		if rec.method != http.MethodConnect || rec.target != proxiedRelayHost+":443" || !rec.authOK {
			t.Errorf("proxy got %+v, want CONNECT %s:443 with the Basic credentials of https_proxy", rec, proxiedRelayHost)
		}
	}

	// Uppercase HTTPS_PROXY, the ALL_PROXY fallback, and the lowercase name
	// winning over the uppercase one.
	badURL := (&url.URL{Scheme: "http", User: url.UserPassword("e2e-user", "wrong"), Host: proxy.ln.Addr().String()}).String()
	for _, vars := range [][]string{
		{"HTTPS_PROXY=" + proxyURL},
		{"all_proxy=" + proxyURL},
		{"HTTPS_PROXY=" + badURL, "https_proxy=" + proxyURL},
	} {
		n := len(proxy.records())
		r = w.agentknockWith(runOpts{env: append(append([]string(nil), proxied...), vars...)}, "-s", "demo", "--", "true")
		if got := proxy.records()[n:]; r.code != 0 || len(got) == 0 || !got[0].authOK {
			t.Fatalf("run with proxy settings %d: %s\nproxy saw %+v", len(vars), r, got)
		}
	}

	// Wrong credentials: a clear error, nothing runs.
	marker := w.markerPath("ran")
	r = w.agentknockWith(runOpts{env: append(proxied, "https_proxy="+badURL)}, "-s", "demo", "--", "touch", marker)
	if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, "407") {
		t.Fatalf("run with wrong proxy credentials: %s", r)
	}

	// no_proxy: agentknock connects directly. Loopback relays are never
	// proxied by design, so the direct relay listens on a non-loopback
	// address of this machine (a name that does not resolve would only
	// show the failure, after the client's whole retry budget).
	ip := nonLoopbackIP()
	if ip == nil {
		t.Log("no non-loopback IPv4 address on this machine: no_proxy not checked")
	} else {
		caFile, cert := testCA(t, w.root, ip)
		direct := startConnectProxy(t, net.JoinHostPort(ip.String(), "0"), strings.TrimPrefix(s.url, "ws://"), "", cert)
		env := []string{
			"AGENTKNOCK_RELAY_URL=wss://" + direct.ln.Addr().String(),
			"SSL_CERT_FILE=" + caFile,
			"SSL_CERT_DIR=" + filepath.Join(w.root, "no-certs"),
			"https_proxy=" + proxyURL,
		}
		n := len(proxy.records())
		r = w.agentknockWith(runOpts{env: env}, "-s", "demo", "--", "true")
		got := proxy.records()[n:]
		if r.code != 0 || len(got) == 0 || got[0].target != direct.ln.Addr().String() {
			t.Fatalf("run with a non-loopback relay and https_proxy: %s\nproxy saw %+v", r, got)
		}
		for _, np := range []string{"no_proxy=" + ip.String(), "NO_PROXY=" + ip.String(), "no_proxy=*"} {
			n, d := len(proxy.records()), len(direct.records())
			r = w.agentknockWith(runOpts{env: append(env, np)}, "-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
			if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
				t.Fatalf("run with %s: %s", np, r)
			}
			if got := proxy.records()[n:]; len(got) != 0 || len(direct.records()) == d {
				t.Fatalf("%s: the proxy saw %+v, the direct relay %d connections", np, got, len(direct.records())-d)
			}
		}
	}
	w.leakCheck(value)
	w.leakCheck(password)
	w.leakCheck(userinfo)
}
