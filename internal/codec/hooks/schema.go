package hooks

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// ProtocolVersion is the Agent Hooks Protocol version this codec implements, as it appears in
// protocolVersion on the wire. Matching is exact.
const ProtocolVersion = "0.1"

// reverseDNSPattern is the reverse-DNS name pattern of the v0.1 schemas
// (extensions.schema.json), used for extension keys, deny codes, extension effects and backend
// ids. isReverseDNS matches it by hand; a test holds the two together.
const reverseDNSPattern = `^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`

// isReverseDNS reports whether s matches reverseDNSPattern: two or more dot-separated
// labels, each a letter followed by letters, digits, '_' or '-'. It runs for every extension key
// of every message, where the regexp engine costs more than the rest of the check.
func isReverseDNS(s string) bool {
	labels, labelStart := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		switch {
		case labelStart:
			if !letter {
				return false
			}
			labels++
			labelStart = false
		case c == '.':
			labelStart = true
		case !letter && !(c >= '0' && c <= '9') && c != '_' && c != '-':
			return false
		}
	}
	return labels >= 2 && !labelStart
}

// maxSafeInteger bounds integers (ids, timeouts) to what every SDK can represent exactly.
const maxSafeInteger = 1<<53 - 1

// safeInteger reads a JSON number holding an integer within ±(2^53-1). Fraction and exponent
// forms ("1.0", "1e3") count when their value is integral, as JSON Schema's "integer" has it.
func safeInteger(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, i >= -maxSafeInteger && i <= maxSafeInteger
	}
	// big.Rat decides exactly, but would build 10^e for any exponent e; no safe integer needs a
	// long literal or a large exponent, so those are refused first.
	if len(s) > 64 {
		return 0, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil || exp < -64 || exp > 64 {
			return 0, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	i := r.Num().Int64()
	return i, i >= -maxSafeInteger && i <= maxSafeInteger
}
