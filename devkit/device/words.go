// Pairing addresses (cryptosystem §6): three random words from a list of
// short, common, unambiguous English words, joined by '-'. The address is a
// low-entropy routing name, not a secret that protects pairing (the SAS
// does); the list size only makes accidental collisions unlikely.
package device

import (
	"crypto/rand"
	"math/big"
	"strings"
)

var addressWords = strings.Fields(`
able acid aged also area army away baby back ball band bank base bath bear
beat bell belt bend best bird bite blue boat body bold bone book boot born
boss both bowl bulk burn bush busy cake calm camp card care cart case cash
cast cave cell chef chin city clay clip club coal coat code coin cold comb
cook cool copy cord corn cost crew crop cube cure dark dash date dawn deal
deer desk dial dice dish dock door dove down draw drum duck dune dust duty
earn east easy echo edge even exit face fact fair fall farm fast fern film
fine fire fish five flag flat flow foam fold folk food foot fork form fort
four free frog fuel full fund gain game gate gear gift girl glad glow goal
gold golf good gown grid grin grip grow gulf hair half hall hand harp hawk
head heat herb hero high hill hint hive hold home hood hook hope horn host
hour huge hunt idea inch iron item jade jazz join joke jump jury keen kept
kind king kite knee knot lace lake lamp land lane last lawn leaf lean left
lens life lift lily lime line link lion list loaf long loop lord loud love
luck lung made mail main mall mane many maple mark mask mast math meal melt
menu mild milk mill mind mint mist mode mole moon moss most moth move much
nail name navy near neat neck nest news next nice nine node noon nose note
oak oats ocean odd oil olive open oven over pace page pair palm park part
pass path peak pear pine pink pipe plan plot plum poem pole pond pony pool
port pose post pour pull pump pure quiz race rack raft rail rain ramp rare
reef rest rice rich ride ring ripe rise road rock roof room root rope rose
ruby rule rush safe sage sail salt sand save seal seed shoe shop side sign
silk sing sink size skip slow snow soap sock soft soil song soup spin spot
star stem step stew sun swan tail tale tall tank tape task team tent test
tide tile time tiny tool town tree trim trip tube tune twin vast vine vote
wave wide wild wind wing wise wolf wood wool word work yard yarn year yoga
zero zinc zone
`)

// newAddress picks three words with a uniform CSPRNG choice each.
func newAddress() string {
	n := big.NewInt(int64(len(addressWords)))
	w := make([]string, 3)
	for i := range w {
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err)
		}
		w[i] = addressWords[k.Int64()]
	}
	return strings.Join(w, "-")
}

// validAddress is `[a-z]+(-[a-z]+)*`, byte-exact.
func validAddress(s string) bool {
	if s == "" {
		return false
	}
	for _, w := range strings.Split(s, "-") {
		if w == "" {
			return false
		}
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return false
			}
		}
	}
	return true
}
