// Device identity (cryptosystem §7.1, §10): a stable device_id, an X25519
// key pair, the pairing address, and the device token that a device-facing
// relay connection would present. Init creates it once; later calls only
// report it.
package device

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// Init creates the state directory and identity if absent (idempotent) and
// returns the pairing address.
func Init(stateDir string) (address string, err error) {
	if err := makeDir(stateDir); err != nil {
		return "", err
	}
	unlock, err := lockDir(stateDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	id := &identity{}
	ok, err := readJSON(stateDir, identityFile, id)
	if err != nil {
		return "", err
	}
	if ok {
		if _, err := id.parse(); err != nil {
			return "", err
		}
		return id.Address, nil
	}
	pub, sk, err := kemScheme.GenerateKeyPair()
	if err != nil {
		return "", err
	}
	skb, err := sk.MarshalBinary()
	if err != nil {
		return "", err
	}
	pkb, err := pub.MarshalBinary()
	if err != nil {
		return "", err
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return "", err
	}
	now := nowUTC()
	id = &identity{
		DeviceID:    newULID(now).String(),
		PrivateKey:  skb,
		PublicKey:   pkb,
		Address:     newAddress(),
		DeviceToken: base64.RawURLEncoding.EncodeToString(token),
		CreatedAt:   now,
	}
	if err := writeJSON(stateDir, identityFile, id); err != nil {
		return "", err
	}
	return id.Address, nil
}

// parsedIdentity is the identity in the forms the protocol code uses.
type parsedIdentity struct {
	deviceID  ulid
	key       *deviceKey
	address   string
	addressID string // hex
}

func (id *identity) parse() (*parsedIdentity, error) {
	did, err := parseULID(id.DeviceID)
	if err != nil {
		return nil, fmt.Errorf("identity: device_id: %w", err)
	}
	k, err := parseDeviceKey(id.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("identity: private key: %w", err)
	}
	if !validAddress(id.Address) {
		return nil, errors.New("identity: invalid pairing address")
	}
	return &parsedIdentity{deviceID: did, key: k, address: id.Address, addressID: hex.EncodeToString(addressID(id.Address))}, nil
}
