// Time-boxed grants (`approve ID --for DURATION`): a person's approval that
// also covers later requests with the same secret set, client and operation
// kind until it expires. Kept in grants.json in the state directory so a
// restarted serve still honours (and a stopped one forgets nothing about)
// what was granted. Like pinned rules (rules.go) they are authenticated
// with rules.key (an HMAC over each grant), refused when created in the
// future, and never live past ruleLifetimeCap after their creation: a grant
// added or edited by hand, or revived by setting the clock back, approves
// nothing. A grant never covers an irreversible command (the approver
// asks those of a person first), and one made with --read-only covers only
// requests whose every command is read-only by the command tables.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

const grantsFile = "grants.json"

type grant struct {
	Secrets   []string  `json:"secrets"` // sorted
	ClientID  string    `json:"client_id"`
	Operation string    `json:"operation"`
	ReadOnly  bool      `json:"read_only,omitempty"` // covers only read-only requests (--read-only); in the MAC
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	MAC       string    `json:"mac,omitempty"` // HMAC-SHA256 with rules.key over canonical(), hex
}

func (g grant) canonical() []byte {
	g.MAC = ""
	data, _ := json.Marshal(g)
	return append([]byte("agentknock-device grant v1\n"), data...)
}

func grantMAC(key []byte, g grant) string {
	m := hmac.New(sha256.New, key)
	m.Write(g.canonical())
	return hex.EncodeToString(m.Sum(nil))
}

// refusal says why a stored grant is not applied; "" means it stands.
func (g grant) refusal(key []byte, now time.Time) string {
	switch {
	case g.MAC == "" || key == nil || !hmac.Equal([]byte(g.MAC), []byte(grantMAC(key, g))):
		return "it is not authenticated by this device (added or edited by hand)"
	case g.Created.After(now.Add(ruleClockSlack)):
		return "it was created in the future: the clock was set back"
	case g.Expires.After(g.Created.Add(ruleLifetimeCap)):
		return "its expiry lies beyond the lifetime cap"
	}
	return ""
}

type grantsDoc struct {
	Grants []grant `json:"grants"`
}

// grantStore is used by one serve process only (the control socket admits
// one serve per state directory), so an in-process mutex orders its writes.
type grantStore struct {
	dir  string
	path string
	now  func() time.Time
	mu   sync.Mutex
	// audit, when set, must hold the grant's creation and not its
	// removal (audit.go): a grants.json copied back revives nothing.
	audit *auditLog
}

func newGrantStore(stateDir string, now func() time.Time) *grantStore {
	return &grantStore{dir: stateDir, path: filepath.Join(stateDir, grantsFile), now: now}
}

func (s *grantStore) load() ([]grant, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc grantsDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	return doc.Grants, nil
}

// matches reports whether an unexpired, authentic grant covers exactly
// this secret set for this client and operation. A grant for {a} does not
// cover {a, b}, and one for {a, b} does not cover {a}: the person approved
// that combination. A read-only grant covers the request only when
// readOnly (every command of it is read-only); narrow says one would have
// covered it otherwise. refused says why a grant that would have covered
// it is not applied.
func (s *grantStore) matches(clientID, operation string, secrets []string, readOnly bool) (g grant, found bool, refused string, narrow bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grants, err := s.load()
	if err != nil || len(grants) == 0 {
		return grant{}, false, "", false, err
	}
	key, err := readRulesKey(s.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return grant{}, false, "", false, err
	}
	want := sortedCopy(secrets)
	now := s.now()
	for _, g := range grants {
		if g.ClientID != clientID || g.Operation != operation || !slices.Equal(g.Secrets, want) {
			continue
		}
		if why := g.refusal(key, now); why != "" {
			refused = why
			continue
		}
		if s.audit != nil {
			if why := s.audit.bindingRefusal(g.MAC); why != "" {
				refused = why
				continue
			}
		}
		if !now.Before(g.Expires) || !now.Before(g.Created.Add(ruleLifetimeCap)) {
			continue
		}
		if g.ReadOnly && !readOnly {
			narrow = true
			continue
		}
		return g, true, "", false, nil
	}
	return grant{}, false, refused, narrow, nil
}

// add records a grant and drops expired ones.
func (s *grantStore) add(clientID, operation string, secrets []string, d time.Duration, readOnly bool) (grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, err := rulesKey(s.dir)
	if err != nil {
		return grant{}, err
	}
	grants, err := s.load()
	if err != nil {
		return grant{}, err
	}
	now := s.now()
	kept := grants[:0]
	for _, g := range grants {
		if now.Before(g.Expires) {
			kept = append(kept, g)
		}
	}
	g := grant{
		Secrets:   sortedCopy(secrets),
		ClientID:  clientID,
		Operation: operation,
		ReadOnly:  readOnly,
		Created:   now.UTC(),
		Expires:   now.Add(d).UTC(),
	}
	g.MAC = grantMAC(key, g)
	kept = append(kept, g)
	data, err := json.MarshalIndent(grantsDoc{Grants: kept}, "", "  ")
	if err != nil {
		return grant{}, err
	}
	if err := device.WriteFileAtomic(filepath.Dir(s.path), filepath.Base(s.path), append(data, '\n')); err != nil {
		return grant{}, err
	}
	return g, nil
}

func sortedCopy(s []string) []string {
	c := append([]string{}, s...)
	sort.Strings(c)
	return c
}
