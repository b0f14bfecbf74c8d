// Launch-path cost, as figures rather than assertions: the launcher's
// selection, inspection, test approval and exec against running the same
// command directly, and the streaming hash against a plain SHA-256 of the
// same bytes, each measured in the same run.

package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLaunchOverhead reports how many times longer `agentknock -s x --
// true` (approval already waiting) takes than `true` run directly.
func BenchmarkLaunchOverhead(b *testing.B) {
	approval := b.TempDir()
	os.WriteFile(filepath.Join(approval, "response.json"), []byte(`{"secrets":{"x":{"TOKEN":"v"}}}`), 0o644)
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1)")
	}
	run := func(name string, args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "AGENTKNOCK_TEST_APPROVAL="+approval)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	var direct, launched time.Duration
	for i := 0; i < b.N; i++ {
		direct += run(trueBin)
		launched += run(testBinary, "--quiet", "-s", "x", "--", trueBin)
	}
	b.ReportMetric(float64(launched)/float64(direct), "x-direct")
	b.ReportMetric(float64(launched-direct)/float64(b.N)/1e6, "ms-added/op")
}

// BenchmarkInspectHash reports the one-pass inspection (hash, shebang and
// head capture) relative to sha256.Sum256 over the same 32 MiB.
func BenchmarkInspectHash(b *testing.B) {
	data := bytes.Repeat([]byte("agentknock"), 32<<20/10)
	var plain, stream time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sha256.Sum256(data)
		plain += time.Since(start)
		start = time.Now()
		if _, _, _, err := hashStream(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		stream += time.Since(start)
	}
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(stream)/float64(plain), "x-sha256")
}
