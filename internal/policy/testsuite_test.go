package policy_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

const suitePolicy = `version: 1
name: suite
rules:
  - id: deny-rm
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: input.command.startsWith("rm ")
    effect: {deny: {reason: no deleting}}
  - id: add-flag
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: input.command.startsWith("npm ")
    effect: {modify: {merge: {flag: true}}}
  - id: idle-defer
    on: [idle]
    when: payload.idle_duration_ms < 1000
    effect: {typed: {action: defer, reason: too soon}}
`

func mustParseTests(t *testing.T, src string) *policy.TestSuite {
	t.Helper()
	s, err := policy.ParseTests([]byte(src))
	if err != nil {
		t.Fatalf("ParseTests: %v", err)
	}
	return s
}

func TestReportSaysExactlyWhatDiffered(t *testing.T) {
	t.Parallel()
	suite := mustParseTests(t, `cases:
  - name: passes
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "rm x"}}}
    expect: {verdict: deny, rule_ids: [deny-rm], reason_contains: deleting, effects: [deny]}
  - name: fails everywhere
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "npm i"}}}
    expect:
      verdict: allow
      rule_ids: [other]
      reason_contains: nope
      input: {flag: false}
      effects: [deny]
  - name: typed
    event: {type: idle, payload: {idle_duration_ms: 10}}
    expect: {typed_action: allow, typed: {reason: later}}
  - name: unexpected error
    event: {type: tool.before, tool: {name: Bash, kind: shell}}
    expect: {verdict: allow}
`)
	report := mustParse(t, suitePolicy).RunTests(suite)
	if !report.Failed() {
		t.Fatal("report should fail")
	}
	out := report.String()
	for _, want := range []string{
		"PASS  passes\n",
		"FAIL  fails everywhere\n",
		"        verdict: got modify, want allow\n",
		"        rule_ids: got [add-flag], want [other]\n",
		"        effects: got [modify], want [deny]\n",
		`        reason: none contains "nope" (reasons: [])`,
		`        input: got {"command":"npm i","flag":true}, want {"flag":false}`,
		"        typed_action: got defer, want allow\n",
		`        typed.reason: got "too soon", want "later"`,
		`        unexpected evaluation error: rule "deny-rm": when: no such key: command`,
		"FAILED: policy suite (sha256:",
		"4 cases, 1 passed, 3 failed\n",
	} {
		wantContains(t, "report", out, want)
	}
	if report.Cases[0].Passed() != true || report.Cases[1].Passed() {
		t.Errorf("Passed() wrong: %+v", report.Cases)
	}
}

func TestPassingReport(t *testing.T) {
	t.Parallel()
	suite := mustParseTests(t, `cases:
  - name: expected error
    event: {type: tool.before, tool: {name: Bash, kind: shell}}
    expect: {verdict: allow, errors: [deny-rm, add-flag]}
  - name: fallback for a Hooks caller
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "npm i"}}}
    capabilities: [deny]
    expect: {verdict: deny, fallbacks: [add-flag], reason_contains: input must be changed}
`)
	report := mustParse(t, suitePolicy).RunTests(suite)
	if report.Failed() {
		t.Fatalf("report failed:\n%s", report)
	}
	var b strings.Builder
	n, err := report.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Errorf("WriteTo = %d, %v", n, err)
	}
	wantContains(t, "report", b.String(), "ok: policy suite")
}

func TestParseTestsRejectsMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"no cases", "cases: []\n", "no cases"},
		{"unknown case field", "cases:\n  - name: a\n    evnt: {}\n", `unknown field "evnt" in test case`},
		{"unknown expect field", "cases:\n  - name: a\n    event: {type: idle}\n    expect: {verdikt: deny}\n", `unknown field "verdikt" in expect`},
		{"no name", "cases:\n  - event: {type: idle}\n", "name is required"},
		{"no type", "cases:\n  - name: a\n    event: {id: x}\n", "event.type is required"},
		{"bad type", "cases:\n  - name: a\n    event: {type: tool.befor}\n", `unknown event type "tool.befor"`},
		{"unknown event field", "cases:\n  - name: a\n    event: {type: tool.before, tol: {}}\n", `event: unknown field "tol"`},
		{"bad kind", "cases:\n  - name: a\n    event: {type: tool.before, tool: {kind: shel}}\n", `event.tool.kind: unknown value "shel"`},
		{"bad payload", "cases:\n  - name: a\n    event: {type: idle, payload: {idle_duration_ms: soon}}\n", "event.payload.idle_duration_ms: want an unsigned integer"},
		{"bad capability", "cases:\n  - name: a\n    event: {type: idle}\n    capabilities: [deny, block]\n", `unknown effect "block"`},
		{"bad verdict", "cases:\n  - name: a\n    event: {type: idle}\n    expect: {verdict: block}\n", `unknown verdict "block"`},
		{"bad typed key", "cases:\n  - name: a\n    event: {type: idle}\n    expect: {typed: {actoin: x}}\n", `typed: unknown field "actoin"`},
		{"idle and last_seen", "cases:\n  - name: a\n    event: {type: idle}\n    session: {idle_ms: 5, last_seen: '2025-01-01T00:00:00Z'}\n", "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := policy.ParseTests([]byte(tc.src))
			if err == nil {
				t.Fatal("ParseTests succeeded")
			}
			wantContains(t, "error", err.Error(), tc.want)
		})
	}
}

func TestTestEventsUseFriendlyNames(t *testing.T) {
	t.Parallel()
	// limit_type is a string in the friendly form; an object is a mistake that is reported.
	_, err := policy.ParseTests([]byte("cases:\n  - name: a\n    event: {type: rate_limit, payload: {limit_type: {custom: x}}}\n"))
	if err == nil || !strings.Contains(err.Error(), "limit_type: want a string") {
		t.Fatalf("err = %v", err)
	}

	suite := mustParseTests(t, `cases:
  - name: everything
    now: "2025-03-01T10:00:00Z"
    event:
      type: rate_limit
      id: e-9
      session: {id: s, agent: {id: a}}
      harness: {agent_id: a, depth: 1, context: {current_task: t, recent_facts: [{content: c, confidence: 0.5}]}}
      origin: {dialect: harness, protocol_version: "2.4"}
      payload: {session_id: s, limit_type: partner_quota, retry_after_ms: 5}
    session: {id: s, idle_ms: 1500, facts: [{content: f}]}
`)
	in := suite.Cases[0].Input
	want := &ahpv1.Event{
		Id:      "e-9",
		Type:    ahpv1.EventType_EVENT_TYPE_RATE_LIMIT,
		Session: &ahpv1.Session{Id: "s", Agent: &ahpv1.Agent{Id: "a"}},
		Harness: &ahpv1.HarnessEnvelope{AgentId: "a", Depth: 1, Context: &ahpv1.EventContext{
			CurrentTask: strPtr("t"),
			RecentFacts: &ahpv1.FactList{Values: []*ahpv1.Fact{{Content: "c", Confidence: 0.5}}},
		}},
		Origin: &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HARNESS, ProtocolVersion: "2.4"},
		Body: &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{
			SessionId:    "s",
			LimitType:    &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Custom{Custom: "partner_quota"}},
			RetryAfterMs: 5,
		}},
	}
	if !proto.Equal(in.Event, want) {
		t.Errorf("event =\n%v\nwant\n%v", in.Event, want)
	}
	if got := in.Now.Sub(in.Session.LastSeen).Milliseconds(); got != 1500 {
		t.Errorf("idle = %dms, want 1500", got)
	}
	if len(in.Session.Facts) != 1 || in.Session.Facts[0].GetContent() != "f" {
		t.Errorf("facts = %v", in.Session.Facts)
	}
}

func TestTestEventDefaults(t *testing.T) {
	t.Parallel()
	suite := mustParseTests(t, "cases:\n  - name: a\n    event: {type: pre_action}\n  - name: b\n    event: {type: heartbeat, payload: {uptime_ms: 5}}\n")
	a, b := suite.Cases[0].Input, suite.Cases[1].Input
	if a.Event.GetId() != "case-1" || a.Event.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE {
		t.Errorf("event = %v", a.Event)
	}
	if !a.Now.Equal(policy.DefaultTestTime) || a.Capabilities != nil || a.Session == nil {
		t.Errorf("defaults: now %v, caps %v, session %v", a.Now, a.Capabilities, a.Session)
	}
	if b.Event.GetPayload().GetStructValue().GetFields()["uptime_ms"].GetNumberValue() != 5 {
		t.Errorf("untyped payload = %v", b.Event.GetPayload())
	}
}
