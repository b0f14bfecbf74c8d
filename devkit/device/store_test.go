// The device state directory: modes, atomic writes, the lock.
package device

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkModes requires 0700 on the directory and 0600 on every file in it,
// and no temporary file left behind.
func checkModes(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %04o", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		info, _ := e.Info()
		if !info.IsDir() && info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %04o", e.Name(), info.Mode().Perm())
		}
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestInitIdempotentAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "state")
	addr, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-z]+-[a-z]+-[a-z]+$`).MatchString(addr) {
		t.Fatalf("address %q", addr)
	}
	id1 := readFile(t, filepath.Join(dir, identityFile))
	addr2, err := Init(dir)
	if err != nil || addr2 != addr {
		t.Fatalf("second Init: %q, %v", addr2, err)
	}
	if string(readFile(t, filepath.Join(dir, identityFile))) != string(id1) {
		t.Fatal("Init rewrote the identity")
	}
	if err := SetEnvSecret(dir, "demo", "", map[string]string{"X": "1"}); err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
	var id identity
	json.Unmarshal(id1, &id)
	if _, err := parseULID(id.DeviceID); err != nil || len(id.PrivateKey) != 32 || len(id.PublicKey) != 32 || id.DeviceToken == "" {
		t.Fatalf("identity %+v", id)
	}
	dev, err := Open(Options{StateDir: dir, Approver: newApprover()})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if dev.Address() != addr || dev.DeviceID() != id.DeviceID || dev.AddressID() != fmt.Sprintf("%x", addressID(addr)) {
		t.Fatalf("device %s %s %s", dev.Address(), dev.DeviceID(), dev.AddressID())
	}

	// Others must not read it: a widened directory is refused, and Init
	// tightens it again.
	os.Chmod(dir, 0o755)
	if _, err := Open(Options{StateDir: dir, Approver: newApprover()}); err == nil {
		t.Fatal("Open accepted a state directory readable by others")
	}
	if _, err := ListSecrets(dir); err == nil {
		t.Fatal("ListSecrets accepted a state directory readable by others")
	}
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
	if _, err := Open(Options{StateDir: filepath.Join(t.TempDir(), "none"), Approver: newApprover()}); err == nil {
		t.Fatal("Open of a missing directory succeeded")
	}
}

func TestAtomicWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	if err := WriteFileAtomic(dir, "f", []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dir, "f", []byte("new contents")); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, filepath.Join(dir, "f"))); got != "new contents" {
		t.Fatalf("got %q", got)
	}
	// A failed write (the target is a directory) leaves no temp file.
	os.Mkdir(filepath.Join(dir, "d"), 0o700)
	if err := WriteFileAtomic(dir, "d", []byte("x")); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	checkModes(t, dir)
}

func TestLockPreventsLostUpdates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := SetEnvSecret(dir, fmt.Sprintf("s%02d", i), "", map[string]string{"V": "x"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list, err := ListSecrets(dir)
	if err != nil || len(list) != 24 {
		t.Fatalf("%d secrets after 24 concurrent writes (%v)", len(list), err)
	}
}

func TestSecretStoreOperations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		vars map[string]string
	}{
		{"", map[string]string{"A": "1"}},
		{"-x", map[string]string{"A": "1"}},
		{"a b", map[string]string{"A": "1"}},
		{"ok", nil},
		{"ok", map[string]string{"A=B": "1"}},
		{"ok", map[string]string{"A": "nul\x00"}},
		{"ok", map[string]string{"A": "\xff"}},
	} {
		if err := SetEnvSecret(dir, bad.name, "", bad.vars); err == nil {
			t.Errorf("SetEnvSecret(%q, %q) accepted", bad.name, bad.vars)
		}
	}
	if err := SetEnvSecret(dir, "zeta", "last", map[string]string{"B": "2", "A": "super-secret-value"}); err != nil {
		t.Fatal(err)
	}
	edPub, err := GenerateSSHSecret(dir, "ed", "generated", "ed25519")
	if err != nil || !strings.HasPrefix(edPub, "ssh-ed25519 ") {
		t.Fatalf("generate ed25519: %q %v", edPub, err)
	}
	if _, err := GenerateSSHSecret(dir, "dsa", "", "dsa"); err == nil {
		t.Fatal("unknown key type accepted")
	}
	list, err := ListSecrets(dir)
	if err != nil || len(list) != 2 || list[0].Name != "ed" || list[1].Name != "zeta" {
		t.Fatalf("list %+v %v", list, err)
	}
	if list[0].Type != "ssh" || list[0].PublicKey != edPub || list[1].Type != "environment" || strings.Join(list[1].Variables, ",") != "A,B" {
		t.Fatalf("list %+v", list)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), "super-secret-value") || strings.Contains(string(b), "PRIVATE") {
		t.Fatal("listing leaked a value")
	}
	// The stored key signs as the listed public key.
	var ss secretStore
	json.Unmarshal(readFile(t, filepath.Join(dir, secretsFile)), &ss)
	k, err := ss.Secrets["ed"].sshKey()
	if err != nil || k.publicKey != edPub {
		t.Fatalf("stored key: %v", err)
	}
	if err := RemoveSecret(dir, "ed"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSecret(dir, "ed"); err == nil {
		t.Fatal("removing a missing secret succeeded")
	}
	checkModes(t, dir)
}

func TestGenerateRSA(t *testing.T) {
	if testing.Short() {
		t.Skip("RSA-3072 generation is slow")
	}
	dir := filepath.Join(t.TempDir(), "s")
	Init(dir)
	pub, err := GenerateSSHSecret(dir, "r", "", "rsa")
	if err != nil {
		t.Fatal(err)
	}
	pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pub))
	if err != nil || pk.Type() != "ssh-rsa" {
		t.Fatalf("%q %v", pub, err)
	}
	if bits := pk.(ssh.CryptoPublicKey).CryptoPublicKey(); fmt.Sprint(bits) == "" {
		t.Fatal("no key")
	}
	var ss secretStore
	json.Unmarshal(readFile(t, filepath.Join(dir, secretsFile)), &ss)
	k, err := ss.Secrets["r"].sshKey()
	if err != nil {
		t.Fatal(err)
	}
	if n := k.signer.PublicKey().(ssh.CryptoPublicKey).CryptoPublicKey(); fmt.Sprintf("%T", n) != "*rsa.PublicKey" {
		t.Fatalf("%T", n)
	}
}

func TestImportSSHKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	Init(dir)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	blk, _ := ssh.MarshalPrivateKey(priv, "me@host")
	pub, err := ImportSSHSecret(dir, "k", "", pem.EncodeToMemory(blk))
	want, _ := ssh.NewPublicKey(priv.Public())
	if err != nil || pub != strings.TrimSpace(string(ssh.MarshalAuthorizedKey(want))) {
		t.Fatalf("import: %q %v", pub, err)
	}
	if _, err := ImportSSHSecret(dir, "k", "", []byte("not a key")); err == nil {
		t.Fatal("garbage imported")
	}
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not in PATH")
	}
	kd := t.TempDir()
	for _, tc := range []struct{ typ, pass string }{{"ed25519", ""}, {"rsa", ""}, {"ed25519", "pw"}} {
		f := filepath.Join(kd, tc.typ+tc.pass)
		args := []string{"-q", "-t", tc.typ, "-N", tc.pass, "-C", "c", "-f", f}
		if tc.typ == "rsa" {
			args = append(args, "-b", "2048")
		}
		if out, err := exec.Command(keygen, args...).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen %v: %s", err, out)
		}
		pub, err := ImportSSHSecret(dir, "kg-"+tc.typ+tc.pass, "", readFile(t, f))
		if tc.pass != "" {
			if err == nil || !strings.Contains(err.Error(), "passphrase") {
				t.Fatalf("encrypted key: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("import %s: %v", tc.typ, err)
		}
		wantPub := strings.Join(strings.Fields(string(readFile(t, f+".pub")))[:2], " ")
		if pub != wantPub {
			t.Fatalf("public key %q, ssh-keygen says %q", pub, wantPub)
		}
	}
	// A PEM (non-OpenSSH) private key is refused.
	f := filepath.Join(kd, "pem")
	if out, err := exec.Command(keygen, "-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "", "-f", f).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if _, err := ImportSSHSecret(dir, "pem", "", readFile(t, f)); err == nil {
		t.Fatal("PEM-format key imported")
	}
}

func TestULIDText(t *testing.T) {
	for _, s := range []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "00000000000000000000000000"} {
		u, err := parseULID(s)
		if err != nil || u.String() != s {
			t.Errorf("%s: %v %s", s, err, u)
		}
	}
	for _, s := range []string{"01arz3ndektsv4rrffq69g5fav", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01ARZ3NDEKTSV4RRFFQ69G5FAVV", "01ARZ3NDEKTSV4RRFFQ69G5FAI", "01ARZ3NDEKTSV4RRFFQ69G5FAU"} {
		if _, err := parseULID(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
	u, _ := parseULID("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if u.time().UnixMilli() != 1469922850259 {
		t.Errorf("time %d", u.time().UnixMilli())
	}
	a, b := newULID(u.time()), newULID(u.time())
	if a == b || a.time() != u.time() {
		t.Error("newULID not random or wrong time")
	}
}

func TestAddressWords(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range addressWords {
		if seen[w] || !validAddress(w) || len(w) > 5 {
			t.Errorf("word %q duplicate or invalid", w)
		}
		seen[w] = true
	}
	if len(addressWords) < 300 {
		t.Errorf("only %d words", len(addressWords))
	}
	for _, bad := range []string{"", "a--b", "-a", "a-", "A-b", "a b", "a-b1"} {
		if validAddress(bad) {
			t.Errorf("%q valid", bad)
		}
	}
}

// readState reads every record of state.db, in the layout of the old
// state.json.
func readState(t *testing.T, dir string) *stateDocument {
	t.Helper()
	doc := &stateDocument{Clients: map[string]*binding{}, Pairings: map[string]*pairingAttempt{},
		Exchanges: map[string]*exchange{}, Invocations: map[string]*invocation{}}
	if err := transact(dir, func(tx *txn) error {
		st, err := tx.state()
		if err != nil {
			return err
		}
		st.eachClient(func(b *binding) { doc.Clients[b.ClientID] = b })
		st.eachPairing(func(p *pairingAttempt) { doc.Pairings[p.ClientID] = p })
		each(st, bucketExchanges, func(ex *exchange) { doc.Exchanges[exchangeKey(ex.ClientID, ex.RequestID)] = ex })
		each(st, bucketInvocations, func(inv *invocation) { doc.Invocations[inv.ID] = inv })
		doc.RelayClients = st.relayClients()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return doc
}
