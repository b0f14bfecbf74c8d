// The state database: migration of a state.json written by the previous
// version (testdata/legacy-state, produced by that version's device through
// this package's test client), interrupted migrations, and the amount of
// data one request writes when the device retains 10,000 exchanges.
package device

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

// legacyClient is the test client's side of testdata/legacy-state: its
// keys after a PSK rotation, and one approved Invocation with the exact
// response bytes the old device released.
type legacyClient struct {
	ClientID    string `json:"client_id"`
	DeviceID    string `json:"device_id"`
	DeviceKey   []byte `json:"device_key"`
	PSK         []byte `json:"psk"`
	PreviousPSK []byte `json:"previous_psk"`
	RequestID   string `json:"request_id"`
	Request     []byte `json:"request"`  // the envelope as sent
	Response    []byte `json:"response"` // the payload as released
}

// legacyDir copies testdata/legacy-state into a new private directory.
func legacyDir(t *testing.T) (string, *legacyClient) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{identityFile, legacyFile, secretsFile} {
		if err := os.WriteFile(filepath.Join(dir, f), readFile(t, filepath.Join("testdata", "legacy-state", f)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var lc legacyClient
	if err := json.Unmarshal(readFile(t, filepath.Join("testdata", "legacy-state", "client.json")), &lc); err != nil {
		t.Fatal(err)
	}
	return dir, &lc
}

// openHarness opens the device in dir with its clock at the given time.
func openHarness(t testing.TB, dir string, at time.Time) (*harness, error) {
	h := &harness{t: t, dir: dir, pub: newPublisher(), appr: newApprover(), clock: &testClock{offset: time.Until(at)}}
	dev, err := Open(Options{StateDir: dir, Approver: h.appr, Publisher: h.pub, Now: h.clock.now,
		Logf: func(f string, a ...any) { t.Logf("device: "+f, a...) }})
	if err != nil {
		return nil, err
	}
	h.dev = dev
	t.Cleanup(func() { dev.Close() })
	return h, nil
}

func (lc *legacyClient) client(t *testing.T, h *harness, psk []byte) *testClient {
	t.Helper()
	did, err1 := parseULID(lc.DeviceID)
	cid, err2 := parseULID(lc.ClientID)
	pk, err3 := kemScheme.UnmarshalBinaryPublicKey(lc.DeviceKey)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	return &testClient{h: h, deviceID: did, pkD: pk, clientID: cid, psk: psk}
}

func TestMigratesLegacyStateJSON(t *testing.T) {
	dir, lc := legacyDir(t)
	old := readFile(t, filepath.Join(dir, legacyFile))
	rid, _ := parseULID(lc.RequestID)
	// A minute after the old device stopped: its rotation overlap is open.
	h, err := openHarness(t, dir, rid.time().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, legacyFile)); err == nil {
		t.Fatal("state.json is still in place after the migration")
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, migratedFile)), old) {
		t.Fatal("state.json.migrated is not the old file")
	}
	checkModes(t, dir)

	// The retained exchange answers a redelivery with the exact bytes the
	// old device released, without a new decision.
	if err := h.dev.Deliver(relay.Message{DeviceID: lc.DeviceID, ClientID: lc.ClientID, RequestID: lc.RequestID,
		Kind: "request", Payload: lc.Request}); err != nil {
		t.Fatal(err)
	}
	if got := h.pub.responses(t, lc.ClientID, lc.RequestID, 1)[0]; !bytes.Equal(got, lc.Response) {
		t.Fatalf("redelivery after migration answered %s, want the retained %s", got, lc.Response)
	}
	if n := h.appr.count(""); n != 0 {
		t.Fatalf("%d approvals asked for a redelivery", n)
	}

	// The binding with its rotated PSK, the overlap of the previous one and
	// the approved invocation came across.
	c := lc.client(t, h, lc.PSK)
	if m := c.call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("request with the current PSK after migration: %v", m)
	}
	if m := lc.client(t, h, lc.PreviousPSK).call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("previous PSK refused within the migrated overlap: %v", m)
	}
	st := readState(t, dir)
	if inv := st.Invocations[lc.RequestID]; inv == nil || inv.ClientID != lc.ClientID || len(inv.TokenHash) != 32 {
		t.Fatalf("invocation after migration: %+v", inv)
	}
	if len(st.Exchanges) != 5 || len(st.Pairings) != 1 || len(st.Clients) != 1 {
		t.Fatalf("after migration: %d exchanges, %d pairings, %d clients", len(st.Exchanges), len(st.Pairings), len(st.Clients))
	}

	// Migrated records expire through the index like new ones: a week on,
	// one new request's prune leaves only that request.
	h.clock.advance(8 * 24 * time.Hour)
	if m := c.call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("request a week later: %v", m)
	}
	st = readState(t, dir)
	if len(st.Exchanges) != 1 || len(st.Invocations) != 0 || len(st.Pairings) != 0 {
		t.Fatalf("a week later: %d exchanges, %d invocations, %d pairings retained", len(st.Exchanges), len(st.Invocations), len(st.Pairings))
	}
	if b := st.Clients[lc.ClientID]; b == nil || b.PreviousPSK != nil || !bytes.Equal(b.PSK, lc.PSK) {
		t.Fatalf("binding a week later: %+v", b)
	}
}

func TestFailedMigrationKeepsStateJSON(t *testing.T) {
	dir, lc := legacyDir(t)
	good := readFile(t, filepath.Join(dir, legacyFile))
	bad := []byte(`{"clients": 7}`)
	os.WriteFile(filepath.Join(dir, legacyFile), bad, 0o600)
	_, err := openHarness(t, dir, time.Now())
	if err == nil || !strings.Contains(err.Error(), legacyFile) {
		t.Fatalf("Open with an unreadable state.json: %v", err)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, legacyFile)), bad) {
		t.Fatal("a failed migration changed state.json")
	}
	for _, f := range []string{dbFile, migratedFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("a failed migration left %s", f)
		}
	}
	checkModes(t, dir) // and no temporary database

	// A temporary database left by an attempt that crashed is neither
	// used nor left behind by the next one.
	os.WriteFile(filepath.Join(dir, "."+dbFile+".tmp-42"), []byte("partial"), 0o600)
	os.WriteFile(filepath.Join(dir, legacyFile), good, 0o600)
	rid, _ := parseULID(lc.RequestID)
	h, err := openHarness(t, dir, rid.time().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
	if m := lc.client(t, h, lc.PSK).call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("request after the retried migration: %v", m)
	}
}

func TestMigrationStoppedBeforeSettingAside(t *testing.T) {
	dir, lc := legacyDir(t)
	rid, _ := parseULID(lc.RequestID)
	h, err := openHarness(t, dir, rid.time().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	h.dev.Close()
	// As if the migration had stopped after state.db was renamed into
	// place: a state.json is back. The database is authoritative, so this
	// (empty) document must not replace what it holds.
	os.WriteFile(filepath.Join(dir, legacyFile), []byte("{}\n"), 0o600)
	h, err = openHarness(t, dir, rid.time().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, legacyFile)); err == nil {
		t.Fatal("the leftover state.json was not set aside")
	}
	if got := string(readFile(t, filepath.Join(dir, migratedFile))); got != "{}\n" {
		t.Fatalf("state.json.migrated holds %q", got)
	}
	if m := lc.client(t, h, lc.PSK).call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("the database lost the binding: %v", m)
	}
}

func readExchange(t *testing.T, dir, key string) *exchange {
	t.Helper()
	var ex *exchange
	if err := transact(dir, func(tx *txn) error {
		st, err := tx.state()
		if err == nil {
			ex = st.exchange(key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ex
}

func countRecords(t *testing.T, dir, bucket string) int {
	t.Helper()
	n := 0
	if err := transact(dir, func(tx *txn) error {
		st, err := tx.state()
		if err == nil {
			n = st.tx.Bucket([]byte(bucket)).Stats().KeyN
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// wchar is the number of bytes this process has passed to write calls
// (pwrite included), from /proc/self/io.
func wchar(t *testing.T) int64 {
	t.Helper()
	for _, line := range strings.Split(string(readFile(t, "/proc/self/io")), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no wchar in /proc/self/io")
	return 0
}

// TestRequestWritesAreBoundedAt10000Exchanges is the guard against state
// whose cost grows with history: with 10,000 retained exchanges and
// invocations, one approved Invocation and its completion write about what
// they write on a fresh device, a small fraction of the database.
func TestRequestWritesAreBoundedAt10000Exchanges(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts written bytes through /proc/self/io")
	}
	h := newHarness(t)
	if err := SetEnvSecret(h.dir, "github", "", map[string]string{"GH_HOST": "github.com", "GH_TOKEN": "tok-123"}); err != nil {
		t.Fatal(err)
	}
	c := h.pair()
	invoke := func() (written int64, requestID string) {
		t.Helper()
		before := wchar(t)
		x := c.newRequest(newULID(h.clock.now()), body(t, "Invocation", invocationFields(map[string]any{"github": map[string]any{}})))
		x.deliver()
		if m, ok := x.open(x.rawResponse(1)); !ok || m["result"] != "APPROVED" {
			t.Fatalf("Invocation: %v", m)
		}
		x.complete(map[string]any{"result": "APPROVED"})
		key := exchangeKey(c.clientID.String(), x.requestID.String())
		for deadline := time.Now().Add(waitLimit); ; time.Sleep(time.Millisecond) {
			if ex := readExchange(t, h.dir, key); ex != nil && ex.Completion != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the completion was not stored")
			}
		}
		return wchar(t) - before, x.requestID.String()
	}
	invoke() // the first after pairing may still prune or grow the file
	fresh, rid := invoke()

	// 10,000 copies of that exchange and invocation, spread over the last
	// 20 hours (none due for pruning), written directly.
	seedRetained(t, h, exchangeKey(c.clientID.String(), rid), 10000)
	if n := countRecords(t, h.dir, bucketExchanges); n < 10000 {
		t.Fatalf("%d exchanges retained after seeding", n)
	}
	fi, err := os.Stat(filepath.Join(h.dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	invoke()
	retained, _ := invoke()
	t.Logf("bytes written per Invocation and completion: %d fresh, %d with 10,000 retained; state.db %d bytes", fresh, retained, fi.Size())
	if limit := 4 * fresh; retained > limit {
		t.Errorf("with 10,000 retained exchanges a request wrote %d bytes, more than 4 times the %d of a fresh device", retained, fresh)
	}
	if retained > fi.Size()/16 {
		t.Errorf("a request wrote %d bytes of a %d-byte database", retained, fi.Size())
	}
}

// seedRetained stores n copies of the exchange under key and of its
// invocation, with request ids spread over the last 20 hours.
func seedRetained(t testing.TB, h *harness, key string, n int) {
	t.Helper()
	now := h.clock.now()
	if err := transact(h.dir, func(tx *txn) error {
		st, err := tx.state()
		if err != nil {
			return err
		}
		ex0 := st.exchange(key)
		inv0 := st.invocation(ex0.RequestID)
		for i := range n {
			id := newULID(now.Add(-20 * time.Hour).Add(time.Duration(i) * 20 * time.Hour / time.Duration(n))).String()
			ex, inv := *ex0, *inv0
			ex.RequestID, inv.ID = id, id
			st.addExchange(&ex)
			st.addInvocation(&inv)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkInvocation is the device's own share of an approved run: the
// Invocation request through Deliver to its released response, then the
// completion, against the state directory (fsyncs included), on a fresh
// device and on one retaining 10,000 exchanges and invocations.
func BenchmarkInvocation(b *testing.B) {
	for _, retained := range []int{0, 10000} {
		b.Run(fmt.Sprintf("retained=%d", retained), func(b *testing.B) {
			h := newHarness(b)
			if err := SetEnvSecret(h.dir, "github", "", map[string]string{"GH_HOST": "github.com", "GH_TOKEN": "tok-123"}); err != nil {
				b.Fatal(err)
			}
			c := h.pair()
			fields := invocationFields(map[string]any{"github": map[string]any{}})
			invoke := func() string {
				x := c.newRequest(newULID(h.clock.now()), body(b, "Invocation", fields))
				x.deliver()
				x.rawResponse(1)
				x.complete(map[string]any{"result": "APPROVED"})
				return exchangeKey(c.clientID.String(), x.requestID.String())
			}
			key := invoke()
			if retained > 0 {
				seedRetained(b, h, key, retained)
			}
			for b.Loop() {
				invoke()
			}
		})
	}
}
