// The relay's log of a socket's end: a client that leaves between two
// frames without a close handshake (the agentknock client does so every
// time it execs the approved command) is a normal disconnect and logs only
// "disconnected"; a socket that fails mid-protocol still logs why.

package relay

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// dialCapturingConn dials a client route and also returns the TCP
// connection under the WebSocket, so a test can end or corrupt it.
func (e *env) dialCapturingConn(clientID, token string) (*websocket.Conn, net.Conn) {
	e.t.Helper()
	conns := make(chan net.Conn, 1)
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			conns <- c
		}
		return c, err
	}}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	h := http.Header{"Authorization": {"Bearer " + token}}
	c, _, err := websocket.Dial(ctx, e.url(devicePath(e.deviceID, clientID)), &websocket.DialOptions{
		HTTPHeader: h, HTTPClient: &http.Client{Transport: transport},
	})
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	e.t.Cleanup(func() { c.CloseNow() })
	return c, <-conns
}

// waitLog waits until the relay logged n lines containing want.
func (e *env) waitLog(want string, n int) string {
	e.t.Helper()
	deadline := time.Now().Add(guard)
	for strings.Count(e.logs.all(), want) < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("the relay never logged %q; log:\n%s", want, e.logs.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return e.logs.all()
}

func TestNormalDisconnectLogsNoError(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	_, raw := e.dialCapturingConn(id, tok)
	e.waitLog("client "+id+" connected (device route)", 1)
	raw.Close() // what exec does to the client's socket: no close frame
	logs := e.waitLog("client "+id+" disconnected", 2)
	if strings.Contains(logs, "socket ended") {
		t.Errorf("a client that left between frames was logged as a failure:\n%s", logs)
	}
}

func TestBrokenSocketLogsWhy(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	_, raw := e.dialCapturingConn(id, tok)
	e.waitLog("client "+id+" connected (device route)", 1)
	// A masked text frame header with the reserved bits set: a protocol
	// violation, not a disconnect.
	if _, err := raw.Write([]byte{0xf1, 0x80, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	logs := e.waitLog("client "+id+" disconnected", 2)
	if !strings.Contains(logs, "client "+id+" socket ended: ") {
		t.Errorf("a socket that broke the protocol ended without a reason in the log:\n%s", logs)
	}
}
