// Time-boxed grants (`approve ID --for DURATION`): a person's approval that
// also covers later requests with the same secret set, client and operation
// kind until it expires. Kept in grants.json in the state directory so a
// restarted serve still honours (and a stopped one forgets nothing about)
// what was granted.
package main

import (
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
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
}

type grantsDoc struct {
	Grants []grant `json:"grants"`
}

// grantStore is used by one serve process only (the control socket admits
// one serve per state directory), so an in-process mutex orders its writes.
type grantStore struct {
	path string
	now  func() time.Time
	mu   sync.Mutex
}

func newGrantStore(stateDir string, now func() time.Time) *grantStore {
	return &grantStore{path: filepath.Join(stateDir, grantsFile), now: now}
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

// matches reports whether an unexpired grant covers exactly this secret set
// for this client and operation. A grant for {a} does not cover {a, b}, and
// one for {a, b} does not cover {a}: the person approved that combination.
func (s *grantStore) matches(clientID, operation string, secrets []string) (grant, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grants, err := s.load()
	if err != nil {
		return grant{}, false, err
	}
	want := sortedCopy(secrets)
	now := s.now()
	for _, g := range grants {
		if g.ClientID == clientID && g.Operation == operation &&
			slices.Equal(g.Secrets, want) && now.Before(g.Expires) {
			return g, true, nil
		}
	}
	return grant{}, false, nil
}

// add records a grant and drops expired ones.
func (s *grantStore) add(clientID, operation string, secrets []string, d time.Duration) (grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		Created:   now.UTC(),
		Expires:   now.Add(d).UTC(),
	}
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
