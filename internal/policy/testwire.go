package policy

import (
	"encoding/json"
	"errors"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// WireRequests lets a test file state a case as a dialect's own wire request (`request:`) and
// the expected wire answer (`expect.answer_effects:`), so a suite can say what an Agent Hooks
// Protocol "draft" caller sends and gets back. The policy package knows no dialect: the caller of
// ParseTestsWith supplies the codec (cmd/ahp-server passes the Hooks codec, hooks.WireRequests).
type WireRequests interface {
	// DecodeRequest turns one JSON-RPC request into the canonical event and the caller's
	// capabilities, and returns how to render a decision as that caller's answer (the whole
	// JSON-RPC response).
	DecodeRequest(request []byte) (ev *ahpv1.Event, caps *ahpv1.Capabilities, render func(*ahpv1.Decision) ([]byte, error), err error)
}

// ParseTestsWith is ParseTests for files whose cases may give `request:` instead of `event:`
// and `capabilities:`, decoded by wire.
func ParseTestsWith(data []byte, wire WireRequests) (*TestSuite, error) {
	return parseTests(data, wire)
}

// wireCase is what a `request:` case keeps for checking the rendered answer.
type wireCase struct {
	render func(*ahpv1.Decision) ([]byte, error)
}

// buildWire fills tc from a `request:` document.
func (spec testCaseSpec) buildWire(tc *TestCase, wire WireRequests) error {
	if wire == nil {
		return errors.New("request: this test runner reads no wire requests (use event and capabilities)")
	}
	if spec.Event != nil || spec.Capabilities != nil {
		return errors.New("give request, or event and capabilities, not both")
	}
	raw, err := json.Marshal(spec.Request)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	ev, caps, render, err := wire.DecodeRequest(raw)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	tc.Input.Event, tc.Input.Capabilities = ev, caps
	tc.wire = &wireCase{render: render}
	return nil
}

// checkAnswer renders the result for the case's caller and compares the answer's
// result.effects with the expectation (JSON values, in order).
func (x expectation) checkAnswer(tc TestCase, res Result, failf func(string, ...any)) {
	if x.answerEffects == nil {
		return
	}
	if tc.wire == nil {
		failf("answer_effects: the case gives no request to answer")
		return
	}
	out, err := tc.wire.render(&ahpv1.Decision{Effects: res.Effects, Verdict: res.Verdict, MatchedRuleIds: res.MatchedRuleIDs})
	if err != nil {
		failf("answer_effects: the answer could not be rendered: %v", err)
		return
	}
	var resp struct {
		Result struct {
			Effects []any `json:"effects"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		failf("answer_effects: the answer is not JSON: %v", err)
		return
	}
	got, _ := json.Marshal(resp.Result.Effects)
	want, _ := json.Marshal(x.answerEffects)
	if string(got) != string(want) {
		failf("answer_effects: got %s, want %s", got, want)
	}
}
