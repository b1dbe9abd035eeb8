package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Mode says whether an Authenticator enforces anything.
type Mode uint8

const (
	// Disabled admits every call without credentials: no credentials are configured. Keep the
	// server on a loopback address (see CheckListenAddress).
	Disabled Mode = iota
	// Enforced requires a valid credential with the right scope on every non-public procedure.
	Enforced
)

// String returns "disabled" or "enforced".
func (m Mode) String() string {
	if m == Enforced {
		return "enforced"
	}
	return "disabled"
}

// MinSecretLength is the shortest secret accepted; anything shorter is guessable. Generate secrets
// with, for example, `openssl rand -hex 32`.
const MinSecretLength = 16

// maxSecretFileBytes bounds what is read from a secret file, so a wrong path (a log, a device)
// cannot make loading slow or large.
const maxSecretFileBytes = 64 << 10

// Denial describes a refused call, for the OnDeny hook (logs, metrics). It holds no secret.
type Denial struct {
	// Procedure is the Connect procedure ("/ahp.v1.ObservationService/Watch") or, for HTTP
	// middleware, the request path.
	Procedure string
	// Reason classifies the refusal.
	Reason Reason
	// Principal is the authenticated credential's name for ReasonScope, else "".
	Principal string
	// Peer is the remote address, when known.
	Peer string
}

// Options are the process-level dependencies of an Authenticator; all are optional.
type Options struct {
	// LookupEnv reads environment variables (default os.LookupEnv); tests inject a map.
	LookupEnv func(string) (string, bool)
	// ReadFile reads secret files (default: os.Open, at most 64 KiB).
	ReadFile func(path string) ([]byte, error)
	// Rules map procedures to scopes (default DefaultRules(cfg)).
	Rules Rules
	// OnDeny is called for every refused call, after the refusal is decided; it must be cheap and
	// must not block (count it, log it at a sensible level).
	OnDeny func(Denial)
	// Logger receives reload results (default slog.Default()).
	Logger *slog.Logger
}

// Authenticator checks credentials and scopes. It is safe for concurrent use; Reload swaps the
// credential set atomically, so calls in flight never see half a reload.
type Authenticator struct {
	mode     Mode
	cfg      Config
	opts     Options
	rules    Rules
	interval time.Duration
	hasFiles bool

	set atomic.Pointer[credentialSet]

	reloadMu sync.Mutex // serialises Reload; guards lastErr
	lastErr  string
}

// credentialSet is one immutable generation of loaded credentials.
type credentialSet struct {
	entries []entry
}

type entry struct {
	digest    [sha256.Size]byte
	kind      Kind
	principal Principal
}

// New validates cfg, reads every secret and returns an Authenticator. Errors name the credential
// (and field) that failed, never a secret.
func New(cfg Config, opts Options) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.ReadFile == nil {
		opts.ReadFile = readSecretFile
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &Authenticator{cfg: cfg, opts: opts, rules: opts.Rules, interval: cfg.ReloadInterval}
	if a.rules == nil {
		a.rules = DefaultRules(cfg)
	}
	if a.interval == 0 {
		a.interval = DefaultReloadInterval
	}
	fromFile := func(cc CredentialConfig) bool { return cc.File != "" }
	a.hasFiles = slices.ContainsFunc(cfg.Tokens, fromFile) || slices.ContainsFunc(cfg.APIKeys, fromFile)
	if cfg.credentialCount() == 0 {
		a.mode = Disabled
		a.set.Store(&credentialSet{})
		return a, nil
	}
	a.mode = Enforced
	set, err := a.load()
	if err != nil {
		return nil, err
	}
	a.set.Store(set)
	a.warnReadableByOthers()
	return a, nil
}

// warnReadableByOthers logs, once at startup, each secret file that users other than its owner
// and group may read: the secret is as good as known to them.
func (a *Authenticator) warnReadableByOthers() {
	for _, cc := range slices.Concat(a.cfg.Tokens, a.cfg.APIKeys) {
		if cc.File == "" {
			continue
		}
		if info, err := os.Stat(cc.File); err == nil && info.Mode().Perm()&0o004 != 0 {
			a.opts.Logger.Warn("secret file is readable by every local user; chmod o-r it", "credential", cc.Name, "file", cc.File, "mode", info.Mode().Perm().String())
		}
	}
}

// Mode reports whether credentials are enforced.
func (a *Authenticator) Mode() Mode { return a.mode }

// Enabled reports whether credentials are enforced (Mode() == Enforced).
func (a *Authenticator) Enabled() bool { return a.mode == Enforced }

// Rules returns the procedure rules in force; do not modify the result.
func (a *Authenticator) Rules() Rules { return a.rules }

// load reads every configured secret into a new set.
func (a *Authenticator) load() (*credentialSet, error) {
	set := &credentialSet{}
	type seenKey struct {
		digest [sha256.Size]byte
		kind   Kind
	}
	seen := map[seenKey]string{} // the same secret may be both a token and an API key
	add := func(field string, kind Kind, list []CredentialConfig) error {
		for i, cc := range list {
			where := fmt.Sprintf("%s[%d] (%q)", field, i, cc.Name)
			secret, err := a.readSecret(cc)
			if err != nil {
				return fmt.Errorf("auth: %s: %w", where, err)
			}
			e := entry{digest: sha256.Sum256([]byte(secret)), kind: kind, principal: Principal{Name: cc.Name, Kind: kind, Groups: cc.Groups}}
			for _, s := range cc.Scopes {
				e.principal.scopes |= s.bit()
			}
			key := seenKey{e.digest, kind}
			if prev, dup := seen[key]; dup {
				return fmt.Errorf("auth: %s: has the same secret as %s; give each credential its own secret", where, prev)
			}
			seen[key] = where
			set.entries = append(set.entries, e)
		}
		return nil
	}
	if err := add("tokens", KindBearer, a.cfg.Tokens); err != nil {
		return nil, err
	}
	if err := add("api_keys", KindAPIKey, a.cfg.APIKeys); err != nil {
		return nil, err
	}
	return set, nil
}

// readSecret returns a credential's secret, checked. Errors describe the problem, not the value.
func (a *Authenticator) readSecret(cc CredentialConfig) (string, error) {
	var raw string
	if cc.Env != "" {
		v, ok := a.opts.LookupEnv(cc.Env)
		if !ok {
			return "", errors.New("env: the environment variable is not set")
		}
		raw = v
	} else {
		b, err := a.opts.ReadFile(cc.File)
		if err != nil {
			// Only the cause: os errors quote the path, which is configuration, but keep
			// the message shape the same as for env.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", fmt.Errorf("file: cannot read: %w", err)
		}
		raw = string(b)
	}
	return checkSecret(raw, cc.Env != "")
}

func checkSecret(raw string, fromEnv bool) (string, error) {
	field := "file"
	if fromEnv {
		field = "env"
	}
	s := trimSpace(raw)
	switch {
	case s == "":
		return "", fmt.Errorf("%s: the secret is empty", field)
	case len(s) < MinSecretLength:
		return "", fmt.Errorf("%s: the secret is shorter than %d characters", field, MinSecretLength)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "", fmt.Errorf("%s: the secret must be one line of printable UTF-8 text", field)
		}
	}
	return s, nil
}

func trimSpace(s string) string {
	start, end := 0, len(s)
	for start < end && isSpace(s[start]) {
		start++
	}
	for end > start && isSpace(s[end-1]) {
		end--
	}
	return s[start:end]
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func readSecretFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFileBytes {
		return nil, fmt.Errorf("larger than %d bytes; is this the right file?", maxSecretFileBytes)
	}
	return b, nil
}

// Authenticate returns the principal whose configured secret equals c's. The presented secret
// and every configured one are compared as SHA-256 digests (so their lengths do not show in the
// timing) with crypto/subtle, and every configured credential is compared, with no early exit,
// so the time taken does not depend on which one matched or whether any did. The error is
// ErrInvalid whatever the reason.
func (a *Authenticator) Authenticate(c Credential) (Principal, error) {
	entries := a.set.Load().entries
	digest := sha256.Sum256([]byte(c.Secret))
	match := 0 // index+1 of the matching entry; 0 for none
	for i := range entries {
		e := &entries[i]
		eq := subtle.ConstantTimeCompare(digest[:], e.digest[:]) & subtle.ConstantTimeByteEq(uint8(e.kind), uint8(c.Kind))
		match = subtle.ConstantTimeSelect(eq, i+1, match)
	}
	if match == 0 {
		return Principal{}, ErrInvalid
	}
	return entries[match-1].principal, nil
}

// Authorize decides a call to procedure by a caller that presented c (or failed to present one:
// credErr, from FromHeader or FromRequest). It returns the principal, or nil with no error for a
// public procedure or in Disabled mode. A scope refusal (ErrForbidden) returns the principal too,
// so that the refusal can be logged with its name.
func (a *Authenticator) Authorize(procedure string, c Credential, credErr error) (*Principal, error) {
	if a.mode == Disabled {
		return nil, nil
	}
	rule, ok := a.rules.Lookup(procedure)
	if !ok {
		return nil, ErrNoRule
	}
	return a.decide(procedure, rule, c, credErr)
}

// decide applies one rule; what names the procedure or path in a scope error.
func (a *Authenticator) decide(what string, rule Rule, c Credential, credErr error) (*Principal, error) {
	if rule.Public {
		return nil, nil
	}
	if credErr != nil {
		return nil, credErr
	}
	p, err := a.Authenticate(c)
	if err != nil {
		return nil, err
	}
	if rule.Scope != "" && !p.Has(rule.Scope) {
		return &p, fmt.Errorf("%w: %s needs the %q scope", ErrForbidden, what, rule.Scope)
	}
	return &p, nil
}

// report calls the OnDeny hook for a refusal.
func (a *Authenticator) report(what, peer string, p *Principal, err error) {
	if err == nil || a.opts.OnDeny == nil {
		return
	}
	d := Denial{Procedure: what, Reason: ReasonOf(err), Peer: peer}
	if p != nil {
		d.Principal = p.Name
	}
	a.opts.OnDeny(d)
}

// Reload re-reads file-based secrets now (for SIGHUP or an admin call); a process's environment
// cannot change from outside, so only files rotate. Reload is all or nothing: if any secret fails to load, the previous set
// stays in force and the error names the credential. It reports whether anything changed.
func (a *Authenticator) Reload() (changed bool, err error) {
	if a.mode == Disabled || !a.hasFiles {
		return false, nil
	}
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	set, err := a.load()
	if err != nil {
		return false, err
	}
	old := a.set.Load()
	if sameSet(old, set) {
		return false, nil
	}
	a.set.Store(set)
	return true, nil
}

func sameSet(a, b *credentialSet) bool {
	if len(a.entries) != len(b.entries) {
		return false
	}
	for i := range a.entries {
		if a.entries[i].digest != b.entries[i].digest {
			return false
		}
	}
	return true
}

// Run re-reads file-based secrets every ReloadInterval until ctx is done. Reading a few small files
// is cheaper and more dependable than watching them (Kubernetes rotates mounted secrets by
// swapping symlinks). A reload error is logged once until it changes, and the previous secrets
// stay in force. Run returns at once when there are no file-based secrets or reloading is off.
func (a *Authenticator) Run(ctx context.Context) {
	if a.mode == Disabled || !a.hasFiles || a.interval < 0 {
		return
	}
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.reloadAndLog()
		}
	}
}

func (a *Authenticator) reloadAndLog() {
	changed, err := a.Reload()
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	switch {
	case err != nil:
		if msg := err.Error(); msg != a.lastErr {
			a.lastErr = msg
			a.opts.Logger.Error("auth: reloading secret files failed; the previous credentials stay in force", "error", err)
		}
	case changed:
		a.lastErr = ""
		a.opts.Logger.Info("auth: secret files reloaded")
	default:
		a.lastErr = ""
	}
}
