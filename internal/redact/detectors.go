package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
)

// A detector finds one kind of secret in free text. There are two shapes, both chosen so that the
// cost of clean text stays close to a few memchr passes and regexp work is proportional to the
// number of candidates rather than to the text length.
//
// An anchored detector has anchors: literals that every match starts with (case-insensitive when
// fold is set). The scanner finds anchors by substring search and runs the regexp, anchored (\A),
// only there.
//
// A keyed detector finds "name <sep> value" assignments. The scanner visits each separator (':'
// or '=') once, reads the name that ends just before it (skipping spaces, a quote and a backslash,
// so JSON, escaped JSON, YAML, env and query strings all work), normalises it (ASCII lower case,
// without '_', '-' and '.') and runs the regexp on the value only when the name ends with one of
// keys (or equals one, when exact is set).
type detector struct {
	// name is the kind in the placeholder: [REDACTED:name].
	name string
	// anchors start every match of an anchored detector; with fold they are lower case and
	// matched ignoring ASCII case.
	anchors []string
	fold    bool
	// keys (normalised) make a keyed detector; seps are the separators it accepts.
	keys  []string
	seps  string
	exact bool
	// suffix also selects names ending in a secret-like part (secretSuffix: GITHUB_PAT, STRIPE_KEY).
	suffix bool
	// re matches at an anchor, or at the value after a separator; it is compiled with a leading \A.
	re *regexp.Regexp
	// groups are the submatches to mask, first non-empty wins; none means the whole match.
	groups []int
	// wordStart requires that the anchor is not preceded by a letter or digit ("task-…" is not an
	// "sk-…" key), unless that letter belongs to a secret already found.
	wordStart bool
	// valid, when set, confirms a candidate; s is the whole text, i the anchor or value start and
	// [a, b) the span to mask.
	valid func(s string, i, a, b int) bool
	// match, when set, replaces re: it returns the span to mask at anchor i (a < 0 for none) and
	// the position before which no later anchor of this detector can start a match.
	match func(s string, i int) (a, b, next int)
	// token marks a detector whose match is a prefix and a run of body characters, the same run
	// for every anchor: then a match also ends every match whose anchor lies wholly inside it
	// (and a run rejected by valid rejects those too), so those anchors are skipped.
	token bool
	// contained says that a match starting inside an earlier match of the same detector ends no
	// later than it (true of values that run to a terminator, and of PEM blocks), so anchors
	// there are skipped. With token, this keeps every scan linear in the length of the text: no
	// input makes the regexps run over the same bytes again and again.
	contained bool
}

// Value patterns of keyed detectors start right after the separator. Values end at the end of the
// line: a name at the end of a line ("auth:\n  enabled: true") is a YAML section, not a secret.
const (
	// quotedOrBare is a JSON string (escaped or not), a single-quoted string or a bare word; a
	// bare credential keeps its scheme word ("token: Bearer [REDACTED:…]").
	quotedOrBare = `[ \t]*(?:\\"((?:[^"\\\r\n]|\\[^"\r\n])*)|"([^"\r\n]*)"?|'([^'\r\n]*)'?|(?:(?i:bearer|basic|token)[ \t]+)?([^\s"'&,;<>(){}\[\]\\]+))`
	// openQuote skips the opening quote of a JSON or quoted value.
	openQuote = `[ \t]*\\?["']?`
)

// builtins are the built-in detectors, most specific first: when two detectors cover the same
// text, the earlier one names the replacement ([REDACTED:kind]). Their regular expressions are
// compiled on first use rather than at package init, which a process that never redacts (a
// per-event bridge) would otherwise pay at every start.
var builtins = sync.OnceValue(newBuiltins)

func newBuiltins() []*detector {
	ds := []*detector{
		{
			// A whole PEM private key block, escaped ("\n") or not. A block whose END line is missing
			// (cut off, or split across fields) is masked to the end of the text.
			name:      "private_key",
			contained: true,
			anchors:   []string{"-----BEGIN"},
			re:        mustAnchored(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?s:.)*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?s:.)*)`),
		},
		{
			name:    "aws_access_key_id",
			anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re:      mustAnchored(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`),
		},
		{
			// An AWS secret key has no recognisable shape of its own (40 base64 characters, like a git
			// object id), so it is found by the name it is assigned to, or by the next detector.
			name: "aws_secret_access_key",
			keys: []string{"awssecretaccesskey", "awssecretkey"},
			seps: ":=",
			re:   mustAnchored(openQuote + `([A-Za-z0-9/+=]{40})`),
		},
		{
			// A bare secret key right after its access key id (a credentials CSV, "id secret", a pair
			// in a list) is found by where it is; Detectors lists the name once.
			name:    "aws_secret_access_key",
			anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			match:   matchAWSSecretAfterID,
		},
		{
			name:    "gcp_api_key",
			anchors: []string{"AIza"},
			re:      mustAnchored(`AIza[0-9A-Za-z_-]{35}`),
		},
		{
			name:    "gcp_oauth_token",
			anchors: []string{"ya29."},
			re:      mustAnchored(`ya29\.[0-9A-Za-z_-]{20,}`),
			token:   true,
		},
		{
			name:    "github_token",
			anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			re:      mustAnchored(`(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`),
			token:   true,
		},
		{
			name:    "gitlab_token",
			anchors: []string{"glpat-"},
			re:      mustAnchored(`glpat-[0-9A-Za-z_-]{20,}`),
			token:   true,
		},
		{
			name:    "npm_token",
			anchors: []string{"npm_"},
			re:      mustAnchored(`npm_[A-Za-z0-9]{36}`),
		},
		{
			name:    "slack_token",
			anchors: []string{"xox", "xapp-"},
			re:      mustAnchored(`(?:xox[abposr]-[0-9A-Za-z-]{10,}|xapp-[0-9]-[0-9A-Za-z-]{10,})`),
			token:   true,
		},
		{
			// The path of a Slack webhook URL is its credential; the host stays readable.
			name:    "slack_webhook",
			anchors: []string{"hooks.slack.com/"},
			re:      mustAnchored(`hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,})`),
			token:   true,
			groups:  []int{1},
		},
		{
			name:    "stripe_key",
			anchors: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"},
			re:      mustAnchored(`(?:[sr]k_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})`),
			token:   true,
		},
		{
			name:    "anthropic_key",
			anchors: []string{"sk-ant-"},
			re:      mustAnchored(`sk-ant-[A-Za-z0-9_-]{20,}`),
			token:   true,
		},
		{
			// OpenAI-style "sk-…" keys. The prefix is short and common in prose and file names, so the
			// candidate must start a word and look random (letters and digits).
			name:      "openai_key",
			anchors:   []string{"sk-"},
			re:        mustAnchored(`sk-[A-Za-z0-9_-]{20,}`),
			token:     true,
			wordStart: true,
			valid:     func(s string, _, a, b int) bool { return lettersAndDigits(s[a:b]) },
		},
		{
			// header.payload.signature in base64url, the header a JSON object ("eyJ"). Matched in code
			// so that a long run of base64url is scanned once, not once per "eyJ" in it.
			name:    "jwt",
			anchors: []string{"eyJ"},
			match:   matchJWT,
		},
		{
			// Keys in Azure connection strings (…;AccountKey=…;).
			name: "azure_key",
			keys: []string{"accountkey", "sharedaccesskey", "sharedaccesssignature", "sharedsecret"},
			seps: "=",
			re:   mustAnchored(`[ \t]*([^;"'\s]+)`),
		},
		{
			// The signature of an Azure SAS URL (…?sv=…&sig=…).
			name:  "azure_sas_signature",
			keys:  []string{"sig"},
			exact: true,
			seps:  "=",
			re:    mustAnchored(`([A-Za-z0-9%+/=]{16,})`),
		},
		{
			// scheme://user:password@host — only the password is masked.
			name:    "url_password",
			anchors: []string{"://"},
			re:      mustAnchored(`://[^\s/?#@:"'<>]*:([^\s/?#@"'<>]+)@`),
			groups:  []int{1},
		},
		{
			// Authorization / Proxy-Authorization headers in any notation (HTTP, curl -H, JSON, YAML).
			// The scheme word stays; the credential is masked.
			name: "authorization",
			keys: []string{"authorization"},
			seps: ":=",
			re:   mustAnchored(`(?i)` + openQuote + `(?:(?:bearer|basic|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)[ \t]+)?([^\s"',;\\]+)`),
		},
		{
			name: "cookie",
			keys: []string{"cookie"},
			seps: ":=",
			re:   mustAnchored(openQuote + `([^"'\r\n\\]+)`),
		},
		{
			// "Bearer <token>" anywhere. Ordinary words are not tokens: a candidate must be long or
			// contain a digit or token punctuation.
			name:    "bearer_token",
			anchors: []string{"bearer"},
			fold:    true,
			re:      mustAnchored(`(?i)bearer\s+([A-Za-z0-9._~+/-]{8,}=*)`),
			groups:  []int{1},
			valid:   func(s string, _, a, b int) bool { return b-a >= 20 || strings.ContainsAny(s[a:b], "0123456789._~+/-=") },
		},
		{
			// "Basic <base64(user:password)>"; must be padded base64 of something with a colon, so
			// "Basic authentication" is left alone.
			name:    "basic_auth",
			anchors: []string{"basic"},
			fold:    true,
			re:      mustAnchored(`(?i)basic\s+([A-Za-z0-9+/]{6,}={0,2})`),
			groups:  []int{1},
			valid:   func(s string, _, a, b int) bool { return basicCredential(s[a:b]) },
		},
		{
			// name=value, name: value, name := value and "name": "value" where the name ends in a
			// secret word (GITHUB_TOKEN=…, db_password: …, "apiKey": "…", client_secret=…) or in a
			// secret-like part (GITHUB_PAT=…, STRIPE_KEY=…). The name must end at the secret word, so
			// max_tokens=100 or token_type=bearer are left alone.
			name: "secret_assignment",
			keys: []string{
				"apikey", "accesskey", "secretkey", "privatekey", "signingkey", "encryptionkey", "masterkey", "clientkey",
				"secret", "token", "password", "passwd", "passphrase", "pwd", "credential", "credentials", "auth",
			},
			suffix: true,
			seps:   ":=",
			re:     mustAnchored(quotedOrBare),
		},
		{
			// Command-line flags with a separate value: --password hunter2, --api-key K, --db-token T.
			// Anchored on the secret word (rarer than "--"); the flag's "--" is checked backwards.
			name:      "secret_flag",
			anchors:   []string{"password", "passwd", "token", "secret", "api-key", "apikey"},
			fold:      true,
			re:        mustAnchored(`(?i)(?:password|passwd|token|secret|api-?key)\s+("[^"]*"|'[^']*'|[^\s"'-][^\s"']*)`),
			groups:    []int{1},
			valid:     func(s string, i, _, _ int) bool { return flagStart(s, i) },
			contained: true, // a value cannot hold another flag's value
		},
	}
	// Report kinds are a bit set (Redactor.text).
	if len(ds) > 63 {
		panic("redact: too many detectors")
	}
	for _, d := range ds {
		if d.keys != nil {
			// A value after a separator inside an earlier value ends at the same terminator.
			d.contained = true
			if d.groups == nil {
				d.groups = []int{1, 2, 3, 4}[:d.re.NumSubexp()]
			}
		}
	}
	return ds
}

// flagStart reports whether the word ending at i (the secret word's start) is a long option:
// "--" and then a letter or digit ("--password", "--db-password", not "---password").
func flagStart(s string, i int) bool {
	j := i
	for j > 0 && i-j <= 42 && (isAlnum(s[j-1]) || s[j-1] == '-') {
		j--
	}
	if j > 0 && (isAlnum(s[j-1]) || s[j-1] == '-') {
		return false // a name too long to be a flag
	}
	return i-j >= 2 && s[j] == '-' && s[j+1] == '-' && (i-j == 2 || isAlnum(s[j+2]))
}

// awsIDLen is the length of an AWS access key id: a four-character prefix and 16 more.
const awsIDLen = 20

// matchAWSSecretAfterID matches the secret key that follows an access key id at i (where the id's
// prefix starts): after one to eight separators, exactly 40 base64 characters in mixed case, as
// AWS secrets are and git object ids (hex) are not.
func matchAWSSecretAfterID(s string, i int) (a, b, next int) {
	if len(s) < i+awsIDLen {
		return -1, -1, len(s)
	}
	for k := i; k < i+awsIDLen; k++ {
		if c := s[k]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return -1, -1, k
		}
	}
	a = i + awsIDLen
	for a < len(s) && a-(i+awsIDLen) < 8 && strings.IndexByte(" \t\r\n,;:|\"'\\", s[a]) >= 0 {
		a++
	}
	b = a
	for b < len(s) && b-a <= 40 && (isAlnum(s[b]) || s[b] == '/' || s[b] == '+') {
		b++
	}
	if a == i+awsIDLen || b-a != 40 || !mixedCase(s[a:b]) {
		return -1, -1, i + 1
	}
	return a, b, b
}

// mixedCase reports whether s holds both upper- and lower-case ASCII letters.
func mixedCase(s string) bool {
	var upper, lower bool
	for i := 0; i < len(s); i++ {
		upper = upper || isUpper(s[i])
		lower = lower || 'a' <= s[i] && s[i] <= 'z'
	}
	return upper && lower
}

// matchJWT matches header.payload.signature at i (where "eyJ" starts), each part base64url, the
// first two at least 11 and 8 characters long.
func matchJWT(s string, i int) (a, b, next int) {
	run := func(j int) int {
		for j < len(s) && isBase64URL(s[j]) {
			j++
		}
		return j
	}
	p1 := run(i)
	// No JWT can start inside the header's run: it would end at the same place, shorter.
	if p1-i < 11 || p1 == len(s) || s[p1] != '.' {
		return -1, -1, p1
	}
	p2 := run(p1 + 1)
	if p2-p1-1 < 8 || p2 == len(s) || s[p2] != '.' {
		return -1, -1, p1 // the payload may itself start a JWT ("eyJ…")
	}
	p3 := run(p2 + 1)
	return i, p3, p2 + 1
}

func isBase64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// mustAnchored compiles a detector pattern that must match at the scan position.
func mustAnchored(pattern string) *regexp.Regexp {
	return regexp.MustCompile(`\A(?:` + pattern + `)`)
}

// lettersAndDigits reports whether s holds both ASCII letters and digits, as random keys do and
// words and dates rarely do.
func lettersAndDigits(s string) bool {
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// basicCredential reports whether s is base64 of "user:password".
func basicCredential(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && strings.IndexByte(string(b), ':') > 0
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// keyBefore writes into buf the normalised name (ASCII lower case, without '_', '-' and '.') that
// ends just before the separator at j, skipping spaces, a closing quote and a backslash in
// between; it keeps the last len(buf) characters of a longer name. raw is the name as written
// (as much of it as was read).
func keyBefore(s string, j int, buf *[64]byte) (key []byte, raw string) {
	i := j
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i > 0 && (s[i-1] == '"' || s[i-1] == '\'') {
		i--
	}
	if i > 0 && s[i-1] == '\\' {
		i--
	}
	end, n := i, len(buf)
	for ; i > 0 && n > 0; i-- {
		c := s[i-1]
		switch {
		case 'A' <= c && c <= 'Z':
			n--
			buf[n] = c + 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			n--
			buf[n] = c
		case c == '_' || c == '-' || c == '.':
		default:
			return buf[n:], s[i:end]
		}
	}
	return buf[n:], s[i:end]
}

// keyMatch reports whether a name, normalised (key) and as written (raw), selects keyed detector d.
func (d *detector) keyMatch(key []byte, raw string) bool {
	if d.suffix && secretSuffix(raw) {
		return true
	}
	for _, k := range d.keys {
		if d.exact {
			if string(key) == k {
				return true
			}
		} else if len(key) >= len(k) && string(key[len(key)-len(k):]) == k {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with prefix (lower-case ASCII), ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
