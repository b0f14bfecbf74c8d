// The hashing series of scripts/bench: a 256 MiB executable against a
// small one, and one hashing pass against sha256sum.

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// hashBench runs a 256 MiB executable (a copy of true(1) with data appended,
// which the loader ignores) and a plain copy, and sha256sum on the big one.
func hashBench(c config, root string, w *world, trueBin string) error {
	small, big := filepath.Join(root, "small-true"), filepath.Join(root, "big-true")
	code, err := os.ReadFile(trueBin)
	if err != nil {
		return err
	}
	if err := os.WriteFile(small, code, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(big, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	f.Write(code)
	pad := bytes.Repeat([]byte("agentknock-bench"), 1<<16)
	for written := int64(len(code)); written < int64(c.hashMiB)<<20; written += int64(len(pad)) {
		if _, err := f.Write(pad[:min(int64(len(pad)), int64(c.hashMiB)<<20-written)]); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	var runBig, runSmall, sum []time.Duration
	for range c.hashRuns + 1 { // the first round only warms the page cache
		rb, err := w.agentknock("run", "--quiet", "-s", "demo", "--", big)
		if err != nil {
			return err
		}
		rs, err := w.agentknock("run", "--quiet", "-s", "demo", "--", small)
		if err != nil {
			return err
		}
		cmd := exec.Command("sha256sum", big)
		cmd.Stdout = io.Discard
		s, err := timed(cmd)
		if err != nil {
			return err
		}
		runBig, runSmall, sum = append(runBig, rb.wall), append(runSmall, rs.wall), append(sum, s.wall)
	}
	runBig, runSmall, sum = runBig[1:], runSmall[1:], sum[1:]
	added := median(runBig) - median(runSmall)
	fmt.Printf("\nexecutable hashing, %d MiB (median of %d):\n", c.hashMiB, c.hashRuns)
	fmt.Printf("  run adds %s over a small executable: two passes (before the request and before exec)\n", ms(added))
	fmt.Printf("  sha256sum %s; per pass %.2fx sha256sum\n", ms(median(sum)), ratio(added/2, median(sum)))
	return nil
}
