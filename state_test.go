// pairing.json: the reference client's format, mode 0600, unknown members
// kept, atomic replacement.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
