// Tests of client records: persistence through ClientStore across relay
// restarts, hashed tokens, and validation of stored records.

package relay

import (
	"strings"
	"testing"
	"time"
)

func TestClientsPersistAcrossRestart(t *testing.T) {
	e := newEnv(t)
	active, activeTok := e.activeClient()
	e.clock.Advance(time.Second)
	revoked, revokedTok := e.activeClient()
	if err := e.relay.SetClientState(revoked, ClientRevoked); err != nil {
		t.Fatal(err)
	}
	before := e.relay.Clients()
	stored, _ := e.store.Load()
	if len(stored) != 2 {
		t.Fatalf("store has %+v", stored)
	}
	for _, r := range stored {
		if strings.Contains(r.TokenHash, activeTok) || strings.Contains(r.TokenHash, revokedTok) || len(r.TokenHash) != 64 {
			t.Fatalf("stored token hash %q", r.TokenHash)
		}
	}

	e.stop()
	e.start()
	after := e.relay.Clients()
	if len(after) != len(before) {
		t.Fatalf("after restart %+v", after)
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("record %d: %+v, want %+v", i, after[i], before[i])
		}
	}
	if after[0].ClientID != active || after[0].State != ClientActive {
		t.Fatalf("order or state: %+v", after)
	}

	req := e.newID()
	c := e.dialClient(active, activeTok)
	c.message(req, "request", "r")
	c.expect("ack", req, "request")
	c.expect("receipt", req, "request")
	expectRefusal(t, e, devicePath(e.deviceID, active), revokedTok, 401, "UNAUTHORIZED")
	expectRefusal(t, e, devicePath(e.deviceID, revoked), revokedTok, 403, "CLIENT_INACTIVE")
}

func TestDamagedStoreIsRefused(t *testing.T) {
	good := ClientRecord{
		DeviceID: ulidAt(time.Now()), ClientID: ulidAt(time.Now()),
		TokenHash: tokenHash(newToken()), State: ClientActive, CreatedAt: time.Now(),
	}
	if _, err := New(Config{Device: newRecDevice(), Store: &memStore{recs: []ClientRecord{good}}}); err != nil {
		t.Fatalf("good record refused: %v", err)
	}
	mutate := map[string]func(*ClientRecord){
		"bad hash":       func(r *ClientRecord) { r.TokenHash = "abc" },
		"bad client id":  func(r *ClientRecord) { r.ClientID = "x" },
		"bad device id":  func(r *ClientRecord) { r.DeviceID = strings.ToLower(r.DeviceID) },
		"bad state":      func(r *ClientRecord) { r.State = "zombie" },
		"bad address id": func(r *ClientRecord) { r.AddressID = "XYZ" },
	}
	for name, m := range mutate {
		r := good
		m(&r)
		if rl, err := New(Config{Device: newRecDevice(), Store: &memStore{recs: []ClientRecord{r}}}); err == nil {
			rl.Close()
			t.Fatalf("%s: accepted", name)
		}
	}
	if rl, err := New(Config{Device: newRecDevice(), Store: &memStore{recs: []ClientRecord{good, good}}}); err == nil {
		rl.Close()
		t.Fatal("duplicate records accepted")
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("nil device accepted")
	}
}

func TestStateChangeNotSavedIsNotApplied(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	e.store.mu.Lock()
	e.store.failErr = errSaveForTest
	e.store.mu.Unlock()
	if err := e.relay.SetClientState(id, ClientRevoked); err == nil {
		t.Fatal("SetClientState succeeded without saving")
	}
	if got := e.relay.Clients()[0].State; got != ClientActive {
		t.Fatalf("state %s after failed save", got)
	}
	a.sync(e) // the socket was not closed
}

var errSaveForTest = &saveError{}

type saveError struct{}

func (*saveError) Error() string { return "disk full" }
