package bridge

import (
	"strings"
	"unicode"
)

// redactedText replaces a value that looks like a credential.
const redactedText = "<redacted>"

// Agent Harness Protocol errors copy the reference's serde texts, and those echo the offending
// value ("invalid type: string \"…\", expected u32", "unknown variant `…`"). The bridge keeps that
// wording byte for byte, except that a value which looks like a credential is replaced by
// <redacted>: an error message travels to the harness, its logs and ours, and must not spread a
// secret that was put in the wrong field. The values of every recorded reference vector are short
// words and numbers, which are kept.

// credentialPrefixes start well-known token formats (OpenAI/Anthropic/Stripe keys, GitHub,
// GitLab, Slack, npm and Hugging Face tokens, AWS access key ids, Google API keys, JWTs, PEM).
var credentialPrefixes = []string{
	"sk-", "sk_", "rk_", "pk_live_", "pk_test_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "npm_", "hf_", "AKIA", "ASIA", "AIza", "eyJ",
	"-----BEGIN",
}

// isTokenRune reports whether r can be part of one credential-like word.
func isTokenRune(r rune) bool {
	return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-+/=.~:", r))
}

// redact replaces every credential-like word of s, and the word after "Bearer"/"Basic", with
// <redacted>.
func redact(s string) string {
	var (
		out       strings.Builder
		changed   bool
		afterAuth bool
	)
	i := 0
	for i < len(s) {
		if !isTokenRune(rune(s[i])) {
			out.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenRune(rune(s[j])) {
			j++
		}
		word := s[i:j]
		switch {
		case afterAuth || looksLikeCredential(word):
			out.WriteString(redactedText)
			changed = true
			afterAuth = false
		default:
			afterAuth = strings.EqualFold(word, "bearer") || strings.EqualFold(word, "basic")
			out.WriteString(word)
		}
		i = j
	}
	if !changed {
		return s
	}
	return out.String()
}

// looksLikeCredential is a deliberately simple detector: a known token prefix, a long run of
// digits (a card or account number), a long hex string, or a long mix of upper case, lower case
// and digits, which ordinary identifiers and messages are not.
func looksLikeCredential(w string) bool {
	w = strings.Trim(w, ".:=")
	if len(w) < 12 {
		return false
	}
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	var upper, lower, digit, hex, other int
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			digit++
			hex++
		case r >= 'a' && r <= 'f':
			lower++
			hex++
		case r >= 'A' && r <= 'F':
			upper++
			hex++
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		default:
			other++
		}
	}
	switch {
	case digit == len(w) || (strings.HasPrefix(w, "-") && digit == len(w)-1):
		return digit >= 13
	case hex == len(w):
		return len(w) >= 24 && digit >= 4 && digit < len(w)
	}
	return len(w) >= 20 && upper >= 2 && lower >= 2 && digit >= 2
}
