// Fuzz target for the device's validation of protected request plaintexts
// (client-device protocol, "Paired exchanges" and "Invocation",
// "SshAuthenticate", "Initial pairing"): the common head, the Invocation
// shape and routing against a store, the SSH user-authentication message
// and pairing metadata. Seeds are the requests the client sends.
package device

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func FuzzDeviceRequest(f *testing.F) {
	sec := invocationFields
	for _, s := range []map[string]any{
		sec(map[string]any{"github": map[string]any{}}),
		sec(map[string]any{"github": env(map[string]any{"only": []string{"GH_HOST", "GH_TOKEN"}, "rename": map[string]string{"GH_HOST": "GITHUB_HOST"}, "stdin": "GH_TOKEN"})}),
		sec(map[string]any{"github": env(map[string]any{"omit": []string{"GH_HOST"}}), "cloud": map[string]any{}}),
		sec(map[string]any{"sshkey": map[string]any{"ssh": map[string]any{}}}),
	} {
		f.Add(body(f, "Invocation", s))
	}
	f.Add(body(f, "SecretList", nil))
	f.Add(body(f, "PairingFinish", nil))
	f.Add([]byte(`{"app_info":{"name":"agentknock","version":"0.1.0"},"lib_info":{"name":"agentknock","version":"0.1.0"},"platform":"linux","architecture":"x86_64","hostname":"build","os_version":"6.1"}`))
	str := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...) }
	ua := str(nil, "session-id-bytes")
	ua = append(ua, 50)
	ua = str(str(str(ua, "git"), "ssh-connection"), "publickey")
	ua = append(ua, 1)
	ua = str(str(ua, "ssh-ed25519"), "\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"+strings.Repeat("k", 32))
	f.Add(ua)
	store := map[string]*storedSecret{
		"github":    {Type: "environment", Variables: map[string]string{"GH_HOST": "github.com", "GH_TOKEN": "sv-leak-token"}},
		"cloud":     {Type: "environment", Variables: map[string]string{"A": "1", "B": "2"}},
		"samehost":  {Type: "environment", Variables: map[string]string{"GH_HOST": "github.com"}},
		"otherhost": {Type: "environment", Variables: map[string]string{"GH_HOST": "example.com"}},
	}
	f.Fuzz(func(t *testing.T, pt []byte) {
		_, _ = parseHead(pt)
		if _, err := parsePairingMetadata(pt); err != nil && strings.Contains(err.Error(), "sv-leak") {
			t.Fatal(err)
		}
		if u, err := parseUserauth(pt); err == nil {
			if len(u.sessionID) == 0 || len(u.key) == 0 || (u.method != methodPublickey && u.method != methodHostbound) {
				t.Fatalf("accepted user-auth %+v", u)
			}
		}
		inv, err := parseInvocation(pt)
		if err != nil {
			var m malformed
			var r ruleError
			if !errors.As(err, &m) && !errors.As(err, &r) {
				t.Fatalf("unclassified failure %T %v", err, err)
			}
			return
		}
		if len(inv.token) != 32 || inv.details == nil {
			t.Fatalf("accepted %+v", inv)
		}
		rt, err := route(inv, store)
		if err != nil {
			if strings.Contains(err.Error(), "sv-leak") {
				t.Fatalf("routing error shows a value: %v", err)
			}
			return
		}
		for name := range rt.secrets {
			if !bytes.Contains(pt, []byte(`"`+name+`"`)) {
				t.Fatalf("routed secret %q that was not requested", name)
			}
		}
	})
}
