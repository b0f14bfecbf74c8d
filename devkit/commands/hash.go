// Which shell the executable is (design: "What the device tells the
// person": the device trusts the executable, never argv[0]). The client
// reports the executable's path and SHA-256; where this host has a file at
// that path, or a shell with that hash, the hash decides. Hashing a shell
// costs about a millisecond, so an Analyzer remembers each file's hash by
// (path, device, inode, size, modification time): a replaced or rewritten
// file has another key and is hashed again.
package commands

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sync"
	"syscall"
)

// hostShells are where this host's shells live; the device hashes them to
// recognise a shell the client reports under another path.
var hostShells = []string{"/bin/sh", "/bin/bash", "/bin/dash", "/bin/zsh", "/usr/bin/sh", "/usr/bin/bash",
	"/usr/bin/dash", "/usr/bin/zsh", "/usr/local/bin/bash", "/usr/local/bin/zsh", "/opt/homebrew/bin/bash"}

// fileKey identifies one version of a file without reading it.
type fileKey struct {
	path       string
	dev, ino   uint64
	size       int64
	mtimeNanos int64
}

// hashCache remembers file hashes by fileKey; safe for concurrent use.
type hashCache struct {
	mu   sync.Mutex
	sums map[fileKey][]byte
}

// maxCached bounds the cache: a client naming many files cannot grow it
// without end (it is emptied when full).
const maxCached = 256

// hashFile hashes a regular file of at most 64 MiB, through the cache when
// there is one.
func (c *hashCache) hashFile(p string) ([]byte, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<20 {
		return nil, false
	}
	var key fileKey
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && c != nil {
		key = fileKey{path: p, dev: uint64(sys.Dev), ino: uint64(sys.Ino), size: st.Size(), mtimeNanos: st.ModTime().UnixNano()}
		c.mu.Lock()
		sum, hit := c.sums[key]
		c.mu.Unlock()
		if hit {
			return sum, true
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, false
	}
	sum := h.Sum(nil)
	if key.path != "" {
		c.mu.Lock()
		if c.sums == nil || len(c.sums) >= maxCached {
			c.sums = map[fileKey][]byte{}
		}
		c.sums[key] = sum
		c.mu.Unlock()
	}
	return sum, true
}

// shellOfExecutable names the shell the executable is. The path is the one
// the client resolved (symbolic links followed); busybox is sh when argv[0]
// says so, since busybox picks its applet by argv[0]. problem: argv[0]
// names a shell but the executable is another program, or the hash
// contradicts the path.
func (z *Analyzer) shellOfExecutable(r *Request) (sh, trust, problem string) {
	exe := r.Executable
	base := path.Base(exe)
	if exe == "" {
		base = ""
	}
	argv0 := ""
	if len(r.Argv) > 0 {
		argv0 = r.Argv[0]
	}
	if base == "busybox" && slices.Contains([]string{"sh", "ash"}, path.Base(argv0)) {
		base = "ash"
	}
	_, isShell := shellLangs[base]
	if !isShell {
		if claimed := ShellOf(argv0); claimed != "" {
			shown := exe
			if shown == "" {
				shown = "(not reported)"
			}
			return "", "", fmt.Sprintf("argv[0] is %s, but the executable is %s: the script argument is code for that program, which the device does not explain",
				Literal(argv0), Literal(shown))
		}
		return "", "", ""
	}
	trust = "executable " + Literal(exe)
	want := r.ExecutableSHA256
	if want == nil {
		return base, trust + ", no hash sent", ""
	}
	if len(want) != sha256.Size {
		return "", "", "the executable's hash is not a SHA-256, so the device cannot tell what program runs the script"
	}
	if got, ok := z.hashes.hashFile(exe); ok {
		if string(got) == string(want) {
			return base, trust + ", its sha-256 matches this host's " + Literal(exe), ""
		}
		return "", "", fmt.Sprintf("the executable is named %s, but its sha-256 differs from this host's %s: the device cannot tell what program runs the script",
			Literal(exe), Literal(exe))
	}
	for _, p := range hostShells {
		if got, ok := z.hashes.hashFile(p); ok && string(got) == string(want) {
			if real := path.Base(p); shellLangs[real] != shellLangs[base] {
				return "", "", fmt.Sprintf("the executable is named %s, but its sha-256 is this host's %s", Literal(exe), p)
			}
			return base, trust + ", its sha-256 matches this host's " + p, ""
		}
	}
	return base, trust + ", no shell on this host has its sha-256 to compare", ""
}

// executableMatchesHost reports whether the executable's hash matches
// this host's file at that path (true when the device has no such file or
// no hash was sent: there is nothing to contradict).
func (z *Analyzer) executableMatchesHost(r *Request) (ok bool, compared bool) {
	if r.ExecutableSHA256 == nil {
		return true, false
	}
	got, have := z.hashes.hashFile(r.Executable)
	if !have {
		return true, false
	}
	return string(got) == string(r.ExecutableSHA256), true
}
