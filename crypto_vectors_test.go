// crypto_vectors_test.go: known answers for crypto.go (cryptosystem.md
// section 13, testdata/crypto-vectors-v1.json): address id, identifiers,
// commitment and SAS, initial pairing, paired exchange and PSK rotation.

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

type cryptoVectorFile struct {
	Address struct {
		Address   string `json:"address"`
		AddressID string `json:"address_id"`
	} `json:"address"`
	Identifiers []struct {
		Hex    string `json:"hex"`
		Text   string `json:"text"`
		UnixMS int64  `json:"unix_ms"`
	} `json:"identifiers"`
	Pairing  map[string]any    `json:"pairing"`
	Paired   map[string]string `json:"paired"`
	Rotation map[string]string `json:"rotation"`
}

func loadCryptoVectors(t *testing.T) *cryptoVectorFile {
	t.Helper()
	data, err := os.ReadFile("testdata/crypto-vectors-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var v cryptoVectorFile
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func cryptoVecHex(t *testing.T, m map[string]any, key string) []byte {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("vector %q missing", key)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vector %q: %v", key, err)
	}
	return b
}

func cryptoVecHexS(t *testing.T, m map[string]string, key string) []byte {
	t.Helper()
	b, err := hex.DecodeString(m[key])
	if err != nil || len(b) == 0 {
		t.Fatalf("vector %q: bad hex", key)
	}
	return b
}

func cryptoVecULID(t *testing.T, raw []byte) ULID {
	t.Helper()
	if len(raw) != 16 {
		t.Fatalf("id length %d", len(raw))
	}
	return ULID(raw)
}

func cryptoAssertHex(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s = %x, want %x", what, got, want)
	}
}

// vectorPairing returns the section 13.2/13.3 inputs.
func vectorPairing(t *testing.T, v *cryptoVectorFile) (deviceID, clientID ULID, pkD, skD, clientSecret, deviceRandom []byte) {
	p := v.Pairing
	return cryptoVecULID(t, cryptoVecHex(t, p, "device_id")), cryptoVecULID(t, cryptoVecHex(t, p, "client_id")),
		cryptoVecHex(t, p, "device_public_key"), cryptoVecHex(t, p, "device_private_key"),
		cryptoVecHex(t, p, "client_secret"), cryptoVecHex(t, p, "device_random")
}

func vectorPairedKeys(t *testing.T, v *cryptoVectorFile) pairedKeys {
	deviceID, clientID, pkD, _, _, _ := vectorPairing(t, v)
	return pairedKeys{DeviceID: deviceID, DeviceKey: pkD, ClientID: clientID, PSK: cryptoVecHex(t, v.Pairing, "client_psk")}
}

func TestCryptoVectorAddress(t *testing.T) {
	v := loadCryptoVectors(t)
	got, err := pairingAddressID(v.Address.Address)
	if err != nil {
		t.Fatal(err)
	}
	if got != v.Address.AddressID {
		t.Errorf("address id = %s, want %s", got, v.Address.AddressID)
	}
}

func TestCryptoVectorIdentifiers(t *testing.T) {
	v := loadCryptoVectors(t)
	if len(v.Identifiers) == 0 {
		t.Fatal("no identifier vectors")
	}
	for _, c := range v.Identifiers {
		raw, _ := hex.DecodeString(c.Hex)
		id := cryptoVecULID(t, raw)
		if got := id.String(); got != c.Text {
			t.Errorf("%s: text %s, want %s", c.Hex, got, c.Text)
		}
		parsed, err := parseULID(c.Text)
		if err != nil {
			t.Errorf("%s: %v", c.Text, err)
		} else if parsed != id {
			t.Errorf("%s: parsed %x, want %s", c.Text, parsed[:], c.Hex)
		}
		if c.UnixMS != 0 && id.Time().UnixMilli() != c.UnixMS {
			t.Errorf("%s: time %d, want %d", c.Text, id.Time().UnixMilli(), c.UnixMS)
		}
	}
}

func TestCryptoVectorCommitmentAndSAS(t *testing.T) {
	v := loadCryptoVectors(t)
	deviceID, clientID, pkD, _, clientSecret, deviceRandom := vectorPairing(t, v)
	cryptoAssertHex(t, "version_info", cryptoVersionInfo(), cryptoVecHex(t, v.Pairing, "version_info"))
	cryptoAssertHex(t, "pairing info", cryptoHPKEInfo(deviceID, clientID), cryptoVecHex(t, v.Pairing, "hpke_info"))
	cryptoAssertHex(t, "commitment", pairingCommitment(clientSecret), cryptoVecHex(t, v.Pairing, "commitment"))

	sasBytes := pairingSASBytes(clientSecret, deviceRandom, deviceID, clientID, pkD)
	cryptoAssertHex(t, "sas_bytes", sasBytes, cryptoVecHex(t, v.Pairing, "sas_bytes"))
	wantInt := uint64(v.Pairing["sas_integer"].(float64))
	if got := pairingSASValue(sasBytes); got != wantInt {
		t.Errorf("sas integer %d, want %d", got, wantInt)
	}
	if got := formatPairingSAS(wantInt); got != v.Pairing["sas_display"] {
		t.Errorf("sas display %q, want %q", got, v.Pairing["sas_display"])
	}
	for _, c := range []struct {
		v    uint64
		want string
	}{{0, "0000 0000 0000"}, {999_999_999_999, "9999 9999 9999"}, {123_456_789_012, "1234 5678 9012"}} {
		if got := formatPairingSAS(c.v); got != c.want {
			t.Errorf("formatPairingSAS(%d) = %q, want %q", c.v, got, c.want)
		}
	}
	// The modulus is 10^12, not a truncation of the decimal string.
	for _, c := range []struct{ in, want uint64 }{
		{999_999_999_999, 999_999_999_999},
		{1_000_000_000_005, 5},
		{1<<64 - 1, 709_551_615 + 73_000_000_000},
	} {
		b := binary.BigEndian.AppendUint64(nil, c.in)
		if got := pairingSASValue(b); got != c.want {
			t.Errorf("sas value of %d = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestCryptoVectorPairing(t *testing.T) {
	v := loadCryptoVectors(t)
	deviceID, clientID, pkD, skD, clientSecret, deviceRandom := vectorPairing(t, v)
	attempt := pairingAttemptWith(clientID, [32]byte(clientSecret))
	cryptoAssertHex(t, "attempt commitment", attempt.Commitment(), cryptoVecHex(t, v.Pairing, "commitment"))

	metadata := []byte(v.Pairing["application_plaintext_utf8"].(string))
	done, err := attempt.complete(bytes.NewReader(cryptoVecHex(t, v.Pairing, "ikmE")), deviceID, pkD, deviceRandom, metadata)
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "enc", done.Enc, cryptoVecHex(t, v.Pairing, "enc"))
	cryptoAssertHex(t, "secret_ciphertext", done.SecretCiphertext, cryptoVecHex(t, v.Pairing, "secret_ciphertext"))
	cryptoAssertHex(t, "application_ciphertext", done.MetadataCiphertext, cryptoVecHex(t, v.Pairing, "application_ciphertext"))
	cryptoAssertHex(t, "client_psk", done.PSK, cryptoVecHex(t, v.Pairing, "client_psk"))
	if done.SAS != v.Pairing["sas_display"] {
		t.Errorf("SAS %q, want %q", done.SAS, v.Pairing["sas_display"])
	}
	if done.DeviceID != deviceID || done.ClientID != clientID || !bytes.Equal(done.DeviceKey, pkD) {
		t.Error("completion does not carry the pairing identities")
	}

	// The device side, with the vector private key, opens both records.
	gotSecret, gotMeta, psk := testDeviceOpenPairing(t, skD, deviceID, clientID, done)
	cryptoAssertHex(t, "device-opened client_secret", gotSecret, clientSecret)
	cryptoAssertHex(t, "device-opened metadata", gotMeta, metadata)
	cryptoAssertHex(t, "device-exported psk", psk, cryptoVecHex(t, v.Pairing, "client_psk"))
}

func TestCryptoVectorPairedExchange(t *testing.T) {
	v := loadCryptoVectors(t)
	keys := vectorPairedKeys(t, v)
	p := v.Paired
	requestID := cryptoVecULID(t, cryptoVecHexS(t, p, "request_id"))
	cryptoAssertHex(t, "paired info", cryptoHPKEInfo(keys.DeviceID, requestID), cryptoVecHexS(t, p, "hpke_info"))
	cryptoAssertHex(t, "psk_id", keys.ClientID[:], cryptoVecHexS(t, p, "psk_id"))

	x, err := sealPairedRequestFrom(bytes.NewReader(cryptoVecHexS(t, p, "ikmE")), keys, requestID, []byte(p["request_plaintext_utf8"]))
	if err != nil {
		t.Fatal(err)
	}
	if x.RequestID() != requestID {
		t.Error("request id not retained")
	}
	cryptoAssertHex(t, "enc", x.Enc(), cryptoVecHexS(t, p, "enc"))
	cryptoAssertHex(t, "request_ciphertext", x.RequestCiphertext(), cryptoVecHexS(t, p, "request_ciphertext"))
	cryptoAssertHex(t, "response_secret", x.responseSecret, cryptoVecHexS(t, p, "response_secret"))

	key, nonce := pairedResponseKeys(x.responseSecret, x.enc, cryptoVecHexS(t, p, "response_random"))
	cryptoAssertHex(t, "response_key", key, cryptoVecHexS(t, p, "response_key"))
	cryptoAssertHex(t, "response_aead_nonce", nonce, cryptoVecHexS(t, p, "response_aead_nonce"))

	pt, err := x.OpenResponse(cryptoVecHexS(t, p, "response_random"), cryptoVecHexS(t, p, "response_ciphertext"))
	if err != nil {
		t.Fatal(err)
	}
	if string(pt) != p["response_plaintext_utf8"] {
		t.Errorf("response plaintext %q", pt)
	}
	// Opening the response again must not disturb the HPKE sequence: the
	// completion is still record 1.
	if _, err := x.OpenResponse(cryptoVecHexS(t, p, "response_random"), cryptoVecHexS(t, p, "response_ciphertext")); err != nil {
		t.Fatal(err)
	}
	ct, err := x.SealCompletion([]byte(p["completion_plaintext_utf8"]))
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "completion_ciphertext", ct, cryptoVecHexS(t, p, "completion_ciphertext"))
	if _, err := x.SealCompletion([]byte(p["completion_plaintext_utf8"])); !errors.Is(err, errCryptoSealedTwice) {
		t.Errorf("second completion seal: %v, want errCryptoSealedTwice", err)
	}
}

func TestCryptoVectorRotation(t *testing.T) {
	v := loadCryptoVectors(t)
	keys := vectorPairedKeys(t, v)
	r := v.Rotation
	cryptoAssertHex(t, "rotation info", cryptoHPKEInfo(keys.DeviceID, ULID{}), cryptoVecHexS(t, r, "hpke_info"))
	rot, err := rotatePairingPSKFrom(bytes.NewReader(cryptoVecHexS(t, r, "ikmE")), keys)
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "rotation_enc", rot.Enc, cryptoVecHexS(t, r, "rotation_enc"))
	cryptoAssertHex(t, "new_psk", rot.NewPSK, cryptoVecHexS(t, r, "new_psk"))
}
