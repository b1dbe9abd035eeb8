package typed_test

import (
	"fmt"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// A rate_limit event with no policy objection is answered with the built-in backoff: the
// reference server's example of 1500 ms becomes a retry after 3000 ms.
func ExampleDecide() {
	ev := &ahpv1.Event{
		Id:   "req-rate_limit",
		Type: ahpv1.EventType_EVENT_TYPE_RATE_LIMIT,
		Body: &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{
			SessionId:    "sess-1",
			RetryAfterMs: 1500,
			CurrentUsage: "95000/100000 tokens",
		}},
	}
	d := &ahpv1.Decision{}
	if err := typed.Decide(d, ev, policy.Result{}, &policy.SessionView{}, policy.Settings{}, time.Now()); err != nil {
		panic(err)
	}
	fmt.Println(d.GetRateLimit().GetRetry().GetRetryAfterMs(), d.GetVerdict())
	// Output: 3000 VERDICT_DEFER
}

// A deny rule refuses any typed event with that event's own refusal.
func ExampleDecide_deny() {
	ev := &ahpv1.Event{
		Id:   "e1",
		Type: ahpv1.EventType_EVENT_TYPE_CONFIRMATION,
		Body: &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{Message: "Spend $12?"}},
	}
	res := policy.Result{
		Verdict: ahpv1.Verdict_VERDICT_DENY,
		Effects: []*ahpv1.Effect{{RuleId: "budget", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "cost above budget"}}}},
	}
	d := &ahpv1.Decision{}
	if err := typed.Decide(d, ev, res, nil, policy.Settings{}, time.Now()); err != nil {
		panic(err)
	}
	fmt.Println(d.GetConfirmation().GetReject().GetReason())
	// Output: denied by policy: cost above budget
}

func ExampleClassify() {
	c := typed.Classify("where is the auth function?", "/repo", policy.IntentSettings{})
	fmt.Println(c.Intent, c.Confidence, c.Hints.GetTargetName(), c.Hints.GetTargetType(), c.Hints.GetDomain())
	// Output: locate 0.82 auth function coding
}

func ExampleRank() {
	facts := []*ahpv1.Fact{
		{Content: "the build uses Go 1.26", Source: "session", Confidence: 0.9},
		{Content: "fixed the auth bug in login.go", Source: "session", Confidence: 0.8},
		{Content: "auth config lives in config/auth.yaml", Source: "session", Confidence: 0.9},
	}
	for _, m := range typed.Rank("previous auth bug", facts) {
		fmt.Printf("%.2f %s\n", m.Score, m.Fact.GetContent())
	}
	// Output:
	// 1.00 fixed the auth bug in login.go
	// 0.32 auth config lives in config/auth.yaml
}
