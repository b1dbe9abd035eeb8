package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/bench"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
)

func TestWorkloadPayloadSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 10, 64, 256, 4096, bench.MaxPayloadBytes} {
		wl, err := bench.NewWorkload(size)
		if err != nil {
			t.Fatal(err)
		}
		for seq := range uint64(2) {
			ev := wl.ToolBefore(0, seq)
			data, err := json.Marshal(ev.GetTool().GetInput().AsMap())
			if err != nil {
				t.Fatal(err)
			}
			bare := len(`{"command":""}`) + len(bench.Commands[seq])
			want := max(size, bare)
			if size > bare && size < bare+len(`,"description":"x"`) {
				want = bare // too small to pad
			}
			if len(data) != want {
				t.Errorf("payload %d, request %d: len(data) = %v, want %v", size, seq, len(data), want)
			} else if wl.InputBytes(seq) != want {
				t.Errorf("payload %d, request %d: wl.InputBytes(seq) = %v, want %v", size, seq, wl.InputBytes(seq), want)
			}
			if got := ev.GetTool().GetInput().GetFields()["command"].GetStringValue(); got != bench.Commands[seq] {
				t.Errorf("command %q, want %q", got, bench.Commands[seq])
			}
		}
	}
	for _, bad := range []int{-1, bench.MaxPayloadBytes + 1} {
		if _, err := bench.NewWorkload(bad); err == nil {
			t.Errorf("NewWorkload(%d) accepted", bad)
		}
	}
}

func TestWorkloadEventIDsAreUniquePerRun(t *testing.T) {
	t.Parallel()
	a, _ := bench.NewWorkload(0)
	b, _ := bench.NewWorkload(0)
	if a.EventID(1) == a.EventID(2) {
		t.Fatalf("ids %q %q %q: a.EventID(1) == a.EventID(2); want unique per request and per run", a.EventID(1), a.EventID(2), b.EventID(1))
	}
	if a.EventID(1) == b.EventID(1) {
		t.Fatalf("ids %q %q %q: a.EventID(1) == b.EventID(1); want unique per request and per run", a.EventID(1), a.EventID(2), b.EventID(1))
	}
	if a.SessionID(0) == a.SessionID(1) {
		t.Fatal("workers share a session")
	}
}

// TestHooksInterceptLineDecodes checks the bridge modes' request line with the project's own
// Agent Hooks decoder: valid, one line, and the same event the Connect modes send.
func TestHooksInterceptLineDecodes(t *testing.T) {
	t.Parallel()
	wl, err := bench.NewWorkload(300)
	if err != nil {
		t.Fatal(err)
	}
	for seq := range uint64(2) {
		line := wl.AppendHooksIntercept([]byte("garbage to overwrite"[:0]), 3, seq)
		if bytes.ContainsAny(line, "\r\n") {
			t.Fatalf("not one line of JSON: bytes.ContainsAny(line, \"\\r\\n\") is true")
		}
		if !json.Valid(line) {
			t.Fatalf("not one line of JSON: json.Valid(line) is false")
		}
		msg, err := hooks.DecodeMessage(line)
		if err != nil {
			t.Fatalf("request %d does not decode: %v\n%s", seq, err, line)
		}
		if msg.Method != "hooks/intercept" {
			t.Fatalf("decoded: msg.Method = %v, want \"hooks/intercept\" in %+v", msg.Method, msg)
		}
		if msg.Intercept == nil {
			t.Fatalf("decoded: msg.Intercept is nil in %+v", msg)
		}
		got := msg.Intercept.Request.GetEvent()
		want := wl.ToolBefore(3, seq)
		if got.GetId() != want.GetId() || got.GetSession().GetId() != want.GetSession().GetId() ||
			got.GetTool().GetCallId() != want.GetTool().GetCallId() || got.GetType() != want.GetType() ||
			got.GetTool().GetKind() != want.GetTool().GetKind() || got.GetSource() != want.GetSource() ||
			!proto.Equal(got.GetTool().GetInput(), want.GetTool().GetInput()) {
			t.Errorf("request %d: decoded event\n%v\nwant\n%v", seq, got, want)
		}
	}
}

// TestBuiltinPolicy checks the policy ahp-bench serves: 50 rules, and the verdicts the checks
// expect for the two commands, with and without padding.
func TestBuiltinPolicy(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse(bench.BuiltinPolicy(), "ahp-bench-50.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Rules()); n != bench.PolicyRules {
		t.Fatalf("n = %v, want bench.PolicyRules", n)
	} else if p.Name() != bench.BuiltinPolicyName {
		t.Fatalf("p.Name() = %v, want bench.BuiltinPolicyName", p.Name())
	}
	for _, size := range []int{0, 2048} {
		wl, _ := bench.NewWorkload(size)
		for seq, want := range []ahpv1.Verdict{ahpv1.Verdict_VERDICT_ALLOW, ahpv1.Verdict_VERDICT_DENY} {
			res := p.Evaluate(policy.Input{Event: wl.ToolBefore(0, uint64(seq)), Session: &policy.SessionView{}, Now: time.Now()})
			if len(res.Errors) > 0 {
				t.Errorf("payload %d, %q: rule errors %v", size, bench.Commands[seq], res.Errors)
			}
			if res.Verdict != want {
				t.Errorf("payload %d, %q: verdict %v, want %v (rules %v)", size, bench.Commands[seq], res.Verdict, want, res.MatchedRuleIDs)
			}
		}
	}
}

func TestExpectation(t *testing.T) {
	t.Parallel()
	fixed := bench.FixedExpectation(bench.VerdictAllow, bench.VerdictDeny)
	if fixed.Check(0, bench.VerdictAllow) != nil {
		t.Errorf("fixed expectation refused a right verdict: fixed.Check(0, bench.VerdictAllow) = %v, want nil", fixed.Check(0, bench.VerdictAllow))
	} else if fixed.Check(1, bench.VerdictDeny) != nil {
		t.Errorf("fixed expectation refused a right verdict: fixed.Check(1, bench.VerdictDeny) = %v, want nil", fixed.Check(1, bench.VerdictDeny))
	} else if fixed.Check(3, bench.VerdictDeny) != nil {
		t.Errorf("fixed expectation refused a right verdict: fixed.Check(3, bench.VerdictDeny) = %v, want nil", fixed.Check(3, bench.VerdictDeny))
	}
	if err := fixed.Check(2, bench.VerdictDeny); !errors.Is(err, bench.ErrWrongVerdict) {
		t.Errorf("wrong verdict for ls: %v", err)
	}
	learned := bench.LearnedExpectation()
	if learned.Check(0, bench.VerdictAsk) != nil {
		t.Errorf("a learned expectation takes the first answers: learned.Check(0, bench.VerdictAsk) = %v, want nil", learned.Check(0, bench.VerdictAsk))
	} else if learned.Check(1, bench.VerdictAllow) != nil {
		t.Errorf("a learned expectation takes the first answers: learned.Check(1, bench.VerdictAllow) = %v, want nil", learned.Check(1, bench.VerdictAllow))
	} else if !learned.Learned() {
		t.Errorf("a learned expectation takes the first answers: learned.Learned() is false")
	}
	if learned.Check(2, bench.VerdictAsk) != nil {
		t.Errorf("a learned expectation must hold later answers to the first ones: learned.Check(2, bench.VerdictAsk) = %v, want nil", learned.Check(2, bench.VerdictAsk))
	} else if learned.Check(4, bench.VerdictAllow) == nil {
		t.Errorf("a learned expectation must hold later answers to the first ones: learned.Check(4, bench.VerdictAllow) is nil")
	}
}

func TestVerdictOf(t *testing.T) {
	t.Parallel()
	for v, want := range map[ahpv1.Verdict]bench.Verdict{
		ahpv1.Verdict_VERDICT_ALLOW: bench.VerdictAllow, ahpv1.Verdict_VERDICT_DENY: bench.VerdictDeny,
		ahpv1.Verdict_VERDICT_ASK: bench.VerdictAsk, ahpv1.Verdict_VERDICT_MODIFY: bench.VerdictOther,
	} {
		if got := bench.VerdictOf(&ahpv1.Decision{Verdict: v}); got != want {
			t.Errorf("VerdictOf(%v) = %v, want %v", v, got, want)
		}
	}
}
