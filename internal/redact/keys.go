package redact

import (
	"bytes"
	"strings"
)

// secretWords are matched against JSON object keys after normalisation (ASCII lower case, without
// '_', '-', '.' and spaces): a key containing one of them names a secret, whatever its value looks
// like ("DB_PASSWORD", "x-api-key", "aws_session_token", "Set-Cookie").
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey", "credential",
	"authorization", "cookie", "accesskey", "signingkey", "encryptionkey", "masterkey",
}

// secretNames are whole normalised key names that name a secret but are too short to match as
// parts of other names ("auth" would match "author").
var secretNames = []string{"auth", "jwt", "bearer"}

// secretSuffixes are last parts of a name that make it name a secret when something comes before
// them (GITHUB_PAT, STRIPE_KEY, sendgridKey); alone, "key" and "pat" are too common.
var secretSuffixes = []string{"key", "pat"}

// plainKeyQualifiers are the parts before "key" in well-known names of keys that are not secret
// (sort_key, publicKey, primary_key, idempotency_key).
var plainKeyQualifiers = []string{
	"public", "primary", "foreign", "sort", "partition", "range", "row", "cache", "idempotency",
	"dedupe", "object", "routing", "group",
}

// secretSuffix reports whether name ends in a part from secretSuffixes after at least one other
// part, parts being separated by '_', '-', '.', ' ' or a change from lower to upper case, and is
// not a well-known non-secret name.
func secretSuffix(name string) bool {
	last, rest := lastPart(name)
	if rest == "" || !containsFold(secretSuffixes, last) {
		return false
	}
	qualifier, _ := lastPart(rest)
	return !containsFold(plainKeyQualifiers, qualifier)
}

// containsFold reports whether list holds s, ignoring case.
func containsFold(list []string, s string) bool {
	for _, w := range list {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

// lastPart splits name into its last part (letters and digits) and what comes before it, without
// the separator in between. rest is empty when nothing but a separator, or nothing at all, comes
// before the part, or when another character does ("a:key" is not a name of parts).
func lastPart(name string) (part, rest string) {
	i := len(name)
	for i > 0 && isAlnum(name[i-1]) {
		i--
		if i > 0 && isUpper(name[i]) && 'a' <= name[i-1] && name[i-1] <= 'z' {
			return name[i:], name[:i] // camelCase boundary
		}
	}
	part = name[i:]
	if i == 0 || strings.IndexByte("_-. ", name[i-1]) < 0 {
		return part, ""
	}
	return part, strings.TrimRight(name[:i], "_-. ")
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// keyMatcher decides whether an object key names a secret.
type keyMatcher struct {
	words [][]byte
	names []string
}

func newKeyMatcher(extra []string) keyMatcher {
	m := keyMatcher{names: secretNames}
	for _, w := range secretWords {
		m.words = append(m.words, []byte(w))
	}
	var buf [64]byte
	for _, w := range extra {
		if n := normaliseKey(w, &buf); len(n) > 0 {
			m.words = append(m.words, append([]byte(nil), n...))
		}
	}
	return m
}

// secret reports whether key names a secret.
func (m keyMatcher) secret(key string) bool {
	if len(key) < 3 {
		return false
	}
	var buf [64]byte
	n := normaliseKey(key, &buf)
	for _, w := range m.words {
		if bytes.Contains(n, w) {
			return true
		}
	}
	for _, w := range m.names {
		if string(n) == w {
			return true
		}
	}
	return secretSuffix(key)
}

// normaliseKey writes key into buf in ASCII lower case without separators ('_', '-', '.', ' '). A
// longer key keeps its first len(buf) normalised bytes.
func normaliseKey(key string, buf *[64]byte) []byte {
	n := 0
	for i := 0; i < len(key) && n < len(buf); i++ {
		c := key[i]
		switch {
		case 'A' <= c && c <= 'Z':
			buf[n] = c + 'a' - 'A'
			n++
		case c == '_' || c == '-' || c == '.' || c == ' ':
		default:
			buf[n] = c
			n++
		}
	}
	return buf[:n]
}
