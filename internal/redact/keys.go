package redact

import "bytes"

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
	return false
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
