// The audit log: audit.jsonl in the state directory, one JSON object per
// line for every request the device was asked to decide, with who or what
// decided it, the request's reason, the explanation's verdict and marks,
// how the secrets were delivered and the SHA-256 of the whole request;
// `agentknock-device log` shows it, `log --verify [--key K]` checks it,
// `log --show SEQ` prints an entry's full request. Names only: secret
// values never reach it. (README: "The audit log, and how to verify it".)
//
// It is evidence, so:
//   - each entry carries its sequence number and the SHA-256 of the line
//     before it (prev), a chain that continues across rotation;
//   - each entry is sealed, forward-securely (systemd-journald's Forward
//     Secure Sealing; Bellare and Yee's forward-secure MACs): an HMAC under
//     the key at its position, after which the key evolves one way and the
//     new key replaces the old in audit.head, with the entry's number and
//     hash. init prints the first key once; with it, --verify checks every
//     seal and the head key's position, which whoever holds only the
//     current key cannot forge for an earlier entry;
//   - before each append (and at serve's start) the file's end is checked
//     against the head: a cut, a replaced or removed file stops the log
//     (every request is then denied with an answer) instead of a new chain
//     being started from whatever the file ends with;
//   - the file is opened with O_NOFOLLOW (a symbolic link is refused), its
//     mode is held at 0600, and appends from serve and the commands that
//     record (rules remove, log --new-key) are ordered by flock(2) on
//     audit.lock;
//   - each entry is written with one write(2) and fsync'd, then the head
//     with fsync, before the decision is sent; if the entry cannot be
//     written the decision is not sent (the approver denies instead);
//   - rules and grants are bound to it: the approval that made one records
//     its MAC, removals, expiries and drops are entries, and a rule or grant
//     is used only while its creation is in the verified log and its
//     removal is not;
//   - control, format and bidirectional characters are escaped as \uXXXX
//     in the file itself;
//   - size is bounded: each text field is capped (auditFieldCap, a command
//     summary at auditCommandCap), a line at auditLineCap (the full request
//     is kept only when it fits), and the file is rotated at
//     auditRotateSize into audit.jsonl.1 .. .3; the file dropped is
//     summarised in a sealed record, and refusals that needed nobody are
//     counted past auditRefusalsKept per epoch rather than written.
//
// A crash can tear the last line; the next entry ends it with a newline and
// carries the torn bytes' hash (torn), so --verify can tell a crash from an
// edit. A crash between an entry and its head leaves the head one behind;
// the entry's seal under the head's key shows it is the device's.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"agentknock.dev/agentknock/devkit/device"
)

const (
	auditFile     = "audit.jsonl"
	auditHeadFile = "audit.head"
	auditLockFile = "audit.lock"
	// auditRotateSize: the file is rotated before an entry would take it
	// past this size.
	auditRotateSize = 2 << 20
	// auditRotatedKept: audit.jsonl.1 (the newest) to .3 are kept; the
	// oldest is dropped at the next rotation, with a sealed record of it.
	auditRotatedKept = 3
	auditFieldCap    = 1024 // bytes of one text field, before escaping
	auditCommandCap  = 4096 // the command summary
	auditListCap     = 32   // items of a list (secrets, marks, delivery lines)
	auditLineCap     = 64 << 10

	// auditSealEvery: serve seals an epoch this often (journald's
	// default), so that the record says through when it is sealed.
	auditSealEvery = 15 * time.Minute
	// auditRefusalsKept: refusals that needed nobody (a request the
	// device refused as invalid, a policy denial) are written one by one
	// up to this many per epoch; beyond, they are counted into one sealed
	// summary entry, so that a flood of them cannot rotate real decisions
	// out of the log.
	auditRefusalsKept = 16
	// auditLiveCap bounds the rules and grants a rotation record carries.
	auditLiveCap = 512
	// auditKeySearch: how far past the chain's end --verify --key looks
	// for the position of the key in audit.head; auditKeyReach: how far
	// it evolves the key at all (about a second per million steps).
	auditKeySearch = 1 << 22
	auditKeyReach  = 1 << 24

	sealLabel       = "agentknock-device audit entry v1\n"
	evolveLabel     = "evolve"
	sealSuffixStart = `,"seal":"`
	sealSuffixLen   = len(sealSuffixStart) + 64 + len(`"}`)
	verifyKeyPrefix = "ak1-"
)

// auditEntry is one line of the log.
type auditEntry struct {
	Seq  uint64 `json:"seq"`
	Prev string `json:"prev"`           // hex SHA-256 of the previous line; "" for the first entry ever
	Torn string `json:"torn,omitempty"` // hex SHA-256 of a torn line just before this entry
	Note string `json:"note,omitempty"` // the device's remark on the log itself (mode fixed, key replaced)

	Time          time.Time           `json:"time"` // when it was decided
	Received      time.Time           `json:"received,omitzero"`
	ID            string              `json:"id,omitempty"`
	Kind          string              `json:"kind"` // an operation, or a record: seal | rotation | refusals | removal | key
	Client        string              `json:"client,omitempty"`
	RequestID     string              `json:"request_id,omitempty"`
	Secrets       []string            `json:"secrets,omitempty"`
	Command       string              `json:"command,omitempty"` // summary, shell-quoted, capped
	Directory     string              `json:"directory,omitempty"`
	Executable    string              `json:"executable,omitempty"`
	SHA256        string              `json:"sha256,omitempty"`         // hex; empty for execute-only binaries
	RequestReason string              `json:"request_reason,omitempty"` // the client's one-line reason
	Verdict       string              `json:"verdict,omitempty"`        // the explanation's first line
	Marks         []string            `json:"marks,omitempty"`          // the explanation's "!" lines
	Delivery      map[string][]string `json:"delivery,omitempty"`       // per secret: variable names and env/stdin
	Decision      string              `json:"decision"`                 // approved | denied | withdrawn | recorded
	Reason        string              `json:"reason,omitempty"`         // a denial's reason code
	DecidedBy     string              `json:"decided_by"`               // person | policy | rule | grant | device | client
	How           string              `json:"how,omitempty"`            // e.g. "on the terminal", "pinned rule r-4k2m9q"
	Rule          string              `json:"rule,omitempty"`           // the rule that decided, or was pinned
	Unbound       []string            `json:"unbound,omitempty"`        // a pin: what the person confirmed it does not bind

	// RequestSHA256 binds what ran: the SHA-256 of the request as the
	// device received it (requestRecord), whatever the summary's cap.
	RequestSHA256 string         `json:"request_sha256,omitempty"`
	Request       *requestRecord `json:"request,omitempty"`          // the full request, kept when the line has room
	RequestBytes  int            `json:"request_not_kept,omitempty"` // its size when not kept

	Creates  []auditBinding `json:"creates,omitempty"`  // rules and grants this decision made
	Removes  []auditBinding `json:"removes,omitempty"`  // rules and grants removed, expired or dropped
	Dropped  *auditDropped  `json:"dropped,omitempty"`  // a rotation: the file dropped
	Live     []auditBinding `json:"live,omitempty"`     // a rotation: the rules and grants in force
	Refusals *auditRefusals `json:"refusals,omitempty"` // a summary of refusals not written one by one

	Class    string `json:"class,omitempty"`     // of the command: read-only | other | irreversible (classify.go)
	ClassWhy string `json:"class_why,omitempty"` // "read-only: git status, executable /usr/bin/git"

	// Seal is read back only: the line's last member, HMAC-SHA256 of the
	// line before it under the key at the entry's position.
	Seal string `json:"seal,omitempty"`
}

// requestRecord is an invocation as the device received it: what the
// request hash covers and `log --show` prints.
type requestRecord struct {
	Client         string                    `json:"client"`
	Secrets        []string                  `json:"secrets"`
	Argv           []string                  `json:"argv"`
	Directory      string                    `json:"directory"`
	Executable     string                    `json:"executable"`
	ExecutableHash string                    `json:"executable_hash,omitempty"`
	ExecutableMode string                    `json:"executable_mode,omitempty"`
	ScriptSHA256   string                    `json:"script_sha256,omitempty"`
	Stdin          string                    `json:"stdin,omitempty"`
	Stdout         string                    `json:"stdout,omitempty"`
	Stderr         string                    `json:"stderr,omitempty"`
	LauncherChain  []string                  `json:"launcher_chain,omitempty"`
	Routing        map[string]device.Routing `json:"routing,omitempty"`
	Delivery       map[string][]string       `json:"delivery,omitempty"` // the environment names and where they go
}

func (r *requestRecord) digest() string {
	data, _ := json.Marshal(r)
	sum := sha256.Sum256(append([]byte("agentknock-device request v1\n"), data...))
	return hex.EncodeToString(sum[:])
}

// auditBinding names a pinned rule or a grant: what binds it to the log.
// A rule or grant is used only while its creation is in the verified log
// and its removal is not.
type auditBinding struct {
	Kind    string    `json:"kind"` // rule | grant
	ID      string    `json:"id,omitempty"`
	MAC     string    `json:"mac"`
	Expires time.Time `json:"expires,omitzero"`
	Why     string    `json:"why,omitempty"` // a removal: removed, expired, dropped
}

// auditDropped is what a rotation dropped: the oldest file, whole.
type auditDropped struct {
	Count    uint64 `json:"count"`
	First    uint64 `json:"first"`
	Last     uint64 `json:"last"`
	SHA256   string `json:"sha256"`    // of the file
	LastHash string `json:"last_hash"` // of its last line, which the next file's first entry links to
}

// auditRefusals counts refusals beyond auditRefusalsKept in an epoch.
type auditRefusals struct {
	Count  int       `json:"count"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Sample string    `json:"sample,omitempty"` // the last one, as the console showed it
}

// decidedBy is who or what answered a request, for the log.
type decidedBy struct {
	who     string // person | policy | rule | grant | device | client
	how     string
	rule    string
	unbound []string
	creates []auditBinding
	// class and classWhy: the command's class, for the log (classify.go).
	class, classWhy string
}

// auditHead is audit.head: the last entry written and the key that seals
// the next one. The key is the sealing key's current state; the earlier
// states are gone, so whoever reads the directory can forge no entry before
// this position (log --verify --key checks each seal from the start).
type auditHead struct {
	Seq    uint64    `json:"seq"`
	SHA256 string    `json:"sha256"`
	Key    string    `json:"key,omitempty"`    // hex; seals entry seq+1
	Origin uint64    `json:"origin,omitempty"` // the verification key seals entry origin+1
	Time   time.Time `json:"time,omitzero"`    // of entry seq
}

type auditLog struct {
	dir, path  string
	warn       func(string) // the console
	rotateSize int64        // auditRotateSize; smaller in tests
	syncs      atomic.Int64 // fsyncs done, for the benchmark

	mu       sync.Mutex
	prepared bool
	broken   string // why the log cannot be continued: every append fails
	note     string // a remark for the next entry
	live     map[string]auditBinding
	removed  map[string]uint64 // MAC: the entry that removed it
	indexed  uint64            // the last entry folded into live and removed
	kept     int               // refusals written one by one this epoch
	pending  *auditRefusals    // refusals counted, not yet written
}

// errAuditBroken: the log cannot take entries until a person looks.
type errAuditBroken struct{ why string }

func (e errAuditBroken) Error() string {
	return "the audit log cannot be continued: " + e.why +
		" (see 'agentknock-device log --verify'; after looking, 'log --new-key' starts a new sealed record and serve must be restarted)"
}

func newAuditLog(stateDir string, warn func(string)) *auditLog {
	return &auditLog{dir: stateDir, path: filepath.Join(stateDir, auditFile), warn: warn, rotateSize: auditRotateSize}
}

// openNoFollow opens a log file without following a symbolic link.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link; the device refuses to follow it (remove it, and a new log is started)", path)
	}
	return f, err
}

// Sealing: a forward-secure MAC chain (Bellare and Yee; the idea of
// systemd-journald's Forward Secure Sealing). Key k_0 is random; it seals
// entry origin+1, and k_{i+1} = HMAC-SHA256(k_i, "evolve"). Each entry is
// sealed with the key at its position, then the key evolves and the old one
// is overwritten in audit.head. HMAC is one-way in its key, so k_i does not
// give k_{i-1}: whoever reads the state holds only the current key and can
// neither reseal an earlier entry nor move the key back to an earlier
// position. k_0 is the verification key the person keeps elsewhere.

func evolveKey(k []byte) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(evolveLabel))
	return m.Sum(nil)
}

func sealTag(k, body []byte) string {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(sealLabel))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// sealLine appends the seal as the line's last member.
func sealLine(body, k []byte) []byte {
	out := make([]byte, 0, len(body)+sealSuffixLen)
	out = append(out, body[:len(body)-1]...)
	out = append(out, sealSuffixStart...)
	out = append(out, sealTag(k, body)...)
	return append(out, `"}`...)
}

// splitSeal is the line as it was sealed and its seal.
func splitSeal(line []byte) (body []byte, tag string, ok bool) {
	if len(line) < sealSuffixLen+2 {
		return nil, "", false
	}
	suffix := line[len(line)-sealSuffixLen:]
	if !bytes.HasPrefix(suffix, []byte(sealSuffixStart)) || !bytes.HasSuffix(suffix, []byte(`"}`)) {
		return nil, "", false
	}
	body = append(bytes.Clone(line[:len(line)-sealSuffixLen]), '}')
	return body, string(suffix[len(sealSuffixStart) : len(sealSuffixStart)+64]), true
}

func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// verifyKey is what the person keeps: the first key and its position.
type verifyKey struct {
	origin uint64
	seed   []byte
}

func (k verifyKey) String() string {
	return fmt.Sprintf("%s%d-%s", verifyKeyPrefix, k.origin, hex.EncodeToString(k.seed))
}

func parseVerifyKey(s string) (verifyKey, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), verifyKeyPrefix)
	pos, seed, ok2 := strings.Cut(rest, "-")
	var k verifyKey
	var err error
	if ok && ok2 {
		_, err = fmt.Sscanf(pos, "%d", &k.origin)
		if err == nil && fmt.Sprint(k.origin) == pos {
			k.seed, err = hex.DecodeString(seed)
		}
	}
	if !ok || !ok2 || err != nil || len(k.seed) != 32 || fmt.Sprint(k.origin) != pos {
		return k, usageError{"--key wants the verification key as init printed it (" + verifyKeyPrefix + "N-<64 hexadecimal digits>)"}
	}
	return k, nil
}

// newSealing starts a sealed record after entry seq (hash last): a fresh
// key in audit.head, returned once as the verification key.
func newSealing(dir string, seq uint64, last string, syncs *atomic.Int64) (verifyKey, error) {
	k := verifyKey{origin: seq, seed: make([]byte, 32)}
	rand.Read(k.seed)
	err := writeAuditHead(dir, auditHead{Seq: seq, SHA256: last, Key: hex.EncodeToString(k.seed), Origin: seq, Time: time.Now().UTC()}, syncs)
	return k, err
}

// ensureSealing gives a new state directory its sealing key (init, and
// serve on a directory init never saw): fresh says whether dir held no
// log, head or device state before device.Init ran (stateExists), so that
// a missing log in an existing state is never taken for a new one. It
// returns the verification key to print, once.
func ensureSealing(dir string, fresh bool) (k verifyKey, ok bool, err error) {
	if !fresh {
		return k, false, nil
	}
	k, err = newSealing(dir, 0, "", nil)
	return k, err == nil, err
}

// stateExists: anything of a device lives in dir.
func stateExists(dir string) bool {
	for _, name := range []string{auditHeadFile, auditFile, auditFile + ".1", "identity.json", "state.db", "state.json", rulesKeyFile, rulesFile, grantsFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

func writeAuditHead(dir string, h auditHead, syncs *atomic.Int64) error {
	data, _ := json.Marshal(h)
	tmp, err := os.CreateTemp(dir, "."+auditHeadFile+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
		if syncs != nil {
			syncs.Add(1)
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, auditHeadFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func readAuditHead(dir string) (auditHead, error) {
	var h auditHead
	data, err := os.ReadFile(filepath.Join(dir, auditHeadFile))
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(data, &h); err != nil || (h.Seq == 0 && h.Key == "") {
		return h, fmt.Errorf("not a head record")
	}
	if h.Key != "" {
		if k, err := hex.DecodeString(h.Key); err != nil || len(k) != 32 {
			return h, fmt.Errorf("its key is not 32 bytes of hexadecimal")
		}
	}
	return h, nil
}

// prepare checks the log at serve's start: a log the device cannot
// continue is reported before any request, and every request is then
// denied with an answer (never silence, never a chain continued over a
// cut).
func (l *auditLog) prepare() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.prepareLocked()
}

func (l *auditLog) prepareLocked() error {
	if l.prepared {
		return nil
	}
	l.prepared = true
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(l.path); err == nil {
		if f, err := l.openAppend(); err != nil {
			return err
		} else {
			f.Close()
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if k, fresh, err := ensureSealing(l.dir, !stateExists(l.dir)); err != nil {
		return err
	} else if fresh {
		l.warn("a new sealed audit log; its verification key, shown this once: " + k.String() +
			" (keep it elsewhere; 'log --verify --key' checks the log with it)")
	}
	l.reindex()
	return nil
}

// reindex verifies the chain and rebuilds the rules and grants in force.
func (l *auditLog) reindex() {
	v, err := verifyAudit(l.dir, nil)
	switch {
	case err != nil:
		l.breakWith(err.Error())
	case v.problem != "":
		l.breakWith(v.problem)
	case v.legacy:
		l.breakWith(auditHeadFile + " carries no sealing key (written by a version that did not seal the log)")
	}
	l.live, l.removed, l.indexed = v.live, v.removed, v.headSeq
}

func (l *auditLog) breakWith(why string) {
	if l.broken == "" {
		l.broken = why
		l.warn("THE AUDIT LOG CANNOT BE CONTINUED, every request is denied until it is looked at: " + why)
	}
}

// lock orders appends between serve and the commands that also record
// (rules remove, log --new-key).
func (l *auditLog) lock() (func(), error) {
	f, err := openNoFollow(filepath.Join(l.dir, auditLockFile), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// openAppend opens (creating) the current file: a regular file of ours,
// mode 0600.
func (l *auditLog) openAppend() (*os.File, error) {
	f, err := openNoFollow(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file; the device refuses to write to it", l.path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); err == nil && ok && int(st.Uid) != os.Geteuid() {
		err = fmt.Errorf("%s belongs to uid %d, not to this user; the device refuses to write to it", l.path, st.Uid)
	}
	if err == nil && fi.Mode().Perm() != 0o600 {
		// Fixed, not refused: the file holds no secret value, but its
		// names and commands are nobody else's business from now on.
		if err = f.Chmod(0o600); err == nil {
			msg := fmt.Sprintf("%s had mode %04o; set to 0600 (it names clients, secrets and commands; others could read it until now)", auditFile, fi.Mode().Perm())
			l.warn(msg)
			l.note = strings.TrimPrefix(l.note+"; "+msg, "; ")
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// chainEnd is the last complete line of the chain (the current file's, or
// the newest rotated file's when the current one holds none), the size of
// the current file, and the hash of an unterminated last line.
type chainEnd struct {
	seq  uint64
	hash string
	size int64
	torn string
	tail [][]byte // the complete lines read, oldest first
}

func (l *auditLog) readChainEnd() (chainEnd, error) {
	var c chainEnd
	for i, path := range []string{l.path, l.path + ".1"} {
		data, size, err := readTail(path, 2*auditLineCap)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return c, err
		}
		if i == 0 {
			c.size = size
			if len(data) > 0 && data[len(data)-1] != '\n' {
				cut := bytes.LastIndexByte(data, '\n') + 1
				c.torn = lineHash(data[cut:])
				data = data[:cut]
			}
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 0 {
				c.tail = append(c.tail, line)
			}
		}
		if len(c.tail) > 0 {
			last := c.tail[len(c.tail)-1]
			var e struct {
				Seq uint64 `json:"seq"`
			}
			json.Unmarshal(last, &e)
			c.seq, c.hash = e.Seq, lineHash(last)
			return c, nil
		}
	}
	return c, nil
}

// readTail reads up to max bytes from the end of path, from a line start.
func readTail(path string, max int64) ([]byte, int64, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	off := max64(0, fi.Size()-max)
	data := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(data, off); err != nil && err != io.EOF {
		return nil, 0, err
	}
	if off > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return data, fi.Size(), nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// checkEnd compares the chain's end with the sealed head: they must be the
// same entry, or the file may run ahead by entries that carry seals from
// the head's key (a crash between an entry and its head). Anything else is
// a cut or a replacement, and the log is not continued.
func (l *auditLog) checkEnd(h auditHead, c chainEnd) (auditHead, string) {
	if c.seq == h.Seq && c.hash == h.SHA256 {
		return h, ""
	}
	if c.seq == 0 && c.hash == "" {
		if h.Seq == 0 {
			return h, ""
		}
		return h, fmt.Sprintf("%s holds no entry, but the sealed %s records entry %d: the log was removed or cut", auditFile, auditHeadFile, h.Seq)
	}
	if c.seq > h.Seq {
		key, _ := hex.DecodeString(h.Key)
		at := -1
		for i, line := range c.tail {
			if lineHash(line) == h.SHA256 || (h.Seq == 0 && i == 0) {
				at = i
				break
			}
		}
		if at >= 0 {
			start := at + 1
			if h.Seq == 0 {
				start = 0
			}
			next := h
			for _, line := range c.tail[start:] {
				body, tag, ok := splitSeal(line)
				var e struct {
					Seq  uint64 `json:"seq"`
					Prev string `json:"prev"`
				}
				json.Unmarshal(line, &e)
				if !ok || e.Seq != next.Seq+1 || e.Prev != next.SHA256 || !hmac.Equal([]byte(tag), []byte(sealTag(key, body))) {
					return h, fmt.Sprintf("%s runs past the sealed %s (entry %d) with entries its key did not seal", auditFile, auditHeadFile, h.Seq)
				}
				key = evolveKey(key)
				next = auditHead{Seq: e.Seq, SHA256: lineHash(line), Key: hex.EncodeToString(key), Origin: h.Origin, Time: time.Now().UTC()}
			}
			return next, ""
		}
	}
	if c.seq < h.Seq {
		return h, fmt.Sprintf("the log ends at entry %d, but the sealed %s records entry %d: entries %d to %d are missing (cut)", c.seq, auditHeadFile, h.Seq, c.seq+1, h.Seq)
	}
	return h, fmt.Sprintf("the log ends at entry %d, which is not the entry the sealed %s records (entry %d): replaced", c.seq, auditHeadFile, h.Seq)
}

// append seals and writes one entry (one write(2), fsync'd), then evolves
// the key into audit.head (written and fsync'd: one more fsync than an
// unsealed log) before the caller sends the decision; an error means the
// decision must not be sent.
func (l *auditLog) append(e auditEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pre []auditEntry
	if l.pending != nil {
		pre = append(pre, auditEntry{Kind: "refusals", Decision: "recorded", DecidedBy: "device", Time: e.Time,
			How: "refusals that needed nobody, counted instead of written one by one", Refusals: l.pending})
	}
	if err := l.appendLocked(pre, e); err != nil {
		return err
	}
	l.pending = nil
	return nil
}

// refused logs a refusal that needed nobody: one by one up to
// auditRefusalsKept per epoch, then counted into the next record.
func (l *auditLog) refused(e auditEntry, sample string) error {
	l.mu.Lock()
	if l.kept < auditRefusalsKept {
		l.kept++
		l.mu.Unlock()
		return l.append(e)
	}
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = &auditRefusals{First: e.Time}
	}
	l.pending.Count++
	l.pending.Last, l.pending.Sample = e.Time, capText(sample, auditFieldCap)
	return nil
}

// sealEpoch writes the epoch's seal (with the refusals counted in it) and
// starts a new epoch.
func (l *auditLog) sealEpoch(now time.Time) error {
	err := l.append(auditEntry{Kind: "seal", Decision: "recorded", DecidedBy: "device", Time: now.UTC(), How: "epoch sealed"})
	l.mu.Lock()
	l.kept = 0
	l.mu.Unlock()
	return err
}

func (l *auditLog) appendLocked(pre []auditEntry, e auditEntry) error {
	if err := l.prepareLocked(); err != nil {
		return err
	}
	if l.broken != "" {
		return errAuditBroken{l.broken}
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	h, err := readAuditHead(l.dir)
	if err != nil {
		l.breakWith(fmt.Sprintf("%s is missing or unreadable (%v) while the log is in use", auditHeadFile, err))
		return errAuditBroken{l.broken}
	}
	if h.Key == "" {
		l.breakWith(auditHeadFile + " carries no sealing key")
		return errAuditBroken{l.broken}
	}
	c, err := l.readChainEnd()
	if err != nil {
		return err
	}
	h, why := l.checkEnd(h, c)
	if why != "" {
		l.breakWith(why)
		return errAuditBroken{l.broken}
	}
	if h.Seq > l.indexed {
		l.reindexAfter(h.Seq)
		if l.broken != "" {
			return errAuditBroken{l.broken}
		}
	}
	key, _ := hex.DecodeString(h.Key)
	entries := append(pre, e)
	seal := func() ([]byte, []byte, auditHead) {
		var out []byte
		k, next := bytes.Clone(key), h
		for i := range entries {
			x := entries[i]
			x.Seq, x.Prev = next.Seq+1, next.SHA256
			if i == 0 {
				x.Torn = c.torn
				x.Note = l.note
			}
			line := sealLine(encodeAuditEntry(x), k)
			out = append(append(out, line...), '\n')
			k = evolveKey(k)
			next = auditHead{Seq: x.Seq, SHA256: lineHash(line), Key: hex.EncodeToString(k), Origin: h.Origin, Time: x.Time}
		}
		return out, k, next
	}
	f, err := l.openAppend() // before sealing: a mode it fixes is noted in the entry
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	data, _, next := seal()
	// Not rotated while a torn line is being ended: its newline and the
	// entry naming its hash must land in the same file.
	if c.torn == "" && c.size > 0 && c.size+int64(len(data)) > l.rotateSize {
		f.Close()
		dropped, err := l.rotate()
		if err != nil {
			return fmt.Errorf("rotating %s: %w", auditFile, err)
		}
		if dropped != nil {
			rec := auditEntry{Kind: "rotation", Decision: "recorded", DecidedBy: "device", Time: e.Time,
				How: "the oldest rotated file was dropped", Dropped: dropped, Live: l.liveList()}
			entries = append([]auditEntry{rec}, entries...)
		}
		if f, err = l.openAppend(); err != nil {
			return err
		}
		data, _, next = seal()
	}
	if c.torn != "" {
		data = append([]byte("\n"), data...) // ends the torn line; the first entry names its hash
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
		l.syncs.Add(1)
	}
	if err != nil {
		return err
	}
	l.note = ""
	for _, x := range entries {
		l.fold(x, next.Seq)
	}
	l.indexed = next.Seq
	// The entry is on disk; the evolved key replaces the one that sealed
	// it. If this fails the head lags, and the next append (or serve's
	// start) catches up by checking the entries' seals with the old key.
	if err := writeAuditHead(l.dir, next, &l.syncs); err != nil {
		l.warn(fmt.Sprintf("%s not updated (%v): the previous sealing key is still on disk", auditHeadFile, err))
	}
	return nil
}

// fold applies an entry's rule and grant records to the index.
func (l *auditLog) fold(e auditEntry, seq uint64) {
	if l.live == nil {
		l.live, l.removed = map[string]auditBinding{}, map[string]uint64{}
	}
	for _, b := range e.Live {
		if _, gone := l.removed[b.MAC]; !gone {
			l.live[b.MAC] = b
		}
	}
	for _, b := range e.Creates {
		l.live[b.MAC] = b
	}
	for _, b := range e.Removes {
		delete(l.live, b.MAC)
		l.removed[b.MAC] = seq
	}
}

// reindexAfter: another process (rules remove, log --new-key) appended;
// the index is read again from the verified files.
func (l *auditLog) reindexAfter(seq uint64) {
	l.reindex()
	if l.indexed < seq && l.broken == "" {
		l.indexed = seq
	}
}

func (l *auditLog) liveList() []auditBinding {
	out := make([]auditBinding, 0, len(l.live))
	for _, b := range l.live {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b auditBinding) int { return strings.Compare(a.MAC, b.MAC) })
	if len(out) > auditLiveCap {
		out = out[len(out)-auditLiveCap:]
	}
	return out
}

// rotate moves audit.jsonl to .1 (and .1 to .2, ...); the oldest beyond
// auditRotatedKept is dropped, and what it held is returned for the sealed
// record that the new file starts with.
func (l *auditLog) rotate() (*auditDropped, error) {
	var dropped *auditDropped
	oldest := fmt.Sprintf("%s.%d", l.path, auditRotatedKept)
	if f, err := openNoFollow(oldest, os.O_RDONLY); err == nil {
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		d := &auditDropped{SHA256: lineHash(data)}
		for _, line := range bytes.Split(data, []byte("\n")) {
			var x struct {
				Seq uint64 `json:"seq"`
			}
			if len(line) == 0 || json.Unmarshal(line, &x) != nil || x.Seq == 0 {
				continue
			}
			if d.First == 0 {
				d.First = x.Seq
			}
			d.Last, d.LastHash = x.Seq, lineHash(line)
			d.Count++
		}
		dropped = d
	}
	for n := auditRotatedKept; n >= 1; n-- {
		from := l.path
		if n > 1 {
			from = fmt.Sprintf("%s.%d", l.path, n-1)
		}
		if err := os.Rename(from, fmt.Sprintf("%s.%d", l.path, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return dropped, nil
}

// close writes the refusals still counted.
func (l *auditLog) close() {
	l.mu.Lock()
	pending := l.pending
	l.mu.Unlock()
	if pending != nil {
		l.sealEpoch(time.Now())
	}
}

// bindingRefusal says why a rule or grant is not used by the log's
// account; "" means its creation is in the verified log and its removal
// is not.
func (l *auditLog) bindingRefusal(mac string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.prepareLocked(); err != nil {
		return "the audit log is unreadable (" + err.Error() + "), so nothing it records can be relied on"
	}
	if h, err := readAuditHead(l.dir); err == nil && h.Seq > l.indexed && l.broken == "" {
		l.reindexAfter(h.Seq)
	}
	switch {
	case l.broken != "":
		return "the audit log cannot be continued (" + l.broken + "), so no rule or grant is used"
	case l.removed[mac] > 0:
		return fmt.Sprintf("it was removed at audit entry %d: an older copy of the file was put back", l.removed[mac])
	case l.live[mac].MAC == "":
		return "its creation is not in the audit log (restored from a copy, added by hand, or made while the log could not take it)"
	}
	return ""
}

// removeBindings records rules or grants removed, expired or dropped.
func (l *auditLog) removeBindings(bs []auditBinding, by decidedBy, now time.Time) error {
	if len(bs) == 0 {
		return nil
	}
	return l.append(auditEntry{Kind: "removal", Decision: "recorded", DecidedBy: by.who, How: by.how, Time: now.UTC(), Removes: bs})
}

// liveBindings is the index's rules and grants in force.
func (l *auditLog) liveBindings() []auditBinding {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.liveList()
}

// encodeAuditEntry is the entry's line: its fields capped, halved again
// while the line is over auditLineCap (escaping can grow a field sixfold),
// invisible characters escaped.
// The full request goes first (its hash stays); room is kept for the seal.
func encodeAuditEntry(e auditEntry) []byte {
	e.Seal = ""
	for limit := auditFieldCap; ; limit /= 2 {
		c := capEntry(e, limit)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(c) // strings, slices, maps, times: never fails
		line := escapeInvisible(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		if len(line)+sealSuffixLen <= auditLineCap || limit < 16 {
			return line
		}
		if e.Request != nil {
			data, _ := json.Marshal(e.Request)
			e.Request, e.RequestBytes = nil, len(data)
			limit *= 2
		}
	}
}

// capEntry caps each client-influenced field at limit bytes (the command
// at four times that) and each list at auditListCap items.
func capEntry(e auditEntry, limit int) auditEntry {
	c := e
	for _, f := range []*string{&c.ID, &c.Kind, &c.Client, &c.RequestID, &c.Directory, &c.Executable, &c.SHA256,
		&c.RequestReason, &c.Verdict, &c.How, &c.Rule, &c.Reason, &c.Note} {
		*f = capText(*f, limit)
	}
	c.Command = capText(c.Command, limit*auditCommandCap/auditFieldCap)
	c.ClassWhy = capText(c.ClassWhy, limit) // names the command's words
	c.Secrets = capList(c.Secrets, limit/4)
	c.Marks = capList(c.Marks, limit/2)
	c.Unbound = capList(c.Unbound, limit/4)
	if len(e.Delivery) > 0 {
		c.Delivery = map[string][]string{}
		names := make([]string, 0, len(e.Delivery))
		for n := range e.Delivery {
			names = append(names, n)
		}
		slices.Sort(names)
		for i, n := range names {
			if i == auditListCap {
				c.Delivery["..."] = []string{fmt.Sprintf("%d more secrets", len(names)-i)}
				break
			}
			c.Delivery[capText(n, limit/4)] = capList(e.Delivery[n], limit/4)
		}
	}
	return c
}

// capText cuts s to at most max bytes at a character boundary and says
// how much was cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... [%d bytes more]", len(s)-cut)
}

func capList(items []string, max int) []string {
	if items == nil {
		return nil
	}
	out := make([]string, 0, min(len(items), auditListCap+1))
	for i, it := range items {
		if i == auditListCap {
			out = append(out, fmt.Sprintf("... [%d more]", len(items)-i))
			break
		}
		out = append(out, capText(it, max))
	}
	return out
}

// escapeInvisible rewrites, in a line encoding/json wrote, every character
// that is not printable (DEL, C1 controls such as U+009B, format characters
// such as U+200B and U+202E, other separators) as a \uXXXX escape. JSON
// escapes C0 itself, and outside strings it has ASCII only, so the line
// decodes to the same value.
func escapeInvisible(line []byte) []byte {
	var out []byte
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		if r == 0x7f || (r >= 0x80 && (!unicode.IsPrint(r) || r == utf8.RuneError)) {
			if out == nil {
				out = append(make([]byte, 0, len(line)+32), line[:i]...)
			}
			if r > 0xffff {
				r -= 0x10000
				out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else if out != nil {
			out = append(out, line[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return line
	}
	return out
}

// auditEntryOf describes a decided approval; never a secret value (the
// approval carries none).
func auditEntryOf(a *device.Approval, d device.Decision, by decidedBy, now time.Time) auditEntry {
	e := auditEntry{
		Time: now.UTC(), Received: a.Received.UTC(), ID: a.ID, Kind: a.Kind, Client: a.ClientID,
		RequestID: a.RequestID, Secrets: append([]string{}, a.Secrets...),
		DecidedBy: by.who, How: by.how, Rule: by.rule, Unbound: by.unbound, Creates: by.creates,
		Class: by.class, ClassWhy: by.classWhy,
	}
	switch {
	case d.Approve:
		e.Decision = "approved"
	case by.who == "client":
		e.Decision = "withdrawn"
	default:
		e.Decision, e.Reason = "denied", d.Reason
	}
	inv := a.Invocation
	switch {
	case a.Pairing != nil:
		p := a.Pairing
		e.Command = strings.TrimSpace(fmt.Sprintf("pairing of host %s (%s %s, %s %s; reported by the client)",
			p.Hostname, p.Platform, p.Architecture, p.AppName, p.AppVersion))
	case a.GitSign != nil:
		e.Command = "git signature with " + a.GitSign.Secret + " (" + a.GitSign.PublicKey + ")"
		inv = a.GitSign.Invocation
	case a.SSH != nil:
		s := a.SSH
		e.Command = "ssh login as " + s.User + " with " + s.Secret + " (" + s.Method + ")"
		if s.HostKeyFingerprint != "" {
			e.Command += " to host key " + s.HostKeyFingerprint
		}
		inv = s.Invocation
	}
	if inv != nil {
		cmd := shellJoin(append([]string{inv.Command}, inv.Arguments...))
		if e.Command == "" {
			e.Command = cmd
		} else {
			e.Command += ", within " + cmd
		}
		e.Directory, e.Executable, e.SHA256 = inv.WorkingDirectory, inv.ExecutablePath, hashHex(inv.ExecutableHash)
		e.RequestReason = inv.Reason
		if len(inv.Delivery) > 0 {
			e.Delivery = inv.Delivery
		}
		e.Verdict, e.Marks = explanationSummary(inv)
		e.Request = requestRecordOf(a, inv)
		e.RequestSHA256 = e.Request.digest()
	}
	return e
}

// requestRecordOf is the invocation whole, as the device received it.
func requestRecordOf(a *device.Approval, inv *device.InvocationDetails) *requestRecord {
	r := &requestRecord{Client: a.ClientID, Secrets: sortedCopy(a.Secrets), Argv: append([]string{inv.Command}, inv.Arguments...),
		Directory: inv.WorkingDirectory, Executable: inv.ExecutablePath, ExecutableHash: inv.ExecutableHash,
		ExecutableMode: inv.ExecutableMode, Stdin: inv.Stdin, Stdout: inv.Stdout, Stderr: inv.Stderr,
		LauncherChain: inv.LauncherChain, Routing: inv.Routing, Delivery: inv.Delivery}
	if inv.HasScriptContents {
		r.ScriptSHA256 = lineHash([]byte(inv.ScriptContents))
	}
	return r
}

// explanationSummary is the explanation's verdict (its first line) and
// its marks, for the log: the one place the log asks for the explanation.
func explanationSummary(inv *device.InvocationDetails) (verdict string, marks []string) {
	lines := explainInvocation(invocationViewOf(inv))
	if len(lines) == 0 {
		return "", nil
	}
	for _, l := range lines[1:] {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "!"); ok {
			marks = append(marks, strings.TrimSpace(m))
		}
	}
	return lines[0], marks
}

// auditFiles are the log's files, oldest first, that exist.
func auditFiles(dir string) []string {
	var files []string
	for n := auditRotatedKept; n >= 1; n-- {
		p := filepath.Join(dir, fmt.Sprintf("%s.%d", auditFile, n))
		if _, err := os.Lstat(p); err == nil {
			files = append(files, p)
		}
	}
	return append(files, filepath.Join(dir, auditFile))
}

// readAudit reads the log, rotated files first; lines that do not parse
// (a torn line) are counted, not returned.
func readAudit(dir string, since time.Time) (entries []auditEntry, skipped int, err error) {
	for _, path := range auditFiles(dir) {
		f, err := openNoFollow(path, os.O_RDONLY)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		r := bufio.NewReader(f)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				var e auditEntry
				if json.Unmarshal(line, &e) != nil {
					skipped++
				} else if !e.Time.Before(since) {
					entries = append(entries, e)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return entries, skipped, err
			}
		}
		f.Close()
	}
	return entries, skipped, nil
}

// auditVerification is what --verify found.
type auditVerification struct {
	entries     int
	first, last uint64
	lastHash    string
	lastTime    time.Time // of the last entry: the record is sealed through it
	lastEpoch   time.Time // of the last epoch seal
	files       int
	notes       []string // accepted: torn lines after a crash, rotated-away beginnings
	problem     string   // the first break; "" if the log verifies
	legacy      bool     // audit.head carries no sealing key
	keyChecked  bool     // every seal from the key's origin was checked
	origin      uint64
	headSeq     uint64
	refusals    int // counted in summaries
	live        map[string]auditBinding
	removed     map[string]uint64
}

type auditRawLine struct {
	file   string
	no     int
	raw    []byte
	e      auditEntry
	parsed bool // JSON, with or without a chain link
	ok     bool
	tail   bool // the current file's unterminated last line
}

// readAuditLines reads every file of the log, oldest first.
func readAuditLines(dir string) (lines []auditRawLine, files int, err error) {
	paths := auditFiles(dir)
	for fi, path := range paths {
		f, err := openNoFollow(path, os.O_RDONLY)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, files, err
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, files, err
		}
		files++
		name := filepath.Base(path)
		parts := bytes.Split(data, []byte("\n"))
		for i, raw := range parts {
			if len(raw) == 0 {
				continue
			}
			l := auditRawLine{file: name, no: i + 1, raw: raw, tail: i == len(parts)-1 && fi == len(paths)-1}
			l.parsed = json.Unmarshal(raw, &l.e) == nil
			l.ok = l.parsed && l.e.Seq > 0
			lines = append(lines, l)
		}
	}
	return lines, files, nil
}

// verifyAudit walks the chain through every file, oldest first, and names
// the first entry that is unreadable, edited, out of order or missing, and
// checks the end against the sealed head. With the verification key it
// also checks every entry's seal and the head key's position, which is
// what shows a change by someone who held the state directory.
func verifyAudit(dir string, key *verifyKey) (v auditVerification, err error) {
	v.live, v.removed = map[string]auditBinding{}, map[string]uint64{}
	lines, files, err := readAuditLines(dir)
	if err != nil {
		return v, err
	}
	v.files = files
	where := func(l auditRawLine) string { return fmt.Sprintf("%s line %d", l.file, l.no) }
	fail := func(format string, args ...any) (auditVerification, error) {
		v.problem = fmt.Sprintf(format, args...)
		return v, nil
	}
	position := map[uint64]int{}
	for i, l := range lines {
		if l.ok {
			if _, dup := position[l.e.Seq]; !dup {
				position[l.e.Seq] = i
			}
		}
	}
	head, herr := readAuditHead(dir)
	if herr == nil {
		v.legacy, v.origin, v.headSeq = head.Key == "", head.Origin, head.Seq
	}
	if key != nil {
		v.origin = key.origin
	}
	var sealKey []byte
	var sealPos uint64 // the entry sealKey seals
	if key != nil {
		sealKey, sealPos = bytes.Clone(key.seed), key.origin+1
	}
	var prev *auditRawLine
	var prevHash string
	for i := range lines {
		l := &lines[i]
		if !l.ok {
			torn := lineHash(l.raw)
			switch {
			case l.tail:
				v.notes = append(v.notes, where(*l)+" is unterminated: an entry being written, or torn by a crash")
				continue
			case i+1 < len(lines) && lines[i+1].ok && lines[i+1].e.Torn == torn:
				v.notes = append(v.notes, fmt.Sprintf("%s is a line torn by a crash, as entry %d records", where(*l), lines[i+1].e.Seq))
				continue
			}
			if l.parsed {
				return fail("%s carries no chain link: written before the log was chained, or added by hand", where(*l))
			}
			return fail("%s is not an intact entry: edited (or torn without the device noticing)", where(*l))
		}
		e := l.e
		hash := lineHash(l.raw)
		if prev == nil {
			switch {
			case e.Seq == 1 && e.Prev == "":
			case e.Kind == "key" && herr == nil && e.Seq == head.Origin+1:
				v.notes = append(v.notes, fmt.Sprintf("the record starts at entry %d with a new sealing key: %s", e.Seq, e.Note))
			case rotationRecordFor(lines, e) != nil:
				r := rotationRecordFor(lines, e)
				v.notes = append(v.notes, fmt.Sprintf("the log starts at entry %d: older entries were rotated away, the last file dropped held entries %d to %d (%d, sha256 %s), as entry %d records",
					e.Seq, r.Dropped.First, r.Dropped.Last, r.Dropped.Count, r.Dropped.SHA256, r.Seq))
			case e.Seq == 2:
				return fail("entry 1 is missing: the oldest entry present, 2 at %s, links to an entry not in the log", where(*l))
			default:
				return fail("entries 1 to %d are missing: the oldest entry present, %d at %s, links to an entry not in the log (and no sealed record says they were rotated away)", e.Seq-1, e.Seq, where(*l))
			}
			v.first = e.Seq
		} else {
			want := prev.e.Seq + 1
			switch {
			case e.Seq > want:
				if j, ok := position[want]; ok {
					return fail("entries are reordered: entry %d at %s comes before entry %d at %s", e.Seq, where(*l), want, where(lines[j]))
				}
				if e.Seq == want+1 {
					return fail("entry %d is missing: it was between %s (entry %d) and %s (entry %d)", want, where(*prev), prev.e.Seq, where(*l), e.Seq)
				}
				return fail("entries %d to %d are missing: between %s (entry %d) and %s (entry %d)", want, e.Seq-1, where(*prev), prev.e.Seq, where(*l), e.Seq)
			case e.Seq < want:
				return fail("entries are reordered or repeated: entry %d at %s comes after entry %d at %s", e.Seq, where(*l), prev.e.Seq, where(*prev))
			case e.Prev != prevHash:
				return fail("entry %d at %s was edited: its hash no longer matches the link in entry %d (%s)", prev.e.Seq, where(*prev), e.Seq, where(*l))
			}
		}
		if key != nil && e.Seq >= sealPos {
			if e.Seq-sealPos > auditKeyReach {
				// Bounded time: no device writes this many entries, and a
				// forged number must not keep verify evolving the key.
				return fail("entry %d at %s lies more than %d entries past the verification key's position %d: not an entry this key sealed", e.Seq, where(*l), auditKeyReach, sealPos)
			}
			for sealPos < e.Seq {
				sealKey, sealPos = evolveKey(sealKey), sealPos+1
			}
			body, tag, ok := splitSeal(l.raw)
			if !ok || !hmac.Equal([]byte(tag), []byte(sealTag(sealKey, body))) {
				return fail("entry %d at %s does not carry the seal of the verification key at its position: edited, moved, or written by someone who held a later key", e.Seq, where(*l))
			}
		}
		if e.Request != nil && e.Request.digest() != e.RequestSHA256 {
			return fail("entry %d at %s: the request it keeps does not hash to its request_sha256", e.Seq, where(*l))
		}
		for _, b := range e.Live {
			if _, gone := v.removed[b.MAC]; !gone {
				v.live[b.MAC] = b
			}
		}
		for _, b := range e.Creates {
			v.live[b.MAC] = b
		}
		for _, b := range e.Removes {
			delete(v.live, b.MAC)
			v.removed[b.MAC] = e.Seq
		}
		if e.Refusals != nil {
			v.refusals += e.Refusals.Count
		}
		if e.Kind == "seal" {
			v.lastEpoch = e.Time
		}
		prev, prevHash = l, hash
		v.entries++
		v.last, v.lastHash, v.lastTime = e.Seq, hash, e.Time
	}
	switch {
	case errors.Is(herr, fs.ErrNotExist) && prev == nil:
		if stateExists(dir) {
			return fail("%s and %s are both missing, while the device state exists: the log was removed", auditFile, auditHeadFile)
		}
		return v, nil // no log yet
	case errors.Is(herr, fs.ErrNotExist):
		return fail("%s is missing: the end of the log cannot be checked (entries removed from the end would not show)", auditHeadFile)
	case herr != nil:
		return fail("%s is unreadable: %v", auditHeadFile, herr)
	case prev == nil && head.Seq > 0:
		return fail("every entry is missing: %s records entry %d", auditHeadFile, head.Seq)
	case head.Seq > v.last:
		if head.Seq == v.last+1 {
			return fail("entry %d, the last one written, is missing (the log ends at entry %d, %s)", head.Seq, v.last, where(*prev))
		}
		return fail("entries %d to %d, the last ones written, are missing (the log ends at entry %d, %s)", v.last+1, head.Seq, v.last, where(*prev))
	case prev != nil && head.Seq == v.last && head.SHA256 != v.lastHash:
		return fail("entry %d at %s, the last one, was edited: its hash differs from the one in %s", v.last, where(*prev), auditHeadFile)
	case prev != nil && head.Seq < v.last:
		if j, ok := position[head.Seq]; ok && lineHash(lines[j].raw) != head.SHA256 {
			return fail("entry %d at %s was edited: its hash differs from the one in %s", head.Seq, where(lines[j]), auditHeadFile)
		}
		if head.Key != "" {
			k, _ := hex.DecodeString(head.Key)
			for _, l := range lines {
				if !l.ok || l.e.Seq <= head.Seq {
					continue
				}
				body, tag, ok := splitSeal(l.raw)
				if !ok || !hmac.Equal([]byte(tag), []byte(sealTag(k, body))) {
					return fail("entry %d at %s, after the one %s records, does not carry the seal of its key", l.e.Seq, where(l), auditHeadFile)
				}
				k = evolveKey(k)
			}
		}
		v.notes = append(v.notes, fmt.Sprintf("%s lags behind (entry %d): a crash between an entry and its head", auditHeadFile, head.Seq))
	}
	if key != nil {
		if head.Key == "" {
			return fail("%s carries no sealing key: the log was not sealed, or the head was replaced", auditHeadFile)
		}
		if key.origin > head.Seq {
			return fail("the verification key starts after entry %d, but the log and its head end at entry %d: the record was cut or rolled back to before the key", key.origin, head.Seq)
		}
		// The head's key seals entry head.Seq+1; find where it is.
		if head.Seq-key.origin > auditKeyReach {
			return fail("%s records entry %d, more than %d entries past the verification key's start: not this key's record", auditHeadFile, head.Seq, auditKeyReach)
		}
		want, _ := hex.DecodeString(head.Key)
		k := bytes.Clone(key.seed)
		pos := key.origin + 1
		for ; pos <= head.Seq+1+auditKeySearch; pos++ {
			if hmac.Equal(k, want) {
				break
			}
			k = evolveKey(k)
		}
		switch {
		case pos == head.Seq+1:
		case pos > head.Seq+1+auditKeySearch:
			return fail("the key in %s is not the verification key's at any position up to entry %d: replaced", auditHeadFile, head.Seq+auditKeySearch)
		case pos > head.Seq+1:
			return fail("the log and %s end at entry %d, but the sealing key has moved on to entry %d: entries %d to %d were cut and the head rewritten", auditHeadFile, head.Seq, pos-1, head.Seq+1, pos-1)
		default:
			return fail("the key in %s is at entry %d, before the entry %d it records: the head was replaced", auditHeadFile, pos-1, head.Seq)
		}
		if v.first > 0 && v.first <= key.origin {
			v.notes = append(v.notes, fmt.Sprintf("entries %d to %d come before this verification key: their chain was checked, not their seals", v.first, key.origin))
		}
		v.keyChecked = true
	}
	return v, nil
}

// rotationRecordFor is the sealed record that accounts for the entries
// before e, the oldest entry present: the dropped file ended at e.Seq-1
// with the line e links to.
func rotationRecordFor(lines []auditRawLine, e auditEntry) *auditEntry {
	for i := range lines {
		d := lines[i].e.Dropped
		if lines[i].ok && d != nil && d.Last+1 == e.Seq && d.LastHash == e.Prev {
			return &lines[i].e
		}
	}
	return nil
}

// cmdLog is `agentknock-device log [--since D] [--json] | --verify [--key K]
// | --show SEQ | --new-key`.
func cmdLog(c *cli, args []string) error {
	fs := c.flags("log")
	sinceText := fs.String("since", "", "")
	asJSON := fs.Bool("json", false, "")
	verify := fs.Bool("verify", false, "")
	keyText := fs.String("key", "", "")
	show := fs.Uint64("show", 0, "")
	newKey := fs.Bool("new-key", false, "")
	operands, err := c.parse(fs, helpLog, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "log [--since DURATION|TIME] [--json] | log --verify [--key KEY] | log --show SEQ | log --new-key"); err != nil {
		return err
	}
	var since time.Time
	if *sinceText != "" {
		if since, err = parseSince(*sinceText, time.Now()); err != nil {
			return usageError{err.Error()}
		}
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	switch {
	case *newKey:
		return logNewKey(c, dir)
	case *show > 0:
		return logShow(c, dir, *show)
	case *keyText != "" && !*verify:
		return usagef("--key goes with --verify")
	case *verify:
		var key *verifyKey
		if *keyText != "" {
			k, err := parseVerifyKey(*keyText)
			if err != nil {
				return err
			}
			key = &k
		}
		v, err := verifyAudit(dir, key)
		if err != nil {
			return err
		}
		for _, n := range v.notes {
			fmt.Fprintf(c.stderr, "note: %s\n", n)
		}
		if v.problem != "" {
			return fmt.Errorf("the audit log does not verify: %s", v.problem)
		}
		if key == nil {
			fmt.Fprintln(c.stderr, "note: without the verification key (--key) this checks the chain and its head only: whoever held the state "+
				"directory could have rewritten, cut or rolled back the record and recomputed both, and this would not show it")
		}
		if v.entries == 0 {
			fmt.Fprintln(c.stdout, "audit log verified: no entries yet")
			return nil
		}
		how := "chain and head checked"
		if v.keyChecked {
			how = "every seal checked with the verification key"
		}
		fmt.Fprintf(c.stdout, "audit log verified: %d entries (%d to %d) in %d file(s); last entry sha256 %s (%s)\n",
			v.entries, v.first, v.last, v.files, v.lastHash, how)
		fmt.Fprintf(c.stdout, "sealed through entry %d at %s", v.last, v.lastTime.Local().Format(time.RFC3339))
		if !v.lastEpoch.IsZero() {
			fmt.Fprintf(c.stdout, " (last epoch seal %s)", v.lastEpoch.Local().Format(time.RFC3339))
		}
		fmt.Fprintln(c.stdout, ": a copy rolled back shows here as an earlier entry and time")
		if v.refusals > 0 {
			fmt.Fprintf(c.stdout, "%d refusal(s) that needed nobody are counted in summary entries, not written one by one\n", v.refusals)
		}
		return nil
	}
	entries, skipped, err := readAudit(dir, since)
	if err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(c.stderr, "%s: %d unreadable line(s) skipped (an entry torn by a crash, or edited)\n", progName, skipped)
	}
	if v, err := verifyAudit(dir, nil); err == nil && v.problem != "" {
		fmt.Fprintf(c.stderr, "%s: warning: the audit log does not verify: %s (see 'log --verify')\n", progName, v.problem)
	}
	if *asJSON {
		if entries == nil {
			entries = []auditEntry{}
		}
		return printJSON(c.stdout, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(c.stderr, "no entries")
		return nil
	}
	for _, e := range entries {
		io.WriteString(c.stdout, auditLine(e))
	}
	return nil
}

// logShow prints one entry with the full request it keeps.
func logShow(c *cli, dir string, seq uint64) error {
	lines, _, err := readAuditLines(dir)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if !l.ok || l.e.Seq != seq {
			continue
		}
		e := l.e
		io.WriteString(c.stdout, auditLine(e))
		if e.RequestSHA256 != "" {
			fmt.Fprintf(c.stdout, "    request sha256 %s\n", e.RequestSHA256)
		}
		switch {
		case e.Request != nil:
			r := e.Request
			state := "matches"
			if r.digest() != e.RequestSHA256 {
				state = "DOES NOT MATCH"
			}
			fmt.Fprintf(c.stdout, "    full command (%s the request hash):\n      %s\n", state, clean(shellJoin(r.Argv)))
			fmt.Fprintf(c.stdout, "    in %s, %s", clean(r.Directory), clean(r.Executable))
			if r.ExecutableHash != "" {
				fmt.Fprintf(c.stdout, " sha-256 %s", hashHex(r.ExecutableHash))
			}
			fmt.Fprintf(c.stdout, "; streams stdin %s, stdout %s, stderr %s\n", clean(orNone(r.Stdin)), clean(orNone(r.Stdout)), clean(orNone(r.Stderr)))
		case e.RequestBytes > 0:
			fmt.Fprintf(c.stdout, "    full command not kept (%d bytes, over the line cap): the request sha256 above binds it\n", e.RequestBytes)
		}
		return nil
	}
	return fmt.Errorf("no entry %d in the audit log", seq)
}

// logNewKey starts a new sealed record after whatever the files end with:
// after the person has looked at a log serve refused to continue, or on a
// log from a version that did not seal. The entry it writes says so, and a
// verification key of the old record no longer matches the head.
func logNewKey(c *cli, dir string) error {
	l := newAuditLog(dir, func(m string) { fmt.Fprintf(c.stderr, "%s: %s\n", progName, m) })
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	v, _ := verifyAudit(dir, nil)
	end, err := l.readChainEnd()
	if err != nil {
		unlock()
		return err
	}
	// The old files are set aside whole, for the person to keep: the new
	// record starts clean, its first entry naming them and what was wrong.
	stamp := time.Now().UTC().Format("20060102T150405Z")
	var aside []string
	for _, path := range auditFiles(dir) {
		to := filepath.Join(dir, "audit-set-aside-"+stamp+"-"+filepath.Base(path))
		if err := os.Rename(path, to); err == nil {
			aside = append(aside, filepath.Base(to))
		} else if !errors.Is(err, fs.ErrNotExist) {
			unlock()
			return err
		}
	}
	k, err := newSealing(dir, end.seq, end.hash, nil)
	unlock()
	if err != nil {
		return err
	}
	why := "a new sealing key starts here (log --new-key)"
	if len(aside) > 0 {
		why += "; the earlier files are set aside as " + strings.Join(aside, ", ")
	}
	if v.problem != "" {
		why += "; they did not verify: " + v.problem
	}
	l.prepared = true
	if err := l.append(auditEntry{Kind: "key", Decision: "recorded", DecidedBy: "person", How: "log --new-key", Time: time.Now().UTC(), Note: why}); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, k.String())
	fmt.Fprintf(c.stderr, "a new sealed record starts after entry %d; its verification key is on standard output, shown this once:\n"+
		"keep it away from this machine, and check the log with '%s log --verify --key KEY'. Restart serve.\n", end.seq, progName)
	return nil
}

// parseSince reads --since: a duration back from now (90m, 24h, 7d) or a
// time (RFC 3339, or a date YYYY-MM-DD in local time).
func parseSince(s string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && days > 0 && fmt.Sprint(days) == n {
			return now.AddDate(0, 0, -days), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since wants a duration (90m, 24h, 7d) or a time (2030-01-02 or 2030-01-02T15:04:05Z), not %q", s)
}

// auditLine is one entry for a person: time, decision and by whom, kind,
// client, secrets, command. The text came partly from clients: escaped.
func auditLine(e auditEntry) string {
	by := e.DecidedBy
	if e.How != "" {
		by += " " + e.How
	}
	decision := e.Decision
	if e.Reason != "" {
		decision += " (" + e.Reason + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-9s by %s\n", e.Time.Local().Format(time.RFC3339), decision, clean(by))
	fmt.Fprintf(&b, "    %s %s from client %s", clean(e.Kind), clean(e.ID), clean(e.Client))
	if len(e.Secrets) > 0 {
		b.WriteString(", secrets " + cleanList(e.Secrets, ", "))
	}
	b.WriteString("\n")
	if e.Command != "" {
		fmt.Fprintf(&b, "    %s\n", clean(e.Command))
	}
	if e.Executable != "" {
		h := e.SHA256
		if h == "" {
			h = "no hash (execute-only)"
		}
		fmt.Fprintf(&b, "    in %s, %s sha-256 %s\n", clean(e.Directory), clean(e.Executable), h)
	}
	if e.RequestReason != "" {
		fmt.Fprintf(&b, "    reason (from the client): %s\n", clean(e.RequestReason))
	}
	if e.ClassWhy != "" {
		fmt.Fprintf(&b, "    class: %s\n", clean(e.ClassWhy))
	}
	if e.Verdict != "" {
		fmt.Fprintf(&b, "    explained: %s\n", clean(e.Verdict))
	}
	for _, m := range e.Marks {
		fmt.Fprintf(&b, "    ! %s\n", clean(m))
	}
	if len(e.Unbound) > 0 {
		fmt.Fprintf(&b, "    pinned, not binding: %s\n", cleanList(e.Unbound, ", "))
	}
	return b.String()
}

// reconcileBindings records, as removals, the rules and grants in force by
// the log that are expired or no longer in their file (removed by hand;
// deleting grants.json is how grants are dropped), so that a copy put back
// later is refused.
func (ap *approver) reconcileBindings() {
	live := ap.audit.liveBindings()
	if len(live) == 0 {
		return
	}
	rules, rerr := ap.rules.loadAll()
	grants, gerr := ap.grants.load()
	have := map[string]bool{}
	for _, r := range rules {
		have[r.MAC] = true
	}
	for _, g := range grants {
		have[g.MAC] = true
	}
	now := ap.now()
	var gone []auditBinding
	for _, b := range live {
		file, unreadable := rulesFile, rerr != nil
		if b.Kind == "grant" {
			file, unreadable = grantsFile, gerr != nil
		}
		switch {
		case !b.Expires.IsZero() && !now.Before(b.Expires):
			b.Why = "expired"
		case unreadable:
			continue // unreadable is not removed: it is refused as it stands
		case !have[b.MAC]:
			b.Why = "dropped: " + file + " no longer holds it"
		default:
			continue
		}
		gone = append(gone, b)
	}
	if len(gone) == 0 {
		return
	}
	if err := ap.audit.removeBindings(gone, decidedBy{who: "device", how: "no longer in force"}, now); err != nil {
		ap.con.printf("  (audit log: removals not recorded: %s)\n", clean(err.Error()))
		return
	}
	for _, b := range gone {
		name := b.Kind
		if b.ID != "" {
			name += " " + b.ID
		}
		ap.con.printf("  (audit log: %s %s, recorded: a copy put back is refused)\n", clean(name), b.Why)
	}
}

// keepSealing runs while serve does: every second it records rules and
// grants gone from their files, and every epoch it seals the record
// through now.
func (ap *approver) keepSealing(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(min(time.Second, every))
	defer tick.Stop()
	last := ap.now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ap.reconcileBindings()
		if now := ap.now(); now.Sub(last) >= every {
			last = now
			if err := ap.audit.sealEpoch(now); err != nil {
				ap.con.printf("  (audit log: epoch not sealed: %s)\n", clean(err.Error()))
			}
		}
	}
}

// Undelivered implements device.UndeliveredRecorder: a decision the log
// took that the client never received as decided is recorded as such.
func (ap *approver) Undelivered(a *device.Approval, d device.Decision, why string) {
	verb := "denial"
	if d.Approve {
		verb = "approval"
	}
	ap.con.printf("  -> %s: its %s was NOT delivered: %s\n", clean(a.ID), verb, why)
	e := auditEntry{Kind: "undelivered", Decision: "recorded", DecidedBy: "device", Time: ap.now().UTC(), ID: a.ID,
		Client: a.ClientID, RequestID: a.RequestID, How: "the " + verb + " of " + a.ID + " was not delivered: " + why}
	if err := ap.audit.append(e); err != nil {
		ap.con.printf("  (audit log: the non-delivery of %s not recorded: %s)\n", clean(a.ID), clean(err.Error()))
	}
}
