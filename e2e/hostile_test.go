// The client against a hostile relay (issue finding 6), with its real
// bounds: a relay in this test that acknowledges and closes, sends
// garbage, frames of other exchanges or frames over 256 KiB, closes in the
// middle of a frame, or forges a response. Each run must end on its own
// with a clear message, exit 1, never run the command and never show the
// secret, and each ends on the limit README's table of bounds names for
// it. (Replayed and corrupted responses from the devkit relay are in
// faults_test.go; modes that take the full 2-minute stall bound, such as a
// relay that reads and never writes, are in the root package's
// relay_hostile_test.go with shortened bounds.)
package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// hostileRelay serves WebSocket connections with script; it returns the
// ws:// URL and the number of connections so far.
func hostileRelay(t *testing.T, script func(ctx context.Context, ws *websocket.Conn, request map[string]any)) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		n.Add(1)
		ws.SetReadLimit(1 << 20)
		ctx, cancel := context.WithTimeout(context.Background(), processGuard)
		defer cancel()
		defer ws.CloseNow()
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var req map[string]any
		json.Unmarshal(data, &req)
		script(ctx, ws, req)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "ws://" + ln.Addr().String(), &n
}

func frameFor(req map[string]any, typ string, members ...any) []byte {
	m := map[string]any{"type": typ, "client_id": req["client_id"], "request_id": req["request_id"]}
	for i := 0; i+1 < len(members); i += 2 {
		m[members[i].(string)] = members[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func TestHostileRelay(t *testing.T) {
	t.Parallel()
	w, value := pairThenFault(t, "")
	write := func(ctx context.Context, ws *websocket.Conn, b []byte) { ws.Write(ctx, websocket.MessageText, b) }
	hold := func(ctx context.Context, ws *websocket.Conn) {
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}
	modes := []struct {
		name   string
		script func(ctx context.Context, ws *websocket.Conn, req map[string]any)
		says   string // the limit that ended it, as README's table names it
	}{
		{"ack then close", func(ctx context.Context, ws *websocket.Conn, req map[string]any) {
			write(ctx, ws, frameFor(req, "ack", "kind", "request"))
		}, "relay unavailable after 8 consecutive failures without progress"},
		{"garbage frames", func(ctx context.Context, ws *websocket.Conn, req map[string]any) {
			for range 64 {
				write(ctx, ws, []byte(`{"type":"ack","kind":7}`))
			}
			hold(ctx, ws)
		}, "frames that are not valid for this exchange"},
		{"frames of another exchange", func(ctx context.Context, ws *websocket.Conn, req map[string]any) {
			other := map[string]any{"client_id": req["client_id"], "request_id": "01K2EQ0Z9V3W5X7Y8Z0A1B2C3D"}
			for range 64 {
				write(ctx, ws, frameFor(other, "ack", "kind", "request"))
			}
			hold(ctx, ws)
		}, "frames that are not valid for this exchange"},
		{"oversized frame", func(ctx context.Context, ws *websocket.Conn, req map[string]any) {
			write(ctx, ws, frameFor(req, "ack", "kind", "request", "pad", strings.Repeat("x", 300<<10)))
			hold(ctx, ws)
		}, "message too big"},
		{"close in the middle of a frame", func(ctx context.Context, ws *websocket.Conn, req map[string]any) {
			if wr, err := ws.Writer(ctx, websocket.MessageText); err == nil {
				wr.Write(frameFor(req, "ack", "kind", "request")[:20])
			}
		}, "relay unavailable after 8 consecutive failures"},
		{"forged response", func(ctx context.Context, ws *websocket.Conn, req map[string]any) {
			write(ctx, ws, frameFor(req, "ack", "kind", "request"))
			write(ctx, ws, frameFor(req, "message", "kind", "response", "payload", map[string]string{
				"nonce": "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=", "ciphertext": "Zm9yZ2VkIGJ5IHRoZSByZWxheSAxMjM0NTY3ODkw"}))
			hold(ctx, ws)
		}, "could not be authenticated"},
	}
	// README states each mode's bound, which the root package's
	// TestREADMEStatesEachHostileRelayBound computes from the client's
	// constants; here each mode must end on the limit that bound is for,
	// whatever the machine's speed.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			url, conns := hostileRelay(t, m.script)
			marker := w.markerPath("ran-" + strings.ReplaceAll(m.name, " ", "-"))
			start := time.Now()
			r := w.agentknockWith(runOpts{env: []string{"AGENTKNOCK_RELAY_URL=" + url}}, "-s", "demo", "--", "touch", marker)
			elapsed := time.Since(start)
			t.Logf("%s: exit %d after %v and %d connections: %s", m.name, r.code, elapsed.Round(100*time.Millisecond), conns.Load(), lastLine(r.stderr))
			if r.code != 1 || exists(marker) {
				t.Fatalf("run through a hostile relay: %s", r)
			}
			if !strings.Contains(r.stderr, m.says) {
				t.Fatalf("the message does not say %q: %s", m.says, r)
			}
			if !strings.Contains(r.stderr, "\nAGENTKNOCK: The command didn't run.\nAGENTKNOCK: Suggested action: ") {
				t.Fatalf("no \"didn't run\" line and suggested action: %s", r)
			}
			row := regexp.MustCompile("(?m)^  \\| " + regexp.QuoteMeta(m.name) + " \\| [^|]+ \\| `([0-9a-z.]+)`").FindStringSubmatch(string(readme))
			if row == nil {
				t.Fatalf("README's table of hostile-relay bounds has no row for %q", m.name)
			}
			bound, err := time.ParseDuration(row[1])
			if err != nil {
				t.Fatalf("README's bound for %q: %v", m.name, err)
			}
			// README: a run ends within hostileAttemptAllowance after the
			// bound (its start and the attempts' own time).
			if elapsed > bound+hostileAttemptAllowance {
				t.Fatalf("%s ended after %v, past README's bound %v and the %v it allows for the attempts", m.name, elapsed.Round(100*time.Millisecond), bound, hostileAttemptAllowance)
			}
			t.Logf("%s: README's bound %v, this run %v", m.name, bound, elapsed.Round(100*time.Millisecond))
		})
	}
	t.Cleanup(func() { w.leakCheck(value) })
}

// hostileAttemptAllowance is what README allows a hostile-relay run past
// its bound: the client's start, the attempts' dials and handshakes on
// loopback and the aborted completion sent after giving up (which these
// relays end at once), on a loaded machine.
const hostileAttemptAllowance = 3 * time.Second

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
