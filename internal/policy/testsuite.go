package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// DefaultTestTime is the evaluation time of test cases that give no `now:`, so suites are
// deterministic.
var DefaultTestTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// TestSuite is a parsed policy test file: cases that each give an input and what the decision
// must look like (docs/policy.md, "Testing policies").
type TestSuite struct {
	// Cases in file order.
	Cases []TestCase
}

// TestCase is one case of a TestSuite.
type TestCase struct {
	// Name describes the case.
	Name string
	// Input is what the policy is evaluated against.
	Input Input

	expect expectation
	wire   *wireCase // set for `request:` cases (testwire.go)
}

// The YAML shapes of a test file, decoded strictly like policy files.
type testFile struct {
	Cases []testCaseSpec `yaml:"cases"`
}

type testCaseSpec struct {
	Name         string         `yaml:"name"`
	Event        map[string]any `yaml:"event"`
	Request      map[string]any `yaml:"request"`
	Capabilities *[]string      `yaml:"capabilities"`
	Session      *sessionSpec   `yaml:"session"`
	Now          string         `yaml:"now"`
	Expect       expectSpec     `yaml:"expect"`
}

type sessionSpec struct {
	ID                 string       `yaml:"id"`
	AgentID            string       `yaml:"agent_id"`
	EventCount         uint64       `yaml:"event_count"`
	ToolCallCount      uint64       `yaml:"tool_call_count"`
	ErrorCount         uint64       `yaml:"error_count"`
	DenyCount          uint64       `yaml:"deny_count"`
	IdleMs             *uint64      `yaml:"idle_ms"`
	FirstSeen          string       `yaml:"first_seen"`
	LastSeen           string       `yaml:"last_seen"`
	LastEventType      string       `yaml:"last_event_type"`
	RunStatus          string       `yaml:"run_status"`
	VerificationStatus string       `yaml:"verification_status"`
	Facts              []factSpec   `yaml:"facts"`
	Recent             []recentSpec `yaml:"recent"`
}

type factSpec struct {
	Content    string  `yaml:"content"`
	Source     string  `yaml:"source"`
	Confidence float32 `yaml:"confidence"`
}

type recentSpec struct {
	Type     string `yaml:"type"`
	ToolName string `yaml:"tool_name"`
	ToolKind string `yaml:"tool_kind"`
	Time     string `yaml:"time"`
}

type expectSpec struct {
	Verdict        string         `yaml:"verdict"`
	RuleIDs        *[]string      `yaml:"rule_ids"`
	Effects        *[]string      `yaml:"effects"`
	ReasonContains string         `yaml:"reason_contains"`
	Input          map[string]any `yaml:"input"`
	TypedAction    string         `yaml:"typed_action"`
	Typed          map[string]any `yaml:"typed"`
	Fallbacks      *[]string      `yaml:"fallbacks"`
	DryRuns        *[]string      `yaml:"dry_runs"`
	Messages       *[]string      `yaml:"messages"`
	Errors         *[]string      `yaml:"errors"`
	AnswerEffects  []any          `yaml:"answer_effects"`
}

// expectation is a checked expectSpec.
type expectation struct {
	verdict        ahpv1.Verdict // 0 = not checked
	ruleIDs        *[]string
	effects        *[]string
	reasonContains string
	input          *structpb.Struct
	typedAction    string // "none" = no typed answer
	typed          map[string]*structpb.Value
	fallbacks      *[]string
	dryRuns        *[]string
	messages       *[]string
	errors         []string // rule ids expected to fail; nil = none
	answerEffects  []any    // the rendered answer's result.effects (request cases)
}

// ParseTests parses a policy test file.
func ParseTests(data []byte) (*TestSuite, error) { return parseTests(data, nil) }

func parseTests(data []byte, wire WireRequests) (*TestSuite, error) {
	var f testFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, err
	}
	if len(f.Cases) == 0 {
		return nil, errors.New("test file has no cases")
	}
	suite := &TestSuite{}
	var errs []error
	for i, spec := range f.Cases {
		tc, err := spec.build(i, wire)
		if err != nil {
			errs = append(errs, fmt.Errorf("case %d (%s): %w", i+1, spec.Name, err))
			continue
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return suite, nil
}

// LoadTestFile reads and parses a policy test file.
func LoadTestFile(path string) (*TestSuite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseTests(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (spec testCaseSpec) build(i int, wire WireRequests) (TestCase, error) {
	tc := TestCase{Name: spec.Name}
	if tc.Name == "" {
		return tc, errors.New("name is required")
	}
	now := DefaultTestTime
	if spec.Now != "" {
		t, err := time.Parse(time.RFC3339Nano, spec.Now)
		if err != nil {
			return tc, fmt.Errorf("now: %w", err)
		}
		now = t
	}
	tc.Input = Input{Now: now, Session: &SessionView{}}
	if spec.Request != nil {
		if err := spec.buildWire(&tc, wire); err != nil {
			return tc, err
		}
	} else {
		ev, err := buildTestEvent(spec.Event, i)
		if err != nil {
			return tc, err
		}
		tc.Input.Event = ev
	}
	if spec.Capabilities != nil {
		caps := &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{}}
		for _, name := range *spec.Capabilities {
			n, ok := names.ParseEnumWire(ahpv1.EffectKind(0).Descriptor(), name)
			if !ok {
				return tc, fmt.Errorf("capabilities: unknown effect %q (known: %s)", name,
					strings.Join(names.EnumWireNames(ahpv1.EffectKind(0).Descriptor()), ", "))
			}
			caps.Effects = append(caps.Effects, ahpv1.EffectKind(n))
		}
		tc.Input.Capabilities = caps
	}
	if spec.Session != nil {
		sv, err := spec.Session.build(now)
		if err != nil {
			return tc, fmt.Errorf("session: %w", err)
		}
		tc.Input.Session = sv
	}
	var err error
	tc.expect, err = spec.Expect.build()
	if err != nil {
		return tc, fmt.Errorf("expect: %w", err)
	}
	return tc, nil
}

// buildTestEvent turns the friendly YAML event into a canonical event: `type` takes canonical,
// Harness or typed names; `payload` fills the typed payload of typed and contract events and
// Event.payload otherwise; every other key is an ahp.v1.Event field in the conventions of wire.go
// (tool.kind by name, enums by wire name, JSON for input and extensions).
func buildTestEvent(m map[string]any, i int) (*ahpv1.Event, error) {
	rest := maps.Clone(m)
	typeName, ok := rest["type"].(string)
	if !ok {
		return nil, errors.New("event.type is required (a canonical name such as tool.before)")
	}
	delete(rest, "type")
	t, err := parseEventName(typeName)
	if err != nil {
		return nil, fmt.Errorf("event.type: %w", err)
	}
	payload, hasPayload := rest["payload"]
	delete(rest, "payload")
	ev := &ahpv1.Event{}
	if err := decodeMessage(ev.ProtoReflect(), rest, "event"); err != nil {
		return nil, err
	}
	ev.Type = t
	if ev.Id == "" {
		ev.Id = fmt.Sprintf("case-%d", i+1)
	}
	if hasPayload {
		if body, ok := bodyFieldByType[t]; ok {
			fd := ev.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(body))
			if err := decodeField(ev.ProtoReflect(), fd, payload, "event.payload"); err != nil {
				return nil, err
			}
		} else if ev.Payload, err = jsonValue(payload, "event.payload"); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

func (s *sessionSpec) build(now time.Time) (*SessionView, error) {
	sv := &SessionView{
		SessionID:          s.ID,
		AgentID:            s.AgentID,
		EventCount:         s.EventCount,
		ToolCallCount:      s.ToolCallCount,
		ErrorCount:         s.ErrorCount,
		DenyCount:          s.DenyCount,
		LastEventType:      s.LastEventType,
		RunStatus:          s.RunStatus,
		VerificationStatus: s.VerificationStatus,
	}
	var err error
	parse := func(field, v string) time.Time {
		if v == "" || err != nil {
			return time.Time{}
		}
		t, perr := time.Parse(time.RFC3339Nano, v)
		if perr != nil {
			err = fmt.Errorf("%s: %w", field, perr)
		}
		return t
	}
	sv.FirstSeen = parse("first_seen", s.FirstSeen)
	sv.LastSeen = parse("last_seen", s.LastSeen)
	if s.IdleMs != nil {
		if s.LastSeen != "" {
			return nil, errors.New("give idle_ms or last_seen, not both")
		}
		sv.LastSeen = now.Add(-time.Duration(*s.IdleMs) * time.Millisecond)
	}
	for _, f := range s.Facts {
		sv.Facts = append(sv.Facts, &ahpv1.Fact{Content: f.Content, Source: f.Source, Confidence: f.Confidence})
	}
	for _, r := range s.Recent {
		sv.Recent = append(sv.Recent, EventSummary{Type: r.Type, ToolName: r.ToolName, ToolKind: r.ToolKind, Time: parse("recent.time", r.Time)})
	}
	return sv, err
}

// typedFields are the keys of expect.typed: TypedAnswer fields in snake_case.
var typedFields = []string{"rule_id", "action", "reason", "strategy", "task", "hints", "intent",
	"confidence", "facts", "knowledge", "retry_after_ms", "max_backoff_ms"}

func (s expectSpec) build() (expectation, error) {
	x := expectation{
		ruleIDs: s.RuleIDs, effects: s.Effects, reasonContains: s.ReasonContains, answerEffects: s.AnswerEffects,
		typedAction: s.TypedAction, fallbacks: s.Fallbacks, dryRuns: s.DryRuns, messages: s.Messages,
	}
	if s.Verdict != "" {
		n, ok := names.ParseEnumWire(ahpv1.Verdict(0).Descriptor(), s.Verdict)
		if !ok {
			return x, fmt.Errorf("verdict: unknown verdict %q (known: %s)", s.Verdict,
				strings.Join(names.EnumWireNames(ahpv1.Verdict(0).Descriptor()), ", "))
		}
		x.verdict = ahpv1.Verdict(n)
	}
	if s.Effects != nil {
		for _, name := range *s.Effects {
			if _, ok := names.ParseEnumWire(ahpv1.EffectKind(0).Descriptor(), name); !ok {
				return x, fmt.Errorf("effects: unknown effect %q", name)
			}
		}
	}
	if s.Input != nil {
		in, err := jsonObject(s.Input, "input")
		if err != nil {
			return x, err
		}
		x.input = in
	}
	if s.Typed != nil {
		x.typed = make(map[string]*structpb.Value, len(s.Typed))
		for k, v := range s.Typed {
			if !slices.Contains(typedFields, k) {
				return x, fmt.Errorf("typed: unknown field %q (known: %s)", k, strings.Join(typedFields, ", "))
			}
			jv, err := jsonValue(v, "typed."+k)
			if err != nil {
				return x, err
			}
			x.typed[k] = jv
		}
	}
	if s.Errors != nil {
		x.errors = *s.Errors
	}
	return x, nil
}

// RunTests evaluates every case of s against p and reports what differed.
func (p *Policy) RunTests(s *TestSuite) TestReport {
	r := TestReport{Policy: p.Name(), Digest: p.Digest()}
	for _, tc := range s.Cases {
		res := p.Evaluate(tc.Input)
		fails := tc.expect.check(res)
		tc.expect.checkAnswer(tc, res, func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) })
		r.Cases = append(r.Cases, CaseReport{Name: tc.Name, Failures: fails})
	}
	return r
}

// check compares a result with the expectation; each difference is one line.
func (x expectation) check(res Result) []string {
	var fails []string
	failf := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }

	gotErrs := make([]string, len(res.Errors))
	for i, e := range res.Errors {
		gotErrs[i] = e.RuleID
	}
	if !slices.Equal(gotErrs, x.errors) {
		for _, e := range res.Errors {
			if !slices.Contains(x.errors, e.RuleID) {
				failf("unexpected evaluation error: %v", e)
			}
		}
		for _, id := range x.errors {
			if !slices.Contains(gotErrs, id) {
				failf("errors: want an evaluation error in rule %q, got none", id)
			}
		}
	}
	if x.verdict != 0 && res.Verdict != x.verdict {
		failf("verdict: got %s, want %s", names.EnumWireName(res.Verdict), names.EnumWireName(x.verdict))
	}
	if x.ruleIDs != nil && !slices.Equal(res.MatchedRuleIDs, *x.ruleIDs) {
		failf("rule_ids: got %s, want %s", list(res.MatchedRuleIDs), list(*x.ruleIDs))
	}
	if x.effects != nil {
		got := make([]string, len(res.Effects))
		for i, e := range res.Effects {
			got[i] = effectKindOf(e)
		}
		if !slices.Equal(got, *x.effects) {
			failf("effects: got %s, want %s", list(got), list(*x.effects))
		}
	}
	if x.reasonContains != "" {
		reasons := reasonsOf(res)
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, x.reasonContains) }) {
			failf("reason: none contains %q (reasons: %s)", x.reasonContains, list(reasons))
		}
	}
	if x.input != nil {
		var got *structpb.Struct
		for _, e := range res.Effects {
			if m := e.GetModify(); m != nil {
				got = m.GetValue().GetStructValue()
			}
		}
		switch {
		case got == nil:
			failf("input: no modify effect was sent, want input %s", jsonText(x.input))
		case !proto.Equal(got, x.input):
			failf("input: got %s, want %s", jsonText(got), jsonText(x.input))
		}
	}
	if x.typedAction != "" {
		got := "none"
		if res.Typed != nil {
			got = res.Typed.Action
		}
		if got != x.typedAction {
			failf("typed_action: got %s, want %s", got, x.typedAction)
		}
	}
	if x.typed != nil {
		if res.Typed == nil {
			failf("typed: no typed answer, want %s", jsonText(&structpb.Struct{Fields: x.typed}))
		} else {
			got := typedFieldsOf(res.Typed)
			for _, k := range slices.Sorted(maps.Keys(x.typed)) {
				if !proto.Equal(got[k], x.typed[k]) {
					failf("typed.%s: got %s, want %s", k, jsonText(got[k]), jsonText(x.typed[k]))
				}
			}
		}
	}
	if x.fallbacks != nil {
		var got []string
		for _, f := range res.Fallbacks {
			got = append(got, f.GetRuleId())
		}
		if !slices.Equal(got, *x.fallbacks) {
			failf("fallbacks: got %s, want %s", list(got), list(*x.fallbacks))
		}
	}
	if x.dryRuns != nil {
		var got []string
		for _, d := range res.DryRuns {
			got = append(got, d.GetRuleId())
		}
		for _, t := range res.TypedDryRuns {
			got = append(got, t.RuleID)
		}
		if !slices.Equal(got, *x.dryRuns) {
			failf("dry_runs: got %s, want %s", list(got), list(*x.dryRuns))
		}
	}
	if x.messages != nil && !slices.Equal(res.Messages, *x.messages) {
		failf("messages: got %s, want %s", list(res.Messages), list(*x.messages))
	}
	return fails
}

// effectKindOf names the effect set in e ("deny").
func effectKindOf(e *ahpv1.Effect) string {
	if name := names.EffectKindName(names.EffectKindOf(e)); name != "" {
		return name
	}
	return "none"
}

// reasonsOf lists every human-readable text of a result: effect reasons, messages, typed reason.
func reasonsOf(res Result) []string {
	var out []string
	for _, e := range res.Effects {
		var r string
		switch x := e.GetEffect().(type) {
		case *ahpv1.Effect_Deny:
			r = x.Deny.GetReason()
		case *ahpv1.Effect_Allow:
			r = x.Allow.GetReason()
		case *ahpv1.Effect_Ask:
			r = x.Ask.GetReason()
		case *ahpv1.Effect_Defer:
			r = x.Defer.GetReason()
		case *ahpv1.Effect_Escalate:
			r = x.Escalate.GetReason()
		case *ahpv1.Effect_Modify:
			r = x.Modify.GetReason()
		case *ahpv1.Effect_Message:
			r = x.Message.GetText()
		}
		if r != "" {
			out = append(out, r)
		}
	}
	if res.Typed != nil && res.Typed.Reason != "" {
		out = append(out, res.Typed.Reason)
	}
	return out
}

func typedFieldsOf(t *TypedAnswer) map[string]*structpb.Value {
	strs := func(s []string) *structpb.Value {
		l := &structpb.ListValue{}
		for _, v := range s {
			l.Values = append(l.Values, structpb.NewStringValue(v))
		}
		return structpb.NewListValue(l)
	}
	return map[string]*structpb.Value{
		"rule_id":        structpb.NewStringValue(t.RuleID),
		"action":         structpb.NewStringValue(t.Action),
		"reason":         structpb.NewStringValue(t.Reason),
		"strategy":       structpb.NewStringValue(t.Strategy),
		"task":           structpb.NewStringValue(t.Task),
		"hints":          strs(t.Hints),
		"intent":         structpb.NewStringValue(t.Intent),
		"confidence":     structpb.NewNumberValue(t.Confidence),
		"facts":          strs(t.Facts),
		"knowledge":      strs(t.Knowledge),
		"retry_after_ms": structpb.NewNumberValue(float64(t.RetryAfterMs)),
		"max_backoff_ms": structpb.NewNumberValue(float64(t.MaxBackoffMs)),
	}
}

// list renders strings as a compact bracketed list: [a b] or [].
func list(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		if v == "" || strings.ContainsAny(v, " \t\n[]\"") {
			v = fmt.Sprintf("%q", v)
		}
		q[i] = v
	}
	return "[" + strings.Join(q, " ") + "]"
}

// jsonText renders a JSON proto value compactly with sorted keys.
func jsonText(m proto.Message) string {
	var v any
	switch x := m.(type) {
	case *structpb.Struct:
		v = x.AsMap()
	case *structpb.Value:
		v = x.AsInterface()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// TestReport is the outcome of RunTests.
type TestReport struct {
	// Policy and Digest identify the policy under test.
	Policy, Digest string
	// Cases in suite order.
	Cases []CaseReport
}

// CaseReport is the outcome of one test case.
type CaseReport struct {
	// Name of the case.
	Name string
	// Failures lists every difference from the expectation; empty when the case passed.
	Failures []string
}

// Passed reports whether the case met its expectation.
func (c CaseReport) Passed() bool { return len(c.Failures) == 0 }

// Failed reports whether any case failed.
func (r TestReport) Failed() bool {
	return slices.ContainsFunc(r.Cases, func(c CaseReport) bool { return !c.Passed() })
}

// WriteTo prints the report: one PASS/FAIL line per case, each difference indented under its
// failing case, and a summary line.
func (r TestReport) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	failed := 0
	for _, c := range r.Cases {
		if c.Passed() {
			fmt.Fprintf(&b, "PASS  %s\n", c.Name)
			continue
		}
		failed++
		fmt.Fprintf(&b, "FAIL  %s\n", c.Name)
		for _, f := range c.Failures {
			fmt.Fprintf(&b, "        %s\n", f)
		}
	}
	status := "ok"
	if failed > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(&b, "%s: policy %s (%s): %d cases, %d passed, %d failed\n",
		status, r.Policy, r.Digest, len(r.Cases), len(r.Cases)-failed, failed)
	return b.WriteTo(w)
}

// String is the printed report.
func (r TestReport) String() string {
	var b strings.Builder
	_, _ = r.WriteTo(&b)
	return b.String()
}
