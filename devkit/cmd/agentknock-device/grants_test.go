// Tests of time-boxed grants: scope (secret set, client, operation),
// expiry with an injected clock, persistence and file mode.
package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestGrantsScopedAndExpiring(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := newGrantStore(dir, clock.now)
	if _, err := s.add("C1", kindInvocation, []string{"b", "a"}, 10*time.Minute, false); err != nil {
		t.Fatal(err)
	}
	check := func(client, op string, secrets []string, want bool) {
		t.Helper()
		_, got, _, _, err := s.matches(client, op, secrets, false)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("matches(%s, %s, %v) = %v, want %v", client, op, secrets, got, want)
		}
	}
	check("C1", kindInvocation, []string{"a", "b"}, true) // order does not matter
	check("C1", kindInvocation, []string{"a"}, false)     // subset
	check("C1", kindInvocation, []string{"a", "b", "c"}, false)
	check("C2", kindInvocation, []string{"a", "b"}, false) // other client
	check("C1", kindGitSign, []string{"a", "b"}, false)    // other operation

	// A fresh store (a restarted serve) sees the same grant.
	s2 := newGrantStore(dir, clock.now)
	if _, ok, _, _, _ := s2.matches("C1", kindInvocation, []string{"a", "b"}, false); !ok {
		t.Error("grant not persisted")
	}
	fi, err := os.Stat(filepath.Join(dir, grantsFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("grants.json mode %04o, want 0600", fi.Mode().Perm())
	}

	clock.t = clock.t.Add(10*time.Minute - time.Second)
	check("C1", kindInvocation, []string{"a", "b"}, true)
	clock.t = clock.t.Add(time.Second)
	check("C1", kindInvocation, []string{"a", "b"}, false) // expired at exactly 10m

	// Adding another grant drops the expired one from the file.
	if _, err := s.add("C1", kindSSH, []string{"key"}, time.Minute, false); err != nil {
		t.Fatal(err)
	}
	grants, err := s.load()
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 1 || grants[0].Operation != kindSSH {
		t.Errorf("expired grants kept: %+v", grants)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 { // grants.json and rules.key
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestGrantsAuthenticated(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := newGrantStore(dir, clock.now)
	if _, err := s.add("C1", kindInvocation, []string{"a"}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, grantsFile)
	pristine, _ := os.ReadFile(path)
	for name, c := range map[string]struct {
		edit  func(string) string
		clock time.Duration
		why   string
	}{
		"hand-edited expiry": {func(s string) string {
			return strings.Replace(s, `"expires": "2030-01-02T04`, `"expires": "2031-01-02T04`, 1)
		}, 2 * time.Hour, "not authenticated"},
		"hand-added":     {func(s string) string { return strings.Replace(s, `"mac"`, `"was_mac"`, 1) }, 0, "not authenticated"},
		"clock set back": {func(s string) string { return s }, -24 * time.Hour, "created in the future"},
	} {
		edited := c.edit(string(pristine))
		if edited == string(pristine) && c.clock >= 0 {
			t.Fatalf("%s: nothing edited", name)
		}
		os.WriteFile(path, []byte(edited), 0o600)
		clock.t = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).Add(c.clock)
		_, ok, why, _, err := s.matches("C1", kindInvocation, []string{"a"}, false)
		if err != nil || ok || !strings.Contains(why, c.why) {
			t.Errorf("%s: matches = %v, %q, %v", name, ok, why, err)
		}
	}
	if _, err := parseGrantDuration("169h"); err == nil {
		t.Error("a grant beyond the lifetime cap accepted")
	}
}
