// The audit log: audit.jsonl in the state directory, one JSON object per
// line for every request the device was asked to decide, with who or what
// decided it, the request's reason, the explanation's verdict and marks,
// and how the secrets were delivered; `agentknock-device log` shows it and
// `log --verify` checks it. Names only: secret values never reach it.
//
// It is evidence, so:
//   - each entry carries its sequence number and the SHA-256 of the line
//     before it (prev), a chain that continues across rotation (the first
//     entry of a new file links to the last of the rotated one); audit.head
//     holds the sequence number and hash of the last entry, so an entry
//     removed from the end shows too;
//   - the file is opened with O_NOFOLLOW (a symbolic link is refused), its
//     mode is held at 0600 (a wider existing file is set to 0600, and the
//     console says so: it names clients, secrets and commands), and before
//     each append the open descriptor's inode is compared with the path's,
//     so a log removed or replaced while serve runs is started again, its
//     first entry linking to the last one written;
//   - each entry is written with one write(2) and fsync'd before the
//     decision is sent; if either fails the decision is not sent (the
//     approver denies the request instead, approver.go);
//   - control, format and bidirectional characters (C0, DEL, C1 such as
//     U+009B, U+200B, U+202E, ...) are escaped as \uXXXX in the file
//     itself, so a terminal showing the raw file is not steered by them;
//   - size is bounded: each text field is capped (auditFieldCap, a command
//     summary at auditCommandCap), a line at auditLineCap, and the file is
//     rotated at auditRotateSize into audit.jsonl.1 .. .3, so the log holds
//     at most (1 + auditRotatedKept) * auditRotateSize bytes.
//
// A crash can tear the last line; the next serve ends it with a newline and
// its first entry carries the torn bytes' hash (torn), so --verify can tell
// a crash from an edit.
package main

import (
	"bufio"
	"bytes"
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
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"agentknock.dev/agentknock/devkit/device"
)

const (
	auditFile     = "audit.jsonl"
	auditHeadFile = "audit.head"
	// auditRotateSize: the file is rotated before an entry would take it
	// past this size.
	auditRotateSize = 2 << 20
	// auditRotatedKept: audit.jsonl.1 (the newest) to .3 are kept; the
	// oldest is dropped at the next rotation.
	auditRotatedKept = 3
	auditFieldCap    = 1024 // bytes of one text field, before escaping
	auditCommandCap  = 4096 // the command summary
	auditListCap     = 32   // items of a list (secrets, marks, delivery lines)
	auditLineCap     = 64 << 10
)

// auditEntry is one line of the log.
type auditEntry struct {
	Seq  uint64 `json:"seq"`
	Prev string `json:"prev"`           // hex SHA-256 of the previous line; "" for the first entry ever
	Torn string `json:"torn,omitempty"` // hex SHA-256 of a torn line just before this entry
	Note string `json:"note,omitempty"` // the device's remark on the log itself (recreated, mode fixed)

	Time          time.Time           `json:"time"` // when it was decided
	Received      time.Time           `json:"received"`
	ID            string              `json:"id"`
	Kind          string              `json:"kind"`
	Client        string              `json:"client"`
	RequestID     string              `json:"request_id"`
	Secrets       []string            `json:"secrets"`
	Command       string              `json:"command,omitempty"` // summary, shell-quoted
	Directory     string              `json:"directory,omitempty"`
	Executable    string              `json:"executable,omitempty"`
	SHA256        string              `json:"sha256,omitempty"`         // hex; empty for execute-only binaries
	RequestReason string              `json:"request_reason,omitempty"` // the client's one-line reason
	Verdict       string              `json:"verdict,omitempty"`        // the explanation's first line
	Marks         []string            `json:"marks,omitempty"`          // the explanation's "!" lines
	Delivery      map[string][]string `json:"delivery,omitempty"`       // per secret: variable names and env/stdin
	Decision      string              `json:"decision"`                 // approved | denied | withdrawn
	Reason        string              `json:"reason,omitempty"`         // a denial's reason code
	DecidedBy     string              `json:"decided_by"`               // person | policy | rule | grant | device | client
	How           string              `json:"how,omitempty"`            // e.g. "on the terminal", "pinned rule r-4k2m9q"
	Rule          string              `json:"rule,omitempty"`           // the rule that decided, or was pinned
	Unbound       []string            `json:"unbound,omitempty"`        // a pin: what the person confirmed it does not bind
	Class         string              `json:"class,omitempty"`          // of the command: read-only | other | irreversible (classify.go)
	ClassWhy      string              `json:"class_why,omitempty"`      // "read-only: git status, executable /usr/bin/git"
}

// decidedBy is who or what answered a request, for the log.
type decidedBy struct {
	who     string // person | policy | rule | grant | device | client
	how     string
	rule    string
	unbound []string
	// class and classWhy: the command's class, for the log (classify.go).
	class, classWhy string
}

// auditHead is audit.head: the last entry written.
type auditHead struct {
	Seq    uint64 `json:"seq"`
	SHA256 string `json:"sha256"`
}

type auditLog struct {
	dir, path  string
	warn       func(string) // the console
	rotateSize int64        // auditRotateSize; smaller in tests

	mu    sync.Mutex
	f     *os.File
	ino   fileID // of f
	size  int64
	known bool   // seq and last are read from the existing log
	seq   uint64 // of the last entry written
	last  string // its hash
	torn  string // the hash of a torn line to report in the next entry
	note  string // a remark for the next entry
}

type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}
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

// prepare opens the log at serve's start, so that a log the device cannot
// use stops serve before any request instead of denying every request.
func (l *auditLog) prepare() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.openLocked()
}

// openLocked opens (creating) the log for appending and checks it: a
// regular file of ours, mode 0600. The first open of a process reads the
// chain's end from the existing files.
func (l *auditLog) openLocked() error {
	f, err := openNoFollow(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
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
	if err == nil && !l.known {
		err = l.readEnd(f, fi.Size())
	}
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.ino, l.size = f, idOf(fi), fi.Size()
	if size, err := f.Seek(0, io.SeekEnd); err == nil {
		l.size = size
	}
	return nil
}

// readEnd finds the chain's last entry: the current file's last line, or
// the newest rotated file's when the current one is empty. A torn last
// line is ended with a newline and remembered for the next entry.
func (l *auditLog) readEnd(w *os.File, size int64) error {
	l.known = true
	data, err := l.readFile(l.path)
	if err != nil {
		return err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		cut := bytes.LastIndexByte(data, '\n') + 1
		sum := sha256.Sum256(data[cut:])
		l.torn = hex.EncodeToString(sum[:])
		if _, err := w.Write([]byte("\n")); err != nil {
			return err
		}
		data = data[:cut]
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if data, err = l.readFile(l.path + ".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if len(lines[i]) == 0 {
			continue
		}
		var e auditEntry
		json.Unmarshal(lines[i], &e) // a line that is not an entry still links by its hash
		sum := sha256.Sum256(lines[i])
		l.seq, l.last = e.Seq, hex.EncodeToString(sum[:])
		return nil
	}
	// No entry in the files, but a head: the log was removed while serve
	// was stopped. Continue the chain, so that --verify names the loss.
	if h, err := readAuditHead(l.dir); err == nil {
		l.seq, l.last = h.Seq, h.SHA256
		msg := fmt.Sprintf("%s holds no entry, but entry %d was written before; a new log is started, linked to it", auditFile, h.Seq)
		l.warn(msg)
		l.note = msg
	}
	return nil
}

func (l *auditLog) readFile(path string) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// append writes one entry (one write(2)) and fsyncs it; an error means the
// entry may not be on disk and the decision must not be sent.
func (l *auditLog) append(e auditEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		// Removed or replaced while serve runs: start again at the path.
		fi, err := os.Lstat(l.path)
		if err != nil || idOf(fi) != l.ino {
			l.f.Close()
			l.f = nil
			msg := fmt.Sprintf("%s was removed or replaced while serve ran; a new one is started, linked to entry %d", auditFile, l.seq)
			l.warn(msg)
			l.note = strings.TrimPrefix(l.note+"; "+msg, "; ")
		}
	}
	if l.f == nil {
		if err := l.openLocked(); err != nil {
			return err
		}
	}
	e.Seq, e.Prev, e.Torn, e.Note = l.seq+1, l.last, l.torn, l.note
	line := encodeAuditEntry(e)
	if l.size > 0 && l.size+int64(len(line))+1 > l.rotateSize {
		if err := l.rotate(); err != nil {
			return fmt.Errorf("rotating %s: %w", auditFile, err)
		}
	}
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return err
	}
	sum := sha256.Sum256(line)
	l.seq, l.last, l.torn, l.note = e.Seq, hex.EncodeToString(sum[:]), "", ""
	l.size += int64(len(line)) + 1
	// The head is written after the entry is on disk and without fsync:
	// after a crash it may lag behind the log (which --verify accepts),
	// never run ahead of it.
	if err := l.writeHead(); err != nil {
		l.warn(fmt.Sprintf("%s not updated (%v): a removed last entry would not show until the next entry", auditHeadFile, err))
	}
	return nil
}

func (l *auditLog) writeHead() error {
	data, _ := json.Marshal(auditHead{Seq: l.seq, SHA256: l.last})
	tmp, err := os.CreateTemp(l.dir, "."+auditHeadFile+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(l.dir, auditHeadFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// rotate moves audit.jsonl to .1 (and .1 to .2, ...; the oldest beyond
// auditRotatedKept is dropped) and starts a new file, whose first entry
// links to the last of the rotated one.
func (l *auditLog) rotate() error {
	l.f.Close()
	l.f = nil
	for n := auditRotatedKept; n >= 1; n-- {
		from := l.path
		if n > 1 {
			from = fmt.Sprintf("%s.%d", l.path, n-1)
		}
		if err := os.Rename(from, fmt.Sprintf("%s.%d", l.path, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return l.openLocked()
}

func (l *auditLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// encodeAuditEntry is the entry's line: its fields capped, halved again
// while the line is over auditLineCap (escaping can grow a field sixfold),
// invisible characters escaped.
func encodeAuditEntry(e auditEntry) []byte {
	for limit := auditFieldCap; ; limit /= 2 {
		c := capEntry(e, limit)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(c) // strings, slices, maps, times: never fails
		line := escapeInvisible(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		if len(line) <= auditLineCap || limit < 16 {
			return line
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
		DecidedBy: by.who, How: by.how, Rule: by.rule, Unbound: by.unbound,
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
	}
	return e
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
	files       int
	notes       []string // accepted: torn lines after a crash, rotated-away beginnings
	problem     string   // the first break; "" if the log verifies
}

// verifyAudit walks the chain through every file, oldest first, and names
// the first entry that is unreadable, edited, out of order or missing.
func verifyAudit(dir string) (v auditVerification, err error) {
	// Only the chain's members are decoded; the rest is hashed as is.
	type link struct {
		Seq  uint64 `json:"seq"`
		Prev string `json:"prev"`
		Torn string `json:"torn"`
	}
	type line struct {
		file   string
		no     int
		raw    []byte
		e      link
		parsed bool // JSON, with or without a chain link
		ok     bool
		tail   bool // the current file's unterminated last line
	}
	var lines []line
	files := auditFiles(dir)
	for fi, path := range files {
		f, err := openNoFollow(path, os.O_RDONLY)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return v, err
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return v, err
		}
		v.files++
		name := filepath.Base(path)
		parts := bytes.Split(data, []byte("\n"))
		for i, raw := range parts {
			if len(raw) == 0 {
				continue
			}
			l := line{file: name, no: i + 1, raw: raw, tail: i == len(parts)-1 && fi == len(files)-1}
			l.parsed = json.Unmarshal(raw, &l.e) == nil
			l.ok = l.parsed && l.e.Seq > 0
			lines = append(lines, l)
		}
	}
	where := func(l line) string { return fmt.Sprintf("%s line %d", l.file, l.no) }
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
	var prev *line
	var prevHash string
	for i := range lines {
		l := &lines[i]
		if !l.ok {
			sum := sha256.Sum256(l.raw)
			torn := hex.EncodeToString(sum[:])
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
		sum := sha256.Sum256(l.raw)
		hash := hex.EncodeToString(sum[:])
		if prev == nil {
			switch {
			case e.Seq == 1 && e.Prev == "":
			case strings.HasSuffix(l.file, fmt.Sprintf(".%d", auditRotatedKept)):
				v.notes = append(v.notes, fmt.Sprintf("the log starts at entry %d: older entries were rotated away", e.Seq))
			case e.Seq == 2:
				return fail("entry 1 is missing: the oldest entry present, 2 at %s, links to an entry not in the log", where(*l))
			default:
				return fail("entries 1 to %d are missing: the oldest entry present, %d at %s, links to an entry not in the log", e.Seq-1, e.Seq, where(*l))
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
		prev, prevHash = l, hash
		v.entries++
		v.last, v.lastHash = e.Seq, hash
	}
	head, herr := readAuditHead(dir)
	switch {
	case errors.Is(herr, fs.ErrNotExist) && prev == nil:
		return v, nil // no log yet
	case errors.Is(herr, fs.ErrNotExist):
		return fail("%s is missing: the end of the log cannot be checked (entries removed from the end would not show)", auditHeadFile)
	case herr != nil:
		return fail("%s is unreadable: %v", auditHeadFile, herr)
	case prev == nil:
		return fail("every entry is missing: %s records entry %d", auditHeadFile, head.Seq)
	case head.Seq > v.last:
		if head.Seq == v.last+1 {
			return fail("entry %d, the last one written, is missing (the log ends at entry %d, %s)", head.Seq, v.last, where(*prev))
		}
		return fail("entries %d to %d, the last ones written, are missing (the log ends at entry %d, %s)", v.last+1, head.Seq, v.last, where(*prev))
	case head.Seq == v.last && head.SHA256 != v.lastHash:
		return fail("entry %d at %s, the last one, was edited: its hash differs from the one in %s", v.last, where(*prev), auditHeadFile)
	case head.Seq < v.last:
		j := position[head.Seq]
		if h := sha256.Sum256(lines[j].raw); hex.EncodeToString(h[:]) != head.SHA256 {
			return fail("entry %d at %s was edited: its hash differs from the one in %s", head.Seq, where(lines[j]), auditHeadFile)
		}
		v.notes = append(v.notes, fmt.Sprintf("%s lags behind (entry %d): a crash between an entry and its head", auditHeadFile, head.Seq))
	}
	return v, nil
}

func readAuditHead(dir string) (auditHead, error) {
	var h auditHead
	data, err := os.ReadFile(filepath.Join(dir, auditHeadFile))
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(data, &h); err != nil || h.Seq == 0 {
		return h, fmt.Errorf("not a head record")
	}
	return h, nil
}

// cmdLog is `agentknock-device log [--since D] [--json] [--verify]`.
func cmdLog(c *cli, args []string) error {
	fs := c.flags("log")
	sinceText := fs.String("since", "", "")
	asJSON := fs.Bool("json", false, "")
	verify := fs.Bool("verify", false, "")
	operands, err := c.parse(fs, helpLog, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "log [--since DURATION|TIME] [--json] | log --verify"); err != nil {
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
	if *verify {
		v, err := verifyAudit(dir)
		if err != nil {
			return err
		}
		for _, n := range v.notes {
			fmt.Fprintf(c.stderr, "note: %s\n", n)
		}
		if v.problem != "" {
			return fmt.Errorf("the audit log does not verify: %s", v.problem)
		}
		if v.entries == 0 {
			fmt.Fprintln(c.stdout, "audit log verified: no entries yet")
			return nil
		}
		fmt.Fprintf(c.stdout, "audit log verified: %d entries (%d to %d) in %d file(s); last entry sha256 %s\n",
			v.entries, v.first, v.last, v.files, v.lastHash)
		return nil
	}
	entries, skipped, err := readAudit(dir, since)
	if err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(c.stderr, "%s: %d unreadable line(s) skipped (an entry torn by a crash, or edited)\n", progName, skipped)
	}
	if v, err := verifyAudit(dir); err == nil && v.problem != "" {
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
