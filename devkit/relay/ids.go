// Identifier syntax for the client-relay protocol v1 ("Identifiers" in
// docs/client-relay-protocol.md): canonical ULIDs, address ids, client
// tokens, and the request-id admission window.

package relay

import (
	"encoding/base64"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// crockfordValue maps an uppercase Crockford character to its value, -1 for
// anything else. Lowercase and the I/L/O/U aliases are rejected on purpose:
// the protocol admits only the canonical form.
var crockfordValue = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(crockford); i++ {
		t[crockford[i]] = int8(i)
	}
	return t
}()

// validULID reports whether s is a canonical ULID: [0-7][0-9A-HJKMNP-TV-Z]{25}.
func validULID(s string) bool {
	if len(s) != 26 || s[0] < '0' || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if crockfordValue[s[i]] < 0 {
			return false
		}
	}
	return true
}

// ulidTime returns the Unix-millisecond timestamp in the top 48 bits of a
// canonical ULID. The first ten characters carry 50 bits, of which the
// first character's range 0-7 leaves exactly 48.
func ulidTime(s string) time.Time {
	var ms int64
	for i := 0; i < 10; i++ {
		ms = ms<<5 | int64(crockfordValue[s[i]])
	}
	return time.UnixMilli(ms)
}

// validAddressID reports whether s is 32 lowercase hexadecimal characters.
func validAddressID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validNewToken reports whether a token offered for a new pairing attempt
// has the v1 form: 32 random bytes as unpadded base64url. Existing records
// are matched by hash only, so this applies when a record is created.
func validNewToken(s string) bool {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return err == nil && len(b) == 32
}

// admissible applies the request-id admission window to an id that would
// create new relay state. Retries that find retained state skip it.
func (r *Relay) admissible(requestID string, now time.Time) bool {
	t := ulidTime(requestID)
	return !t.Before(now.Add(-r.maxAge)) && !t.After(now.Add(r.maxAhead))
}
