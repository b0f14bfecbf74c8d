// Known-answer tests: every value of spec/vectors-v1.json and of the
// cryptosystem document's section 13 (testdata/), checked through the
// device-side functions, with the sender side reproduced by circl from the
// given ikmE seeds.
package device

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

type hexVectors map[string]map[string]any

func loadVectors(t *testing.T, name string) hexVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	v := hexVectors{}
	for k, r := range raw {
		if k == "about" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatal(err)
		}
		v[k] = m
	}
	return v
}

func (v hexVectors) hex(t *testing.T, section, key string) []byte {
	t.Helper()
	s, ok := v[section][key].(string)
	if !ok {
		t.Fatalf("vector %s.%s missing", section, key)
	}
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("vector %s.%s: %v", section, key, err)
	}
	return b
}

func (v hexVectors) str(t *testing.T, section, key string) string {
	t.Helper()
	s, ok := v[section][key].(string)
	if !ok {
		t.Fatalf("vector %s.%s missing", section, key)
	}
	return s
}

func eq(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %x\nwant %x", what, got, want)
	}
}

func asULID(t *testing.T, b []byte) ulid {
	t.Helper()
	if len(b) != 16 {
		t.Fatalf("id of %d bytes", len(b))
	}
	var u ulid
	copy(u[:], b)
	return u
}

func TestKnownAnswersSpecVectors(t *testing.T) {
	checkPairingVectors(t, loadVectors(t, "vectors-v1.json"))
}

func TestKnownAnswersCryptosystemDocument(t *testing.T) {
	v := loadVectors(t, "cryptosystem-vectors.json")
	checkPairingVectors(t, v)
	p := "pairing"
	did := asULID(t, v.hex(t, p, "device_id"))
	cid := asULID(t, v.hex(t, p, "client_id"))
	pkD := v.hex(t, p, "device_public_key")
	sasInfo := "agentknock-v1 sas" + string(did[:]) + string(cid[:]) + string(pkD)
	eq(t, "SAS HKDF info", []byte(sasInfo), v.hex(t, p, "sas_info"))
	eq(t, "pairing info", hpkeInfo(did, cid), v.hex(t, p, "pairing_info"))
	eq(t, "application plaintext", []byte(v.str(t, p, "application_plaintext_utf8")), v.hex(t, p, "application_plaintext"))

	key, err := parseDeviceKey(v.hex(t, p, "device_private_key"))
	if err != nil {
		t.Fatal(err)
	}
	psk := v.hex(t, p, "client_psk")

	// 13.4: paired request, response and completion.
	x := "paired_exchange"
	rid := asULID(t, v.hex(t, x, "request_id"))
	eq(t, "exchange info", hpkeInfo(did, rid), v.hex(t, x, "exchange_info"))
	eq(t, "psk_id", cid[:], v.hex(t, x, "psk_id"))
	snd, err := suite.NewSender(key.sk.Public(), hpkeInfo(did, rid))
	if err != nil {
		t.Fatal(err)
	}
	enc, sealer, err := snd.SetupPSK(bytes.NewReader(v.hex(t, x, "ikmE")), psk, cid[:])
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "request enc", enc, v.hex(t, x, "enc"))
	reqCT, _ := sealer.Seal(v.hex(t, x, "request_plaintext"), nil)
	eq(t, "request ciphertext (sender)", reqCT, v.hex(t, x, "request_ciphertext"))
	eq(t, "request plaintext", []byte(v.str(t, x, "request_plaintext_utf8")), v.hex(t, x, "request_plaintext"))

	rc, err := key.openRequest(did, cid, rid, psk, v.hex(t, x, "enc"), v.hex(t, x, "request_ciphertext"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "opened request", rc.Plaintext, v.hex(t, x, "request_plaintext"))
	eq(t, "response_secret", rc.ResponseSecret, v.hex(t, x, "response_secret"))
	rr := v.hex(t, x, "response_random")
	salt := append(bytes.Clone(v.hex(t, x, "enc")), rr...)
	eq(t, "response_salt", salt, v.hex(t, x, "response_salt"))
	eq(t, "response_key", hkdfSHA256(salt, rc.ResponseSecret, "key", 32), v.hex(t, x, "response_key"))
	eq(t, "response_aead_nonce", hkdfSHA256(salt, rc.ResponseSecret, "nonce", 12), v.hex(t, x, "response_aead_nonce"))
	eq(t, "response plaintext", []byte(v.str(t, x, "response_plaintext_utf8")), v.hex(t, x, "response_plaintext"))
	respCT, err := sealResponse(rc.ResponseSecret, v.hex(t, x, "enc"), rr, v.hex(t, x, "response_plaintext"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "response ciphertext", respCT, v.hex(t, x, "response_ciphertext"))

	compCT, _ := sealer.Seal(v.hex(t, x, "completion_plaintext"), nil)
	eq(t, "completion ciphertext (sender)", compCT, v.hex(t, x, "completion_ciphertext"))
	eq(t, "completion plaintext", []byte(v.str(t, x, "completion_plaintext_utf8")), v.hex(t, x, "completion_plaintext"))
	comp, err := key.openCompletion(did, cid, rid, psk, v.hex(t, x, "enc"), v.hex(t, x, "request_ciphertext"), v.hex(t, x, "completion_ciphertext"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "opened completion", comp, v.hex(t, x, "completion_plaintext"))
	// The completion is record 1: it must not open as record 0.
	if _, err := key.openCompletion(did, cid, rid, psk, v.hex(t, x, "enc"), v.hex(t, x, "completion_ciphertext"), v.hex(t, x, "request_ciphertext")); err == nil {
		t.Error("records opened out of order")
	}

	// 13.5: rotation.
	r := "rotation"
	eq(t, "rotation info", hpkeInfo(did, ulid{}), v.hex(t, r, "rotation_info"))
	eq(t, "rotation psk_id", cid[:], v.hex(t, r, "psk_id"))
	rs, err := suite.NewSender(key.sk.Public(), hpkeInfo(did, ulid{}))
	if err != nil {
		t.Fatal(err)
	}
	renc, rctx, err := rs.SetupPSK(bytes.NewReader(v.hex(t, r, "ikmE")), psk, cid[:])
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "rotation_enc (sender)", renc, v.hex(t, r, "rotation_enc"))
	eq(t, "new_psk (sender)", rctx.Export(labelPSK, 32), v.hex(t, r, "new_psk"))
	cand, err := key.rotationCandidate(did, cid, psk, v.hex(t, r, "rotation_enc"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "new_psk (device)", cand, v.hex(t, r, "new_psk"))
}

func checkPairingVectors(t *testing.T, v hexVectors) {
	t.Helper()
	eq(t, "address_id", addressID(v.str(t, "address", "address")), v.hex(t, "address", "address_id"))
	if !validAddress(v.str(t, "address", "address")) {
		t.Error("vector address rejected")
	}
	p := "pairing"
	eq(t, "version_info", versionInfo, v.hex(t, p, "version_info"))
	secret := v.hex(t, p, "client_secret")
	eq(t, "commitment", commitmentOf(secret), v.hex(t, p, "commitment"))

	key, err := parseDeviceKey(v.hex(t, p, "device_private_key"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "device public key", key.pub, v.hex(t, p, "device_public_key"))
	did := asULID(t, v.hex(t, p, "device_id"))
	cid := asULID(t, v.hex(t, p, "client_id"))
	dr := v.hex(t, p, "device_random")

	sasInfo := "agentknock-v1 sas" + string(did[:]) + string(cid[:]) + string(key.pub)
	sb := hkdfSHA256(dr, secret, sasInfo, 8)
	eq(t, "sas_bytes", sb, v.hex(t, p, "sas_bytes"))
	if n := binary.BigEndian.Uint64(sb) % 1_000_000_000_000; float64(n) != v[p]["sas_integer"].(float64) {
		t.Errorf("sas_integer = %d, want %v", n, v[p]["sas_integer"])
	}
	if got, want := sasDigits(dr, secret, did, cid, key.pub), v.str(t, p, "sas_display"); got != want {
		t.Errorf("SAS = %q, want %q", got, want)
	}

	// Sender side from ikmE reproduces enc and both records.
	snd, err := suite.NewSender(key.sk.Public(), hpkeInfo(did, cid))
	if err != nil {
		t.Fatal(err)
	}
	enc, sealer, err := snd.Setup(bytes.NewReader(v.hex(t, p, "ikmE")))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "pairing enc", enc, v.hex(t, p, "enc"))
	sct, _ := sealer.Seal(secret, nil)
	eq(t, "secret_ciphertext (sender)", sct, v.hex(t, p, "secret_ciphertext"))
	app := []byte(v.str(t, p, "application_plaintext_utf8"))
	act, _ := sealer.Seal(app, nil)
	eq(t, "application_ciphertext (sender)", act, v.hex(t, p, "application_ciphertext"))

	// Device side opens the vector's records.
	opened, err := key.openPairingCompletion(did, cid, v.hex(t, p, "commitment"), v.hex(t, p, "enc"),
		v.hex(t, p, "secret_ciphertext"), v.hex(t, p, "application_ciphertext"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "opened client_secret", opened.ClientSecret, secret)
	eq(t, "opened application plaintext", opened.Metadata, app)
	eq(t, "client_psk", opened.PSK, v.hex(t, p, "client_psk"))

	// A different commitment (one bit) must refuse the completion.
	bad := bytes.Clone(v.hex(t, p, "commitment"))
	bad[31] ^= 1
	if _, err := key.openPairingCompletion(did, cid, bad, v.hex(t, p, "enc"), v.hex(t, p, "secret_ciphertext"), v.hex(t, p, "application_ciphertext")); err == nil {
		t.Error("completion accepted against a different commitment")
	}
	// Records swapped (application first) must not open.
	if _, err := key.openPairingCompletion(did, cid, v.hex(t, p, "commitment"), v.hex(t, p, "enc"), v.hex(t, p, "application_ciphertext"), v.hex(t, p, "secret_ciphertext")); err == nil {
		t.Error("records accepted out of order")
	}
}
