package policy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// TestWireRequestSuite runs a suite whose cases state Agent Hooks requests (v0.1 and draft) and the
// answers' effects.
func TestWireRequestSuite(t *testing.T) {
	t.Parallel()
	p, err := policy.LoadFile("testdata/draft.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/draft_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	suite, err := policy.ParseTestsWith(data, hooks.WireRequests{})
	if err != nil {
		t.Fatal(err)
	}
	if report := p.RunTests(suite); report.Failed() {
		t.Errorf("suite failed:\n%s", report)
	}
	// A wrong expectation fails, naming what the answer held.
	bad := strings.Replace(string(data), "answer_effects: [{type: ask}]", "answer_effects: [{type: allow}]", 1)
	suite, err = policy.ParseTestsWith([]byte(bad), hooks.WireRequests{})
	if err != nil {
		t.Fatal(err)
	}
	report := p.RunTests(suite)
	if !report.Failed() || !strings.Contains(report.String(), `answer_effects: got [{"type":"ask"}]`) {
		t.Errorf("a wrong answer_effects passed or was not explained:\n%s", report)
	}
	// Without a wire codec, a request case is a load error.
	if _, err := policy.ParseTests(data); err == nil || !strings.Contains(err.Error(), "reads no wire requests") {
		t.Errorf("ParseTests of a request case: %v", err)
	}
}
