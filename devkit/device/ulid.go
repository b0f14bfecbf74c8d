// ULID identifiers (cryptosystem §5.2, client-device protocol "Binary
// values"): the canonical 26-character Crockford Base32 text form, the 16 raw
// bytes used by the cryptography, fresh generation, and the device freshness
// policy for previously unseen ids.
package device

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// crockfordValue maps an uppercase canonical character to its 5-bit value,
// or 0xff. Lowercase and the ambiguous letters are not canonical, so they
// are rejected rather than folded.
var crockfordValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(crockford); i++ {
		t[crockford[i]] = byte(i)
	}
	return t
}()

type ulid [16]byte

var errBadULID = errors.New("not a canonical ULID")

// parseULID accepts only `[0-7][0-9A-HJKMNP-TV-Z]{25}`.
func parseULID(s string) (ulid, error) {
	var u ulid
	if len(s) != 26 || s[0] > '7' {
		return u, errBadULID
	}
	// 26 characters carry 130 bits; the first character's top two bits
	// are the overflow that s[0] <= '7' excludes.
	var hi, lo uint64
	for i := 0; i < 26; i++ {
		v := crockfordValue[s[i]]
		if v == 0xff {
			return u, errBadULID
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	binary.BigEndian.PutUint64(u[:8], hi)
	binary.BigEndian.PutUint64(u[8:], lo)
	return u, nil
}

func (u ulid) String() string {
	hi := binary.BigEndian.Uint64(u[:8])
	lo := binary.BigEndian.Uint64(u[8:])
	var b [26]byte
	for i := 25; i >= 0; i-- {
		b[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(b[:])
}

func (u ulid) isZero() bool { return u == ulid{} }

// time returns the claimed creation time (the top 48 bits, Unix ms).
func (u ulid) time() time.Time {
	var b [8]byte
	copy(b[2:], u[:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b[:])))
}

// newULID uses the current time and 80 fresh random bits; never monotonic.
func newULID(now time.Time) ulid {
	var u ulid
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(now.UnixMilli()))
	copy(u[:6], b[2:])
	if _, err := rand.Read(u[6:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return u
}

// The device admits a previously unseen request or client id only when its
// claimed time lies in this window around the device clock (the phone app's
// policy). Retained exchange state is pruned only once its id has left the
// window, so a replay can never be taken for a new operation.
const (
	freshBack  = 24 * time.Hour
	freshAhead = 5 * time.Minute
)

func fresh(u ulid, now time.Time) bool {
	t := u.time()
	return !t.Before(now.Add(-freshBack)) && !t.After(now.Add(freshAhead))
}
