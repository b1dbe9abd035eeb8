// Package redact masks secrets in events, decisions and free text before they are written or
// streamed anywhere (the audit log, Watch, logs).
//
// A Redactor combines three rules:
//
//   - Built-in detectors find secrets by their shape in any string: cloud keys, GitHub, GitLab,
//     Slack, Stripe, OpenAI and Anthropic tokens, JWTs, PEM private key blocks, bearer and basic
//     credentials, passwords in URLs and secret assignments (password=…, "apiKey": "…"). Only the
//     secret part is masked, so "Authorization: Bearer [REDACTED:authorization]" stays readable.
//   - A JSON object key that names a secret (password, token, api_key, private_key, cookie, …, or
//     a name ending in a part "key" or "pat": GITHUB_PAT, stripe_key, sendgridKey) has its whole
//     string, object or array value masked, whatever it looks like.
//   - Configured paths (Config.Paths) are always masked whole.
//
// A masked span becomes a fixed placeholder naming what was found: [REDACTED:github_token].
// Strings longer than the field cap are cut and end with an explicit marker, [TRUNCATED:N bytes].
// Masking happens before truncation, so a cut never leaves half a secret behind.
//
// Redaction never fails open: if redacting a field fails in any unexpected way (a panic), the field
// is replaced by [REDACTED:error] and the Report says so.
//
// The detectors favour masking too much over too little. Known trade-offs: a value assigned to a
// name ending in a secret word is masked even when it is harmless ("token: 12" is masked,
// "max_tokens: 12" is not), and so is one assigned to a name ending in "_KEY" or "_PAT" unless it is
// a well-known plain key (sort_key, public_key, …; --tls-key=/etc/key.pem loses its path);
// "sk-…" strings of 20+ letters and digits are taken for API keys; a "Cookie:" or "Authorization:"
// line in prose loses its value. Ordinary commands, paths, UUIDs, hex digests and base64 file
// content are left alone: no detector matches bare hex or base64, and AWS secret keys (which look
// like base64) are only found by the name they are assigned to or right after their access key id.
//
// # Path syntax
//
// A path names places in an event or decision, from the message root: proto field names as in
// proto/ahp/v1 (snake_case; the JSON lowerCamel name is accepted too), continuing into JSON values
// (google.protobuf.Struct, Value) by object key or array index:
//
//	tool.input.password                    the "password" key of the tool input
//	native.payload.headers.authorization   a nested key of the native payload
//	tool.input.env.*                       every value of the "env" object
//	tool.input.messages.*.content          "content" of every item of the "messages" array
//	tool.input.messages.0                  the first item only
//	**.client_secret                       a "client_secret" key at any depth
//	effects.*.modify.value                 (in a decision) every modify value
//
// Segments are separated by '.'. "*" matches exactly one segment: any object key or any array
// index. "**" matches any number of segments, including none. A decimal number matches that array
// index (and an object key spelled the same). A backslash escapes the next character, for keys
// containing '.', '*' or '\' ("a\.b" is the key "a.b"). Matching is exact and case-sensitive.
//
// The whole value at a matching path is replaced by the placeholder [REDACTED:path], whatever its
// type (objects and numbers included). Scalars of the typed schema (numbers, enums, booleans of
// proto fields) keep their values, and a matched google.protobuf.Struct field becomes
// {"redacted": "[REDACTED:path]"} because a Struct cannot hold a bare string.
package redact

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
)

// DefaultMaxFieldBytes is the default cap on one string (8 KiB).
const DefaultMaxFieldBytes = 8 << 10

// Placeholder kinds that are not detector names.
const (
	// KindSecretKey marks a value masked because its object key names a secret.
	KindSecretKey = "secret_key"
	// KindPath marks a value masked because it matched a configured path.
	KindPath = "path"
	// KindError marks a field replaced because redacting it failed.
	KindError = "error"
	// KindUnknownFields marks protobuf wire fields this schema does not know; they are dropped
	// because they cannot be inspected.
	KindUnknownFields = "unknown_wire_fields"
)

// Config configures a Redactor. The zero value enables every built-in detector and key-name
// masking with the default field cap.
type Config struct {
	// Paths are always masked whole, whatever their content; see "Path syntax" in the package
	// documentation (e.g. "tool.input.password", "native.payload.headers.*", "**.client_secret").
	Paths []string
	// SecretKeys are extra words that make an object key name a secret (matched like the built-in
	// ones: case-insensitive, ignoring '_', '-', '.' and spaces, anywhere in the key).
	SecretKeys []string
	// MaxFieldBytes caps each string in bytes; longer strings are cut (at a UTF-8 boundary) and
	// end with "[TRUNCATED:N bytes]", N being the original length. 0 means DefaultMaxFieldBytes; a
	// negative value disables the cap.
	MaxFieldBytes int
	// Disable turns off built-in rules by name: any name from Detectors(), or KindSecretKey for
	// key-name masking. Unknown names are an error, so a typo cannot silently keep a rule on.
	Disable []string
}

// Detectors lists the names of the built-in detectors, in priority order; a secret found in two
// ways (aws_secret_access_key) is listed once.
func Detectors() []string {
	names := make([]string, len(builtins()))
	for i, d := range builtins() {
		names[i] = d.name
	}
	return slices.Compact(names)
}

// Redactor masks secrets. It is immutable and safe for concurrent use.
type Redactor struct {
	detectors    []*detector
	placeholders []string // per detector
	keys         keyMatcher
	keysOn       bool
	paths        [][]patternSeg
	maxField     int // 0: no cap

	// Scan index, built by index().
	bigrams  [1 << 16 / 64]uint64
	byBigram map[uint16][]anchorRef
	keyed    bool
}

// New returns a Redactor for cfg.
func New(cfg Config) (*Redactor, error) {
	r := &Redactor{keys: newKeyMatcher(cfg.SecretKeys), keysOn: true}
	switch {
	case cfg.MaxFieldBytes == 0:
		r.maxField = DefaultMaxFieldBytes
	case cfg.MaxFieldBytes > 0:
		r.maxField = cfg.MaxFieldBytes
	}
	off := make(map[string]bool, len(cfg.Disable))
	for _, name := range cfg.Disable {
		if name == KindSecretKey {
			r.keysOn = false
			continue
		}
		if !slices.Contains(Detectors(), name) {
			return nil, fmt.Errorf("redact: unknown detector %q in Disable (known: %s, %s)", name, strings.Join(Detectors(), ", "), KindSecretKey)
		}
		off[name] = true
	}
	for _, d := range builtins() {
		if !off[d.name] {
			r.detectors = append(r.detectors, d)
			r.placeholders = append(r.placeholders, Placeholder(d.name))
		}
	}
	r.index()
	for _, p := range cfg.Paths {
		segs, err := parsePath(p)
		if err != nil {
			return nil, fmt.Errorf("redact: %w", err)
		}
		r.paths = append(r.paths, segs)
	}
	return r, nil
}

// Placeholder is what replaces a secret of the given kind: "[REDACTED:kind]".
func Placeholder(kind string) string { return "[REDACTED:" + kind + "]" }

// Report says what a redaction changed, by path and kind; it never holds a value.
type Report struct {
	// Masked lists each masked field once per kind, sorted by path.
	Masked []Finding `json:"masked,omitempty"`
	// Truncated lists each string cut at the field cap, sorted by path.
	Truncated []Truncation `json:"truncated,omitempty"`
}

// Finding is one masked field.
type Finding struct {
	// Path is where, in the path syntax ("tool.input.command"); empty for a plain string.
	Path string `json:"path"`
	// Kind is the detector name, or KindSecretKey, KindPath, KindError, KindUnknownFields.
	Kind string `json:"kind"`
}

// Truncation is one string cut at the field cap.
type Truncation struct {
	// Path is where, as in Finding.
	Path string `json:"path"`
	// Bytes is the original length of the string.
	Bytes int `json:"bytes"`
}

// Empty reports whether nothing was masked or truncated.
func (r Report) Empty() bool { return len(r.Masked) == 0 && len(r.Truncated) == 0 }

// MaskedFields counts the distinct fields masked (a field can be in Masked once per kind).
func (r Report) MaskedFields() int {
	n := 0
	for i, f := range r.Masked {
		if i == 0 || f.Path != r.Masked[i-1].Path {
			n++
		}
	}
	return n
}

// Failed reports whether some field was replaced because redacting it failed.
func (r Report) Failed() bool {
	for _, f := range r.Masked {
		if f.Kind == KindError {
			return true
		}
	}
	return false
}

// Prefixed returns the report with prefix and a dot put before every path, for embedding the
// report of a part in the report of a whole.
func (r Report) Prefixed(prefix string) Report {
	out := Report{Masked: make([]Finding, len(r.Masked)), Truncated: make([]Truncation, len(r.Truncated))}
	for i, f := range r.Masked {
		out.Masked[i] = Finding{Path: joinPrefix(prefix, f.Path), Kind: f.Kind}
	}
	for i, t := range r.Truncated {
		out.Truncated[i] = Truncation{Path: joinPrefix(prefix, t.Path), Bytes: t.Bytes}
	}
	return out
}

func joinPrefix(prefix, path string) string {
	if path == "" {
		return prefix
	}
	return prefix + "." + path
}

// String masks secrets in one string and applies the field cap.
func (r *Redactor) String(s string) (string, Report) {
	w := walker{r: r}
	out := w.str(s)
	return out, w.finish()
}

// Event returns a redacted copy of ev; ev itself is never modified. Every string of the event is
// scanned (free text, ids, and every string inside tool input/output, native payload, extensions,
// harness metadata and context, payload leftovers and unknown_fields), object keys included.
func (r *Redactor) Event(ev *ahpv1.Event) (out *ahpv1.Event, rep Report) {
	if ev == nil {
		return nil, Report{}
	}
	// On failure keep only what identifies the event; everything else may hold unmasked text.
	return redactCopy(r, ev, func() *ahpv1.Event { return &ahpv1.Event{Id: ev.GetId(), Type: ev.GetType()} })
}

// Decision returns a redacted copy of d (reasons, messages, modify values, typed answers and
// their metadata); d itself is never modified.
func (r *Redactor) Decision(d *ahpv1.Decision) (out *ahpv1.Decision, rep Report) {
	if d == nil {
		return nil, Report{}
	}
	return redactCopy(r, d, func() *ahpv1.Decision {
		return &ahpv1.Decision{DecisionId: d.GetDecisionId(), Verdict: d.GetVerdict(), Synthetic: d.GetSynthetic()}
	})
}

// redactCopy redacts a copy of m. If the walk panics it returns identity() instead, a message
// holding only what identifies m, and a report of one error finding.
func redactCopy[M proto.Message](r *Redactor, m M, identity func() M) (out M, rep Report) {
	defer func() {
		if recover() != nil {
			out, rep = identity(), Report{Masked: []Finding{{Kind: KindError}}}
		}
	}()
	c := proto.CloneOf(m)
	w := r.newWalker()
	w.message(c.ProtoReflect())
	return c, w.finish()
}

// span is a masked byte range of a string and the detector that found it.
type span struct {
	a, b int
	det  int
}

// text masks s and applies the cap. found has bit i set for each detector i that matched.
func (r *Redactor) text(s string, spans []span) (out string, found uint64, truncated bool, _ []span) {
	spans = r.scan(s, spans[:0])
	out = s
	if len(spans) > 0 {
		out, found = r.mask(s, spans)
	}
	if r.maxField > 0 && len(out) > r.maxField {
		out = truncate(out, r.maxField, len(s))
		truncated = true
	}
	return out, found, truncated, spans
}

// anchorRef is one anchor of one detector, indexed by its first two bytes.
type anchorRef struct {
	det    int
	anchor string
	fold   bool
}

// index prepares the single-pass scan: a bitmap of the two-byte prefixes of every anchor (every
// case variant for case-insensitive ones) and the anchors behind each prefix.
func (r *Redactor) index() {
	r.bigrams, r.byBigram, r.keyed = [len(r.bigrams)]uint64{}, make(map[uint16][]anchorRef), false
	for di, d := range r.detectors {
		r.keyed = r.keyed || d.keys != nil
		for _, a := range d.anchors {
			for _, c0 := range caseVariants(a[0], d.fold) {
				for _, c1 := range caseVariants(a[1], d.fold) {
					bg := uint16(c0)<<8 | uint16(c1)
					r.bigrams[bg>>6] |= 1 << (bg & 63)
					r.byBigram[bg] = append(r.byBigram[bg], anchorRef{det: di, anchor: a, fold: d.fold})
				}
			}
		}
	}
}

func caseVariants(c byte, fold bool) []byte {
	if fold && 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// scan appends the spans every detector finds in s, in one pass: at each byte it checks the
// two-byte prefix against the anchor bitmap, and at each ':' or '=' it reads the name before it
// for the keyed detectors. Every anchor is tried, even inside an earlier match, so a secret glued
// to the end of another ("…AAAAghp_…") is still found on its own.
func (r *Redactor) scan(s string, spans []span) []span {
	var (
		key   [64]byte
		reach [64]int // per detector: anchors ending before this are skipped (detector.contained)
	)
	for i := 0; i+1 < len(s); i++ {
		c := s[i]
		if (c == ':' || c == '=') && r.keyed {
			spans = r.scanKeyed(s, i, &key, &reach, spans)
		}
		bg := uint16(c)<<8 | uint16(s[i+1])
		if r.bigrams[bg>>6]&(1<<(bg&63)) == 0 {
			continue
		}
		for _, ref := range r.byBigram[bg] {
			rest := s[i:]
			if i+len(ref.anchor) > reach[ref.det] && (ref.fold && hasPrefixFold(rest, ref.anchor) || !ref.fold && strings.HasPrefix(rest, ref.anchor)) {
				spans = r.try(r.detectors[ref.det], ref.det, s, i, &reach[ref.det], spans)
			}
		}
	}
	return spans
}

// scanKeyed runs the keyed detectors whose name ends just before the separator at j.
func (r *Redactor) scanKeyed(s string, j int, buf *[64]byte, reach *[64]int, spans []span) []span {
	sep, v := s[j], j+1
	switch {
	case sep == '=' && (v < len(s) && s[v] == '=' || j > 0 && strings.IndexByte("!<>=", s[j-1]) >= 0):
		return spans // a comparison, not an assignment
	case sep == ':' && v < len(s) && s[v] == '=':
		v++ // Go's :=
	}
	key, raw := keyBefore(s, j, buf)
	if len(key) == 0 {
		return spans
	}
	for di, d := range r.detectors {
		if d.keys != nil && j >= reach[di] && strings.IndexByte(d.seps, sep) >= 0 && d.keyMatch(key, raw) {
			spans = r.try(d, di, s, v, &reach[di], spans)
		}
	}
	return spans
}

// window bounds the text a detector's regexp sees at first. Go's regexp picks its fast
// backtracking engine for short inputs only; a match that reaches the window's end is run again
// on the whole rest, so long values (a PEM block, a long quoted secret) are still masked whole.
const window = 1 << 10

// try runs detector d at position i of s and appends what it finds; it moves reach past where
// the detector need not look again.
func (r *Redactor) try(d *detector, di int, s string, i int, reach *int, spans []span) []span {
	if d.wordStart && i > 0 && isAlnum(s[i-1]) && !covered(spans, i-1) {
		return spans
	}
	if d.match != nil {
		a, b, next := d.match(s, i)
		*reach = max(*reach, next)
		if a < 0 || a == b {
			return spans
		}
		return append(spans, span{a: a, b: b, det: di})
	}
	end := min(len(s), i+window)
	loc := d.re.FindStringSubmatchIndex(s[i:end])
	if loc != nil && i+loc[1] == end && end < len(s) {
		loc = d.re.FindStringSubmatchIndex(s[i:])
	}
	if loc == nil {
		return spans
	}
	if d.contained || d.token {
		*reach = max(*reach, i+loc[1])
	}
	a, b := loc[0], loc[1]
	if len(d.groups) > 0 {
		a = -1
		for _, g := range d.groups {
			if ga, gb := loc[2*g], loc[2*g+1]; ga >= 0 && gb > ga {
				a, b = ga, gb
				break
			}
		}
		if a < 0 {
			return spans
		}
	}
	if a == b {
		return spans
	}
	a, b = a+i, b+i
	if d.valid != nil && !d.valid(s, i, a, b) {
		return spans
	}
	return append(spans, span{a: a, b: b, det: di})
}

// covered reports whether byte i is inside a span found so far: a word starts right after a
// masked secret, so "AKIA…sk-…" still yields the "sk-…" key.
func covered(spans []span, i int) bool {
	for _, sp := range spans {
		if sp.a <= i && i < sp.b {
			return true
		}
	}
	return false
}

// mask replaces the spans of s by their placeholders; overlapping spans merge, named after the
// first (highest-priority) detector that starts there.
func (r *Redactor) mask(s string, spans []span) (string, uint64) {
	slices.SortFunc(spans, func(x, y span) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return x.det - y.det
	})
	var (
		b     strings.Builder
		found uint64
		at    int
	)
	b.Grow(len(s))
	for i := 0; i < len(spans); {
		cur := spans[i]
		found |= 1 << uint(cur.det)
		j := i + 1
		for ; j < len(spans) && spans[j].a < cur.b; j++ {
			cur.b = max(cur.b, spans[j].b)
			found |= 1 << uint(spans[j].det)
		}
		b.WriteString(s[at:cur.a])
		b.WriteString(r.placeholders[cur.det])
		at = cur.b
		i = j
	}
	b.WriteString(s[at:])
	return b.String(), found
}

// Truncate returns the longest prefix of s of at most n bytes that does not end inside a UTF-8
// sequence, so a valid string stays valid. Every cut of text to a byte limit goes through it.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	// In valid UTF-8 a rune starts at most UTFMax-1 bytes before any byte.
	for i := n; i >= max(0, n-(utf8.UTFMax-1)); i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n] // not valid UTF-8 here; nothing to keep valid
}

// truncate cuts s to at most n bytes of content, never inside a UTF-8 sequence or a placeholder,
// and appends the marker with the original length.
func truncate(s string, n, original int) string {
	cut := len(Truncate(s, n))
	if open := strings.LastIndex(s[:cut], "[REDACTED:"); open >= 0 && !strings.Contains(s[open:cut], "]") {
		cut = open
	}
	return s[:cut] + "[TRUNCATED:" + strconv.Itoa(original) + " bytes]"
}
