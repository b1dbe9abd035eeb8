package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// Policy is a parsed, validated and compiled policy file. It is immutable and safe for concurrent
// use; reloading builds a new Policy (see Watcher).
type Policy struct {
	name     string
	source   string
	text     []byte // the source text Digest is the digest of
	digest   string
	settings Settings
	rules    []*rule
	// approvals is set when a rule has an `approval:` block, so evaluation keeps what it needs
	// to tell what the caller receives once approved.
	approvals bool
	// byType lists, per event type number, the rules that apply to it in file order, so
	// Evaluate never looks at a rule whose `on:` excludes the event.
	byType [][]*rule
	// anyType are the rules with an empty `on:`, used for event types byType does not know.
	anyType []*rule
	adapter types.Adapter
	// revision is the cluster policy bucket's revision this policy came from (0: not from one).
	revision uint64
}

// Rule describes one rule of a loaded policy, for listing and audit.
type Rule struct {
	// ID is the rule id.
	ID string
	// Description is the rule's description, if any.
	Description string
	// On lists the canonical event type names the rule applies to; nil means every type.
	On []string
	// Effect names the rule's effect: deny, allow, ask, modify, defer, escalate, message or typed.
	Effect string
	// DryRun is set for `mode: dry-run` rules.
	DryRun bool
	// Fallback is "deny" or "no-effect": what a caller that cannot express Effect receives.
	Fallback string
	// Line is the line of the rule in the source file (0 when unknown).
	Line int
}

// Parse parses, validates and compiles a policy. name identifies the source in error messages
// (usually the file path). Every problem found is reported, one per line, each naming the rule
// and, for CEL, the position inside the expression.
func Parse(data []byte, name string) (*Policy, error) {
	return parse(data, name)
}

// parse is Parse with extra CEL environment options, for tests that need custom functions.
func parse(data []byte, name string, extra ...cel.EnvOption) (*Policy, error) {
	return parseWith(data, name, compiler{}, extra...)
}

// parseWith is parse with a compiler whose checked and record fields are set (its env is
// filled in here): the built-in default policy and the test that keeps its checked
// expressions up to date use it.
func parseWith(data []byte, name string, c compiler, extra ...cel.EnvOption) (*Policy, error) {
	fail := func(err error) (*Policy, error) { return nil, fmt.Errorf("%s: %w", name, err) }
	var f policyFile
	if err := decodeStrict(data, &f); err != nil {
		return fail(err)
	}
	if f.Version != 1 {
		return fail(fmt.Errorf("version: want 1, got %d", f.Version))
	}
	env, err := celEnv()
	if err != nil {
		return fail(fmt.Errorf("CEL environment: %w", err))
	}
	if len(extra) > 0 {
		c.checked = nil // checked against the base environment only
		if env, err = env.Extend(extra...); err != nil {
			return fail(fmt.Errorf("CEL environment: %w", err))
		}
	}
	c.env = env
	sum := sha256.Sum256(data)
	p := &Policy{
		name:    f.Name,
		source:  name,
		text:    slices.Clone(data),
		digest:  "sha256:" + hex.EncodeToString(sum[:]),
		adapter: jsonAdapter{env.CELTypeAdapter()},
	}
	if p.name == "" {
		p.name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	var errs []error
	if err := f.Settings.validate(); err != nil {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	p.settings = f.Settings.WithDefaults()
	c.costLimit = p.settings.CEL.CostLimit

	lines := ruleLines(data)
	seen := make(map[string]int, len(f.Rules))
	for i, spec := range f.Rules {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		if first, dup := seen[spec.ID]; dup && spec.ID != "" {
			errs = append(errs, fmt.Errorf("line %d: rule %q: duplicate id (first defined at line %d)", line, spec.ID, first))
			continue
		}
		seen[spec.ID] = line
		r, err := compileRule(&c, spec, len(p.rules), line)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.rules = append(p.rules, r)
		p.approvals = p.approvals || r.approval != nil
	}
	if len(errs) > 0 {
		return fail(errors.Join(errs...))
	}
	p.index()
	return p, nil
}

// index builds byType and anyType.
func (p *Policy) index() {
	types := allEventTypes()
	p.byType = make([][]*rule, slices.Max(types)+1)
	for _, t := range types {
		rs := []*rule{} // non-nil: the type is known
		for _, r := range p.rules {
			if r.appliesTo(t) {
				rs = append(rs, r)
			}
		}
		p.byType[t] = rs
	}
	for _, r := range p.rules {
		if r.onAll {
			p.anyType = append(p.anyType, r)
		}
	}
}

// LoadFile reads and parses a policy file.
func LoadFile(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Name is the policy's `name:`, or the source file name without extension when it has none.
func (p *Policy) Name() string { return p.name }

// Source is the name the policy was parsed under (usually its path).
func (p *Policy) Source() string { return p.source }

// Digest is "sha256:<hex>" of the policy source, recorded with every decision for audit.
func (p *Policy) Digest() string { return p.digest }

// Text is the source text the policy was parsed from, the bytes Digest is the digest of (for the
// console's policy page). It is shared: do not modify it.
func (p *Policy) Text() []byte { return p.text }

// Revision is the revision of the cluster policy bucket this policy was distributed as, or 0
// for a policy loaded from a file or built in. Every decision records it with the digest.
func (p *Policy) Revision() uint64 { return p.revision }

// WithRevision returns p marked as distributed at revision rev; p itself is unchanged.
func (p *Policy) WithRevision(rev uint64) *Policy {
	q := *p
	q.revision = rev
	return &q
}

// Settings are the typed-decision settings with defaults filled in. The maps and slices are
// shared with the policy: treat them as read-only.
func (p *Policy) Settings() Settings { return p.settings }

// Rules describes the rules in file order.
func (p *Policy) Rules() []Rule {
	out := make([]Rule, len(p.rules))
	for i, r := range p.rules {
		out[i] = r.info
		out[i].On = append([]string(nil), r.info.On...)
	}
	return out
}
