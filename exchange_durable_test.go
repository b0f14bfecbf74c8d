// Tests of exchange_durable.go: a stored request rebuilds the identical
// envelope in another process, and the record is kept, reused and removed
// as the rules say.

package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestOutstandingRequestRebuildsTheIdenticalEnvelope(t *testing.T) {
	home := t.TempDir()
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	p := &pairingState{Pending: true, DeviceID: dev.id, ClientID: keys.ClientID, ClientToken: "ERERERERERERERERERERERERERERERERERERERERERE",
		ClientPSK: keys.PSK, DeviceKey: dev.pk, RotatedAt: 1700000000}
	s, err := lockStateDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.writePairing(p); err != nil {
		t.Fatal(err)
	}
	s.unlock()

	envelope := func() ([]byte, *outstandingRequest) {
		rec, err := outstandingFor(home, p, methodPairingFinish, "agentknock pairing finish", newMethodRequest(methodPairingFinish))
		if err != nil {
			t.Fatal(err)
		}
		rnd, err := newSeedStream(rec.Seed)
		if err != nil {
			t.Fatal(err)
		}
		k := keys
		k.PSK = rec.PSK
		x, payload, err := sealProtectedPlaintext(rnd, k, rec.RequestID, nil, rec.Plaintext)
		if err != nil {
			t.Fatal(err)
		}
		if _, pt := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x); !bytes.Contains(pt, []byte(`"method":"PairingFinish"`)) {
			t.Fatalf("the device opens %q", pt)
		}
		b, _ := json.Marshal(payload)
		return b, rec
	}
	first, rec1 := envelope()
	if rec1.resent {
		t.Fatal("a new record is marked as resent")
	}
	// What a rerun after kill -9 does: the same record, the same bytes.
	second, rec2 := envelope()
	if !rec2.resent || rec2.RequestID != rec1.RequestID || !bytes.Equal(first, second) {
		t.Fatalf("the rerun sent a different request:\n%s\n%s", first, second)
	}
	stored, err := readPairingFile(home)
	if err != nil || stored.Outstanding == nil || stored.Outstanding.RequestID != rec1.RequestID {
		t.Fatalf("pairing.json holds %+v (%v)", stored, err)
	}
	// Answered: the record goes, and the next request is a new one.
	if err := clearOutstanding(home, rec1.RequestID); err != nil {
		t.Fatal(err)
	}
	third, rec3 := envelope()
	if rec3.RequestID == rec1.RequestID || bytes.Equal(third, first) {
		t.Fatal("a cleared record was reused")
	}
}
