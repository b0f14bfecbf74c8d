// The audit log: audit.jsonl in the state directory (mode 0600), one JSON
// object per line for every request the device was asked to decide, with
// who or what decided it; `agentknock-device log` shows it. Names only:
// secret values never reach it. It is append-only (O_APPEND), each entry
// is one write followed by fsync, and the device sends no answer before the
// fsync of its entry has returned (the fsync runs while the device commits
// its own state), so a crash loses at most an entry whose decision never
// left the device; a torn last line is skipped by the reader and closed off
// before the next entry is appended.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

const auditFile = "audit.jsonl"

// auditEntry is one line of the log.
type auditEntry struct {
	Time       time.Time `json:"time"` // when it was decided
	Received   time.Time `json:"received"`
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	Client     string    `json:"client"`
	RequestID  string    `json:"request_id"`
	Secrets    []string  `json:"secrets"`
	Command    string    `json:"command,omitempty"` // summary, shell-quoted
	Directory  string    `json:"directory,omitempty"`
	Executable string    `json:"executable,omitempty"`
	SHA256     string    `json:"sha256,omitempty"` // hex; empty for execute-only binaries
	Decision   string    `json:"decision"`         // approved | denied | withdrawn
	Reason     string    `json:"reason,omitempty"` // a denial's reason code
	DecidedBy  string    `json:"decided_by"`       // person | policy | rule | grant | device | client
	How        string    `json:"how,omitempty"`    // e.g. "on the terminal", "pinned rule r-4k2m9q"
	Rule       string    `json:"rule,omitempty"`   // the rule that decided, or was pinned
}

// decidedBy is who or what answered a request, for the log.
type decidedBy struct {
	who  string // person | policy | rule | grant | device | client
	how  string
	rule string
}

type auditLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// synced is closed when the fsync after the latest write returns; it
	// covers every earlier write too. syncErr is the first failed fsync
	// that durable has not reported yet.
	synced  chan struct{}
	syncErr error
}

func newAuditLog(stateDir string) *auditLog {
	return &auditLog{path: filepath.Join(stateDir, auditFile)}
}

// open opens the log for appending and, if the last entry was torn by a
// crash, ends it with a newline so the next entry stands on its own line.
func (l *auditLog) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		r, err := os.Open(l.path)
		if err == nil {
			_, err = r.ReadAt(last, fi.Size()-1)
			r.Close()
		}
		if err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return err
			}
		}
	}
	l.f = f
	return nil
}

// append writes one entry, one write(2) of the whole line, and starts its
// fsync; durable waits for it.
func (l *auditLog) append(e auditEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	if _, err := l.f.Write(line); err != nil {
		return err
	}
	done := make(chan struct{})
	l.synced = done
	go func(f *os.File) {
		defer close(done)
		if err := f.Sync(); err != nil {
			l.mu.Lock()
			l.syncErr = cmp.Or(l.syncErr, err)
			l.mu.Unlock()
		}
	}(l.f)
	return nil
}

// durable waits until every entry appended so far is on disk.
func (l *auditLog) durable() error {
	l.mu.Lock()
	done := l.synced
	l.mu.Unlock()
	if done != nil {
		<-done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.syncErr
	l.syncErr = nil
	return err
}

func (l *auditLog) close() {
	l.durable()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// auditEntryOf describes a decided approval; never a secret value (the
// approval carries none).
func auditEntryOf(a *device.Approval, d device.Decision, by decidedBy, now time.Time) auditEntry {
	e := auditEntry{
		Time: now.UTC(), Received: a.Received.UTC(), ID: a.ID, Kind: a.Kind, Client: a.ClientID,
		RequestID: a.RequestID, Secrets: append([]string{}, a.Secrets...),
		DecidedBy: by.who, How: by.how, Rule: by.rule,
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
	}
	return e
}

// readAudit reads the log; entries that do not parse (a torn last line)
// are counted, not returned.
func readAudit(path string, since time.Time) (entries []auditEntry, skipped int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
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
			return entries, skipped, nil
		}
		if err != nil {
			return entries, skipped, err
		}
	}
}

// cmdLog is `agentknock-device log [--since D] [--json]`.
func cmdLog(c *cli, args []string) error {
	fs := c.flags("log")
	sinceText := fs.String("since", "", "")
	asJSON := fs.Bool("json", false, "")
	operands, err := c.parse(fs, helpLog, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "log [--since DURATION|TIME] [--json]"); err != nil {
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
	entries, skipped, err := readAudit(filepath.Join(dir, auditFile), since)
	if err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(c.stderr, "%s: %d unreadable line(s) skipped (an entry torn by a crash)\n", progName, skipped)
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
	return b.String()
}
