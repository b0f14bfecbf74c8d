// The secret-upload review queue (client-device protocol "Secret upload"):
// a RECEIVED upload waits in secrets.json until a person accepts or rejects
// it; accepting applies CREATE, UPDATE or REPLACE to the store.
package device

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

func (u *storedUpload) info() UploadInfo {
	ui := UploadInfo{ID: u.ID, ClientID: u.ClientID, Mode: u.Mode, Name: u.Name, Type: u.Type,
		PublicKey: u.PublicKey, ReceivedAt: u.ReceivedAt}
	if u.Description != nil {
		ui.Description = *u.Description
	}
	if u.Type == typeEnvironment {
		ui.Variables = sortedKeys(u.Variables)
	}
	return ui
}

// ListUploads lists queued uploads, oldest first, without values.
func ListUploads(stateDir string) ([]UploadInfo, error) {
	var out []UploadInfo
	err := transact(stateDir, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		for _, u := range ss.Uploads {
			out = append(out, u.info())
		}
		return nil
	})
	slices.SortFunc(out, func(a, b UploadInfo) int {
		if c := a.ReceivedAt.Compare(b.ReceivedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

// AcceptUpload applies a queued upload to the store and removes it from
// the queue. CREATE picks a free name ("NAME-2", ...) when NAME is taken.
func AcceptUpload(stateDir, id string) error {
	return transact(stateDir, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		u := ss.Uploads[id]
		if u == nil {
			return fmt.Errorf("no upload %s", id)
		}
		if err := applyUpload(ss, u); err != nil {
			return err
		}
		delete(ss.Uploads, id)
		t.ssDirty = true
		return nil
	})
}

// RejectUpload drops a queued upload.
func RejectUpload(stateDir, id string) error {
	return transact(stateDir, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		if ss.Uploads[id] == nil {
			return fmt.Errorf("no upload %s", id)
		}
		delete(ss.Uploads, id)
		t.ssDirty = true
		return nil
	})
}

func applyUpload(ss *secretStore, u *storedUpload) error {
	fresh := &storedSecret{Type: u.Type, UpdatedAt: nowUTC()}
	if u.Description != nil {
		fresh.Description = *u.Description
	}
	if u.Type == typeEnvironment {
		fresh.Variables = maps.Clone(u.Variables)
	} else {
		fresh.PrivateKey, fresh.PublicKey = u.PrivateKey, u.PublicKey
	}
	if err := checkDeliverable(u.Name, fresh); err != nil {
		return fmt.Errorf("upload %s cannot be accepted: %w", u.ID, err)
	}
	existing := ss.Secrets[u.Name]
	switch u.Mode {
	case "CREATE":
		name := u.Name
		for i := 2; ss.Secrets[name] != nil; i++ {
			name = fmt.Sprintf("%s-%d", u.Name, i)
		}
		ss.Secrets[name] = fresh
	case "REPLACE":
		if existing == nil {
			return fmt.Errorf("upload %s replaces secret %q, which no longer exists", u.ID, u.Name)
		}
		ss.Secrets[u.Name] = fresh
	case "UPDATE":
		if existing == nil {
			return fmt.Errorf("upload %s updates secret %q, which no longer exists", u.ID, u.Name)
		}
		if existing.Type != u.Type {
			return fmt.Errorf("upload %s updates %s secret %q with %s content", u.ID, existing.Type, u.Name, u.Type)
		}
		upd := *existing
		upd.UpdatedAt = fresh.UpdatedAt
		if u.Description != nil {
			upd.Description = *u.Description // "" removes it
		}
		if u.Type == typeEnvironment {
			upd.Variables = maps.Clone(existing.Variables)
			maps.Copy(upd.Variables, u.Variables)
		} else {
			upd.PrivateKey, upd.PublicKey = u.PrivateKey, u.PublicKey
		}
		if err := checkDeliverable(u.Name, &upd); err != nil {
			return fmt.Errorf("upload %s cannot be accepted: %w", u.ID, err)
		}
		ss.Secrets[u.Name] = &upd
	default:
		return fmt.Errorf("upload %s has unknown mode %q", u.ID, u.Mode)
	}
	return nil
}
