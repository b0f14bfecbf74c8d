// pairing.json: the reference client's format, mode 0600, unknown members
// kept, atomic replacement.

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A pairing file as the reference client writes it, plus a member this
// client does not know.
const referencePairing = `{
  "device_id": "01K2ENXDTW1P3XAR4J7V7C9D0H",
  "client_id": "01K2EP16NWNAGJYF8J1Q2V6P3X",
  "client_token": "ERERERERERERERERERERERERERERERERERERERERERE",
  "client_psk": "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=",
  "device_key": "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=",
  "rotated_at": 1700000000,
  "future_member": {"kept": true}
}
`

func writeTestPairing(t *testing.T, home, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, pairingFileName), []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(home, pairingFileName), mode)
}

func TestPairingFileReadsTheReferenceFormat(t *testing.T) {
	home := t.TempDir()
	writeTestPairing(t, home, referencePairing, 0o600)
	p, err := readPairingFile(home)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pending || p.DeviceID.String() != "01K2ENXDTW1P3XAR4J7V7C9D0H" || p.ClientID.String() != "01K2EP16NWNAGJYF8J1Q2V6P3X" ||
		!bytes.Equal(p.ClientPSK, bytes.Repeat([]byte{0x42}, 32)) || p.RotatedAt != 1700000000 {
		t.Fatalf("read %+v", p)
	}

	// Rewriting keeps the unknown member and the file private.
	s, err := lockStateDir(home)
	if err != nil {
		t.Fatal(err)
	}
	p.RotationKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	if err := s.writePairing(p); err != nil {
		t.Fatal(err)
	}
	s.unlock()
	data, _ := os.ReadFile(filepath.Join(home, pairingFileName))
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		t.Fatal(err)
	}
	var kept bytes.Buffer
	json.Compact(&kept, members["future_member"])
	if kept.String() != `{"kept":true}` || members["rotation_key"] == nil || members["pending"] != nil {
		t.Fatalf("rewritten file %s", data)
	}
	st, _ := os.Stat(filepath.Join(home, pairingFileName))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	entries, _ := os.ReadDir(home)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestPairingFileRefusesBadFiles(t *testing.T) {
	cases := map[string]struct {
		text string
		mode os.FileMode
		want string
	}{
		"group readable":      {referencePairing, 0o640, "0600 is required"},
		"short psk":           {strings.Replace(referencePairing, "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=", "QkJC", 1), 0o600, "client_psk must be 32 bytes"},
		"padded token":        {strings.Replace(referencePairing, `"ERERERERERERERERERERERERERERERERERERERERERE"`, `"ERERERERERERERERERERERERERERERERERERERERERE="`, 1), 0o600, "client_token"},
		"lowercase device id": {strings.Replace(referencePairing, "01K2ENXDTW1P3XAR4J7V7C9D0H", "01k2enxdtw1p3xar4j7v7c9d0h", 1), 0o600, "not valid"},
		"not json":            {"{", 0o600, "not valid"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			writeTestPairing(t, home, c.text, c.mode)
			_, err := readPairingFile(home)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if strings.Contains(fmtErr(err), "QkJCQkJC") {
				t.Fatal("the error shows the PSK")
			}
		})
	}
	if _, err := readPairingFile(t.TempDir()); err != errNoPairing {
		t.Fatalf("missing file: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A pairing start while a pairing exists refuses and leaves the file as it was.
func TestPairingStartRefusesToReplaceAPairing(t *testing.T) {
	for _, pending := range []bool{false, true} {
		home := t.TempDir()
		text := referencePairing
		if pending {
			text = strings.Replace(text, "{\n", "{\n  \"pending\": true,\n", 1)
		}
		writeTestPairing(t, home, text, 0o600)
		err := pairingStart(home, "calm-river-lantern", "", &signalWatch{}, newOutput(true, false))
		want := "already paired"
		if pending {
			want = "already waiting for confirmation"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("pending=%v: %v", pending, err)
		}
		data, _ := os.ReadFile(filepath.Join(home, pairingFileName))
		if string(data) != text {
			t.Fatal("the pairing file changed")
		}
	}
}

// Pairing files byte for byte as the reference client writes them
// (src/config.rs): a pending pairing in the order of its PendingPairingFile
// struct; an active one and one with a rotation waiting for the device as
// serde_json writes a map, members in name order; both pretty-printed with
// a final newline. Its test home (tests/support/mod.rs, TestHome) writes
// the same members.
const (
	refPendingPairing = `{
  "pending": true,
  "device_id": "01K2ENXDTW1P3XAR4J7V7C9D0H",
  "client_id": "01K2EP16NWNAGJYF8J1Q2V6P3X",
  "client_token": "JCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQ",
  "client_psk": "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=",
  "device_key": "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=",
  "rotated_at": 1700000000
}
`
	refActivePairing = `{
  "client_id": "01K2EP16NWNAGJYF8J1Q2V6P3X",
  "client_psk": "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=",
  "client_token": "JCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQ",
  "device_id": "01K2ENXDTW1P3XAR4J7V7C9D0H",
  "device_key": "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=",
  "rotated_at": 1700000000
}
`
	refRotatingPairing = `{
  "client_id": "01K2EP16NWNAGJYF8J1Q2V6P3X",
  "client_psk": "d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3c=",
  "client_token": "JCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQ",
  "device_id": "01K2ENXDTW1P3XAR4J7V7C9D0H",
  "device_key": "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=",
  "rotated_at": 1700086400,
  "rotation_key": "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="
}
`
)

// referenceAccepts applies the reference client's rules for reading a
// pairing file (src/config.rs, Pairing and its deserializers): a JSON
// object; canonical uppercase ULIDs; a canonical unpadded base64url client
// token of 32 bytes; standard base64 client_psk of 32 bytes and device_key;
// rotated_at an unsigned integer; pending, when present, a boolean;
// rotation_key, when present, standard base64 of 32 bytes.
func referenceAccepts(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, data)
	}
	str := func(name string) string {
		s, ok := m[name].(string)
		if !ok {
			t.Fatalf("%s is not a string in\n%s", name, data)
		}
		return s
	}
	for _, id := range []string{"device_id", "client_id"} {
		u, err := parseULID(str(id))
		if err != nil || u.String() != str(id) {
			t.Fatalf("%s %q is not a canonical ULID", id, str(id))
		}
	}
	if tok, err := base64.RawURLEncoding.DecodeString(str("client_token")); err != nil || len(tok) != 32 || base64.RawURLEncoding.EncodeToString(tok) != str("client_token") {
		t.Fatalf("client_token %q", str("client_token"))
	}
	if psk, err := base64.StdEncoding.Strict().DecodeString(str("client_psk")); err != nil || len(psk) != 32 {
		t.Fatalf("client_psk %q", str("client_psk"))
	}
	if _, err := base64.StdEncoding.Strict().DecodeString(str("device_key")); err != nil {
		t.Fatalf("device_key %q", str("device_key"))
	}
	if n, ok := m["rotated_at"].(json.Number); !ok || strings.ContainsAny(n.String(), "-.eE") {
		t.Fatalf("rotated_at %v", m["rotated_at"])
	}
	if v, ok := m["pending"]; ok {
		if _, ok := v.(bool); !ok {
			t.Fatalf("pending %v", v)
		}
	}
	if _, ok := m["rotation_key"]; ok {
		if k, err := base64.StdEncoding.Strict().DecodeString(str("rotation_key")); err != nil || len(k) != 32 {
			t.Fatalf("rotation_key %q", str("rotation_key"))
		}
	}
	return m
}

// The round trip both ways: files the reference wrote are read here with
// the same meaning, and what this client writes back is what the reference
// reads; where the reference would write the same state, the bytes are the
// same.
func TestPairingFileRoundTripWithTheReference(t *testing.T) {
	cases := []struct {
		name, text   string
		pending      bool
		rotationKey  bool
		sameBytesOut bool
	}{
		{"pending", refPendingPairing, true, false, false},
		{"active", refActivePairing, false, false, true},
		{"rotation pending", refRotatingPairing, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			writeTestPairing(t, home, c.text, 0o600)
			p, err := readPairingFile(home)
			if err != nil {
				t.Fatal(err)
			}
			if p.Pending != c.pending || (p.RotationKey != "") != c.rotationKey || p.ClientID.String() != "01K2EP16NWNAGJYF8J1Q2V6P3X" ||
				p.ClientToken != base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0x24}, 32)) {
				t.Fatalf("read %+v", p)
			}
			s, err := lockStateDir(home)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.writePairing(p); err != nil {
				t.Fatal(err)
			}
			if c.pending {
				// pairing finish: the reference removes "pending" and
				// writes the rest as a map.
				p.Pending = false
				if err := s.writePairing(p); err != nil {
					t.Fatal(err)
				}
			}
			s.unlock()
			data, err := os.ReadFile(filepath.Join(home, pairingFileName))
			if err != nil {
				t.Fatal(err)
			}
			m := referenceAccepts(t, data)
			if _, ok := m["pending"]; ok {
				t.Errorf("pending kept after finish:\n%s", data)
			}
			want := c.text
			if c.pending {
				want = refActivePairing
			}
			if c.sameBytesOut || c.pending {
				if string(data) != want {
					t.Errorf("wrote\n%s\nthe reference writes\n%s", data, want)
				}
			}
			if st, _ := os.Stat(filepath.Join(home, pairingFileName)); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", st.Mode())
			}
		})
	}
}

// Tests of the bounds of state.go: FIFOs and other non-regular files, lock
// waits, the temporary files of interrupted writes, size limits on the
// file and on unknown members, and the ownership and mode checks of the
// home and the file (issue findings 4, 5 and 7), and the local checks
// pairing start makes before it contacts the device (finding 3).

// withinGuard runs f and fails the test if it has not returned after a
// generous guard: what it checks is that f does not hang.
func withinGuard[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return (it blocks)", what)
		panic("unreachable")
	}
}

func TestPairingFileThatIsAFIFODoesNotBlock(t *testing.T) {
	home := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(home, pairingFileName), 0o600); err != nil {
		t.Fatal(err)
	}
	err := withinGuard(t, "reading a FIFO pairing.json", func() error { _, err := readPairingFile(home); return err })
	if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("FIFO pairing.json: %v", err)
	}
	// Commands that write refuse it too, without blocking.
	err = withinGuard(t, "pairing start over a FIFO", func() error {
		return pairingStart(home, "calm-river-lantern", "", &signalWatch{}, newOutput(true, false))
	})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("pairing start: %v", err)
	}
}

func TestStateLockWaitGivesUp(t *testing.T) {
	home := t.TempDir()
	holder, err := os.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := unix.Flock(int(holder.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The wait is announced as the command's other lines are: prefixed
	// "AGENTKNOCK: " in a run only (the reference's rule), plain in
	// `pairing start` and the other commands, not at all with --quiet.
	for _, c := range []struct {
		out  *output
		want string
	}{
		{&output{}, messagePrefix + "Waiting for the lock on " + home},
		{&output{plain: true}, "Waiting for the lock on " + home},
		{&output{quiet: true}, ""},
	} {
		var b strings.Builder
		c.out.w = &b
		s := withinGuard(t, "a lock wait", func() *stateDir {
			s, lerr := lockStateDirWithin(home, 50*time.Millisecond, 300*time.Millisecond, c.out.announce)
			err = lerr
			return s
		})
		if err == nil {
			s.unlock()
			t.Fatal("took a lock another process holds")
		}
		if !strings.Contains(err.Error(), "gave up after 300ms waiting for the lock on "+home) {
			t.Fatalf("lock wait: %v", err)
		}
		if got := b.String(); (c.want == "" && got != "") || !strings.HasPrefix(got, c.want) {
			t.Fatalf("the wait was announced as %q, want %q", got, c.want)
		}
	}
	// Released, the lock is taken at once.
	holder.Close()
	s, err := lockStateDirWithin(home, 50*time.Millisecond, 300*time.Millisecond, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	s.unlock()
}

func TestStaleTemporariesAreRemovedAtTheNextWrite(t *testing.T) {
	home := t.TempDir()
	writeTestPairing(t, home, referencePairing, 0o600)
	// What a kill -9 during writeFileAtomic leaves: full copies.
	for i := range 3 {
		writeTestPairing(t, home, referencePairing, 0o600)
		if err := os.WriteFile(filepath.Join(home, fmt.Sprintf(".pairing.json.%d", 1000+i)), []byte(referencePairing), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(home, "notes.txt")
	os.WriteFile(other, []byte("kept"), 0o600)
	s, err := lockStateDir(home)
	if err != nil {
		t.Fatal(err)
	}
	p, err := readPairingFile(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.writePairing(p); err != nil {
		t.Fatal(err)
	}
	s.unlock()
	entries, _ := os.ReadDir(home)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "notes.txt pairing.json" {
		t.Fatalf("after a write the home holds %v", names)
	}
}

func TestPairingFileSizeLimits(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, pairingFileName)
	// 100 MB, sparse: refused from its size, without reading it.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20)
	f.Close()
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "at most 64 KiB") {
		t.Fatalf("100 MB pairing.json: %v", err)
	}
	// A valid pairing with a 100 KB member this client does not know.
	big := strings.Replace(referencePairing, `"future_member": {"kept": true}`, `"future_member": "`+strings.Repeat("x", 100<<10)+`"`, 1)
	os.Remove(path)
	writeTestPairing(t, home, big, 0o600)
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "at most 64 KiB") {
		t.Fatalf("100 KB member: %v", err)
	}
	// Under the file limit but over the limit for unknown members.
	mid := strings.Replace(referencePairing, `"future_member": {"kept": true}`, `"future_member": "`+strings.Repeat("x", 20<<10)+`"`, 1)
	writeTestPairing(t, home, mid, 0o600)
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "at most 16 KiB of them are kept") {
		t.Fatalf("20 KB unknown member: %v", err)
	}
}

func TestStateHomeAndFileOwnershipAndMode(t *testing.T) {
	home := t.TempDir()
	writeTestPairing(t, home, referencePairing, 0o600)
	for _, mode := range []os.FileMode{0o777, 0o720, 0o702} {
		os.Chmod(home, mode)
		if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "bad permissions of "+home) {
			t.Errorf("home mode %04o, read: %v", mode, err)
		}
		if s, err := lockStateDir(home); err == nil || !strings.Contains(err.Error(), "bad permissions of "+home) {
			if s != nil {
				s.unlock()
			}
			t.Errorf("home mode %04o, lock: %v", mode, err)
		}
	}
	os.Chmod(home, 0o755)
	if _, err := readPairingFile(home); err != nil {
		t.Fatalf("home mode 0755: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the ownership cases need chown")
		return
	}
	if err := os.Chown(filepath.Join(home, pairingFileName), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "bad ownership of pairing file") {
		t.Errorf("pairing.json of another user: %v", err)
	}
	os.Chown(filepath.Join(home, pairingFileName), 0, 0)
	os.Chown(home, 65534, 65534)
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "bad ownership of "+home) {
		t.Errorf("home of another user: %v", err)
	}
}

// countingRelay accepts TCP connections and counts them; it never speaks
// HTTP, so a client that contacts it fails.
func countingRelay(t *testing.T) (url string, count func() int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n := make(chan struct{}, 100)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n <- struct{}{}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	return "ws://" + ln.Addr().String(), func() int { return len(n) }
}

func TestPairingStartChecksTheHomeBeforeContactingTheDevice(t *testing.T) {
	relayURL, contacts := countingRelay(t)
	t.Setenv("AGENTKNOCK_RELAY_URL", "")
	unwritable := map[string]func(t *testing.T) string{
		"home with a FIFO pairing.json": func(t *testing.T) string {
			home := t.TempDir()
			syscall.Mkfifo(filepath.Join(home, pairingFileName), 0o600)
			return home
		},
		"home writable by others": func(t *testing.T) string {
			home := t.TempDir()
			os.Chmod(home, 0o777)
			return home
		},
	}
	if st, err := os.Stat("/proc/self/fdinfo"); err == nil && st.IsDir() {
		// A directory this process owns in which nobody, not even root,
		// can create a file.
		unwritable["home in which no file can be created"] = func(t *testing.T) string { return "/proc/self/fdinfo" }
	}
	for name, mk := range unwritable {
		t.Run(name, func(t *testing.T) {
			before := contacts()
			err := withinGuard(t, "pairing start", func() error {
				return pairingStart(mk(t), "calm-river-lantern", relayURL, &signalWatch{}, newOutput(true, false))
			})
			if err == nil {
				t.Fatal("pairing start succeeded")
			}
			if errors.Is(err, errRelayUnavailable) || contacts() != before {
				t.Fatalf("the relay was contacted (%d times) before the home was checked: %v", contacts()-before, err)
			}
		})
	}
}
