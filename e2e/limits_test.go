// The size limits of delivery (issue finding 1): a value the relay could
// never carry is refused when it is stored, and a response that would not
// fit in one relay frame reaches the client as an authenticated error
// within seconds instead of a silent wait. Standard input carries values
// over the 128 KiB limit of one environment string.
package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func (w *world) valueFile(name string, size int) string {
	w.t.Helper()
	path := filepath.Join(w.input, name)
	if err := os.WriteFile(path, []byte(strings.Repeat("v", size)), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return path
}

func TestDeviceRefusesValuesItCannotDeliver(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.device("secret", "set", "huge", "HUGE=@"+w.valueFile("huge", 200<<10))
	if r.code == 0 || !strings.Contains(r.stderr, "too large to deliver") || !strings.Contains(r.stderr, "256 KiB") {
		t.Fatalf("secret set of a 200 KiB value: %s", r)
	}
	if l := w.deviceOK("secret", "list"); strings.Contains(l.stdout, "huge") {
		t.Fatalf("the refused secret was stored: %s", l)
	}
	// Values that fit are kept, up to the limit the message names.
	w.deviceOK("secret", "set", "large", "LARGE=@"+w.valueFile("large", 150<<10))
}

func TestOversizedResponseIsReportedNotAwaited(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.deviceOK("secret", "set", "big1", "BIG1=@"+w.valueFile("big1", 120<<10))
	w.deviceOK("secret", "set", "big2", "BIG2=@"+w.valueFile("big2", 120<<10))
	w.startServe(`{"default":"approve","pairing":"approve"}`, "")
	w.pair()

	// Each fits alone; together the approval does not fit in one frame.
	marker := w.markerPath("ran")
	start := time.Now()
	r := w.agentknock("-s", "big1", "-s", "big2", "--", "touch", marker)
	t.Logf("two 120 KiB secrets: exit %d after %v: %s", r.code, time.Since(start).Round(time.Millisecond), lastLine(r.stderr))
	if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, "INVALID_REQUEST") || !strings.Contains(r.stderr, "256 KiB") {
		t.Fatalf("run whose approval does not fit in a frame: %s", r)
	}

	// An update that would make big1 undeliverable is refused at approval.
	if r := w.agentknock("secret", "upload", "big1", "--update", "--from-file", "MORE="+w.valueFile("more", 120<<10)); r.code != 0 {
		t.Fatalf("secret upload --update: %s", r)
	}
	id := w.uploads()["big1"].ID
	if r := w.device("upload", "accept", id); r.code == 0 || !strings.Contains(r.stderr, "too large to deliver") {
		t.Fatalf("accepting an update to 240 KiB: %s", r)
	}

	// 150 KiB through standard input: over the environment's 128 KiB
	// string limit, within the frame.
	w.deviceOK("secret", "set", "large", "LARGE=@"+w.valueFile("large", 150<<10))
	r = w.agentknock("-s", "large", "--stdin", "large", "LARGE", "--", "wc", "-c")
	if r.code != 0 || strings.TrimSpace(r.stdout) != strconv.Itoa(150<<10) {
		t.Fatalf("150 KiB on standard input: %s", r)
	}
}
