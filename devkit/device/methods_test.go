// SecretList, SecretUpload and PairingRemove on the device side
// (client-device protocol, those sections).
package device

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

func TestSecretListIsMetadataOnly(t *testing.T) {
	h := newHarness(t)
	keys := h.secrets()
	c := h.pair()
	x := c.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	x.deliver()
	raw := x.rawResponse(1)
	res, _ := x.open(raw)
	got := mustJSON(t, res["secrets"])
	want := mustJSON(t, map[string]any{
		"github":    map[string]any{"description": "GitHub API access", "type": "environment", "variables": []string{"GH_HOST", "GH_TOKEN"}},
		"cloud":     map[string]any{"type": "environment", "variables": []string{"A", "B", "C"}},
		"samehost":  map[string]any{"type": "environment", "variables": []string{"GH_HOST"}},
		"otherhost": map[string]any{"type": "environment", "variables": []string{"GH_HOST"}},
		"sshkey":    map[string]any{"description": "deploy key", "type": "ssh", "public_key": keys["sshkey"]},
		"rsakey":    map[string]any{"type": "ssh", "public_key": keys["rsakey"]},
	})
	var g, w any
	json.Unmarshal(got, &g)
	json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("SecretList\n got %s\nwant %s", got, want)
	}
	if bytes.Contains(got, []byte("tok-123")) || bytes.Contains(got, []byte("PRIVATE")) {
		t.Fatal("SecretList leaked a value")
	}
	if h.appr.count("") != 1 { // only the pairing
		t.Fatal("SecretList asked for approval")
	}
	x.complete(nil)
}

func TestSecretUploadQueue(t *testing.T) {
	h := newHarness(t)
	keys := h.secrets()
	c := h.pair()
	upload := func(mode string, secret map[string]any) map[string]any {
		t.Helper()
		res, ok, x := c.callRaw(body(t, "SecretUpload", map[string]any{"mode": mode, "secret": secret}))
		if !ok {
			t.Fatalf("upload: unprotected %v", res)
		}
		fields := map[string]any{"result": res["result"]}
		if res["message"] != nil {
			fields["message"] = res["message"]
		}
		x.complete(fields)
		return res
	}
	vars := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = map[string]string{"value": kv[i+1]}
		}
		return m
	}
	rejectedWith := func(res map[string]any) {
		t.Helper()
		if res["result"] != "REJECTED" || res["message"] == "" {
			t.Fatalf("want REJECTED with a message, got %v", res)
		}
	}
	if res := upload("CREATE", map[string]any{"name": "npm", "description": "npm token", "type": "environment", "variables": vars("NPM_TOKEN", "n1")}); res["result"] != "RECEIVED" {
		t.Fatalf("CREATE: %v", res)
	}
	if res := upload("CREATE", map[string]any{"name": "github", "type": "environment", "variables": vars("GH_TOKEN", "new")}); res["result"] != "RECEIVED" {
		t.Fatalf("CREATE over an existing name: %v", res)
	}
	if res := upload("UPDATE", map[string]any{"name": "github", "description": "", "type": "environment", "variables": vars("GH_TOKEN", "tok-456", "GH_USER", "me")}); res["result"] != "RECEIVED" {
		t.Fatalf("UPDATE: %v", res)
	}
	if res := upload("REPLACE", map[string]any{"name": "cloud", "type": "environment", "variables": vars("Z", "26")}); res["result"] != "RECEIVED" {
		t.Fatalf("REPLACE: %v", res)
	}
	rejectedWith(upload("UPDATE", map[string]any{"name": "missing", "type": "environment", "variables": vars("A", "1")}))
	rejectedWith(upload("REPLACE", map[string]any{"name": "missing", "type": "environment", "variables": vars("A", "1")}))
	rejectedWith(upload("UPDATE", map[string]any{"name": "sshkey", "type": "environment", "variables": vars("A", "1")}))
	rejectedWith(upload("CREATE", map[string]any{"name": "empty", "type": "environment", "variables": map[string]any{}}))
	rejectedWith(upload("CREATE", map[string]any{"name": "bad var", "type": "environment", "variables": vars("A", "1")}))
	rejectedWith(upload("CREATE", map[string]any{"name": "x", "type": "environment", "variables": vars("A=B", "1")}))
	rejectedWith(upload("MERGE", map[string]any{"name": "x", "type": "environment", "variables": vars("A", "1")}))
	rejectedWith(upload("CREATE", map[string]any{"name": "x", "type": "password", "variables": vars("A", "1")}))
	rejectedWith(upload("CREATE", map[string]any{"name": "x", "type": "ssh", "private_key": "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"}))
	rejectedWith(upload("CREATE", map[string]any{"name": "x", "type": "ssh"}))
	if res := c.call("SecretUpload", map[string]any{"secret": map[string]any{"name": "x", "type": "environment"}}); res["error"] != "INVALID_REQUEST" {
		t.Fatalf("upload without mode: %v", res)
	}
	if keygen, err := exec.LookPath("ssh-keygen"); err == nil {
		dir := t.TempDir()
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "secret-pass", "-C", "", "-f", filepath.Join(dir, "k")).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		enc := readFile(t, filepath.Join(dir, "k"))
		rejectedWith(upload("CREATE", map[string]any{"name": "enc", "type": "ssh", "private_key": string(enc)}))
	}
	if res := upload("CREATE", map[string]any{"name": "signing", "type": "ssh", "private_key": string(testRSAKey(t))}); res["result"] != "RECEIVED" {
		t.Fatalf("ssh CREATE: %v", res)
	}
	if h.appr.count("") != 1 {
		t.Fatal("uploads asked for approval")
	}

	ups, err := ListUploads(h.dir)
	if err != nil || len(ups) != 5 {
		t.Fatalf("uploads %+v, %v", ups, err)
	}
	for _, u := range ups {
		if u.ClientID != c.clientID.String() || u.ID == "" || u.ReceivedAt.IsZero() {
			t.Fatalf("upload info %+v", u)
		}
		if u.Name == "signing" && u.PublicKey != keys["rsakey"] {
			t.Fatalf("ssh upload public key %q", u.PublicKey)
		}
		if u.Name == "npm" && (u.Description != "npm token" || !reflect.DeepEqual(u.Variables, []string{"NPM_TOKEN"})) {
			t.Fatalf("npm upload %+v", u)
		}
	}
	// Nothing applies before a person accepts.
	if s := secretMap(t, h.dir); s["npm"].Name != "" || !reflect.DeepEqual(s["github"].Variables, []string{"GH_HOST", "GH_TOKEN"}) {
		t.Fatal("upload applied before acceptance")
	}
	for _, u := range ups {
		if u.Name == "signing" {
			if err := RejectUpload(h.dir, u.ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := AcceptUpload(h.dir, u.ID); err != nil {
			t.Fatalf("accept %s: %v", u.Name, err)
		}
	}
	s := secretMap(t, h.dir)
	if s["npm"].Description != "npm token" || !reflect.DeepEqual(s["github-2"].Variables, []string{"GH_TOKEN"}) || s["signing"].Name != "" {
		t.Fatalf("after accept: %+v", s)
	}
	if !reflect.DeepEqual(s["github"].Variables, []string{"GH_HOST", "GH_TOKEN", "GH_USER"}) || s["github"].Description != "" {
		t.Fatalf("UPDATE result %+v", s["github"])
	}
	if !reflect.DeepEqual(s["cloud"].Variables, []string{"Z"}) {
		t.Fatalf("REPLACE result %+v", s["cloud"])
	}
	res := c.call("Invocation", invocationFields(map[string]any{"github": env(map[string]any{"only": []string{"GH_TOKEN"}})}))
	if v := res["secrets"].(map[string]any)["github"].(map[string]any)["variables"].(map[string]any)["GH_TOKEN"].(map[string]any)["value"]; v != "tok-456" {
		t.Fatalf("updated value not served: %v", v)
	}
	if ups, _ := ListUploads(h.dir); len(ups) != 0 {
		t.Fatalf("queue not empty: %+v", ups)
	}
	if err := AcceptUpload(h.dir, "nope"); err == nil {
		t.Fatal("accepting an unknown upload succeeded")
	}
}

func secretMap(t *testing.T, dir string) map[string]SecretInfo {
	t.Helper()
	list, err := ListSecrets(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]SecretInfo{}
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

func TestPairingRemove(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	c := h.pair()
	inv := approvedInvocation(t, c, "sshkey")
	res, ok, x := c.callRaw(body(t, "PairingRemove", nil))
	if !ok || len(res) != 0 {
		t.Fatalf("PairingRemove: %v", res)
	}
	if b := h.binding(c); b.State != bindRevoked || b.PSK != nil {
		t.Fatalf("binding after removal %+v", b)
	}
	if readState(t, h.dir).Invocations[inv] != nil {
		t.Fatal("removed client's invocation kept")
	}
	// The relay learns of it once the client has completed.
	for _, e := range h.pub.snapshot() {
		if e.state == relay.ClientRevoked {
			t.Fatal("relay told revoked before the completion")
		}
	}
	x.complete(nil)
	h.pub.waitFor(t, 1, func(e published) bool { return e.state == relay.ClientRevoked && e.clientID == c.clientID.String() })
	y := c.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	y.deliver()
	if code := clearCode(t, y.rawResponse(1)); code != clearNotPaired {
		t.Fatalf("request after removal: %q", code)
	}
	clients, _ := ListClients(h.dir)
	if len(clients) != 1 || clients[0].State != "revoked" {
		t.Fatalf("clients %+v", clients)
	}
}

func TestRevokeAndClientStore(t *testing.T) {
	h := newHarness(t)
	c := h.pair()
	store := h.dev.ClientStore()
	recs := []relay.ClientRecord{
		{DeviceID: h.dev.DeviceID(), ClientID: c.clientID.String(), TokenHash: "aa", State: relay.ClientPending, CreatedAt: time.Unix(1, 0).UTC()},
		{DeviceID: h.dev.DeviceID(), ClientID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", TokenHash: "bb", State: relay.ClientPending, CreatedAt: time.Unix(2, 0).UTC()},
	}
	if err := store.Save(recs); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load()
	if err != nil || len(got) != 2 || got[0].State != relay.ClientActive || got[1].State != relay.ClientPending || got[1].TokenHash != "bb" {
		t.Fatalf("load %+v, %v (an active binding makes its record active)", got, err)
	}
	if err := h.dev.Revoke(c.clientID.String()); err != nil {
		t.Fatal(err)
	}
	h.pub.waitFor(t, 1, func(e published) bool { return e.state == relay.ClientRevoked && e.clientID == c.clientID.String() })
	// A relay that saves its stale view cannot undo the revocation.
	if err := store.Save(recs); err != nil {
		t.Fatal(err)
	}
	got, _ = store.Load()
	if got[0].State != relay.ClientRevoked {
		t.Fatalf("revocation lost: %+v", got[0])
	}
	x := c.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	x.deliver()
	if code := clearCode(t, x.rawResponse(1)); code != clearNotPaired {
		t.Fatalf("request after revoke: %q", code)
	}
	if err := RevokeClient(h.dir, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); err == nil {
		t.Fatal("revoking an unknown client succeeded")
	}
}
