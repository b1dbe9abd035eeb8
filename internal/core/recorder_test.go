package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
)

type fakeRecorder struct {
	mu        sync.Mutex
	fail      bool
	required  bool
	decisions int
	observed  int
}

func (r *fakeRecorder) RecordDecision(*ahpv1.Event, *ahpv1.Decision, time.Time) error {
	return r.record(&r.decisions)
}

func (r *fakeRecorder) RecordObservation(*ahpv1.Event, time.Time) error {
	return r.record(&r.observed)
}

// record counts a record in *n, or fails while r is set to fail.
func (r *fakeRecorder) record(n *int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("disk full")
	}
	*n++
	return nil
}

func (r *fakeRecorder) setFail(fail bool) {
	r.mu.Lock()
	r.fail = fail
	r.mu.Unlock()
}

func (r *fakeRecorder) Required() bool { return r.required }

type countingObserver struct {
	mu                sync.Mutex
	decided, observed int
}

func (o *countingObserver) Decided(*ahpv1.Event, *ahpv1.Decision) {
	o.mu.Lock()
	o.decided++
	o.mu.Unlock()
}
func (o *countingObserver) Observed(*ahpv1.Event) { o.mu.Lock(); o.observed++; o.mu.Unlock() }

func recordingCore(t *testing.T, r core.Recorder, o core.Observer) *core.Core {
	t.Helper()
	p := policy.Default()
	return core.New(core.Config{
		Policy: func() core.Policy { return p }, Typed: typed.Decide,
		Recorder: r, Observer: o, Logger: testkit.Discard(),
	})
}

func TestRequiredAuditFailureFailsClosed(t *testing.T) {
	t.Parallel()
	rec := &fakeRecorder{fail: true, required: true}
	c := recordingCore(t, rec, nil)
	d, err := c.Intercept(context.Background(), testkit.ShellEvent("e1", "ls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := syntheticDeny(t, d).GetCode(); code != "dev.ahpgateway.audit.unavailable" {
		t.Fatalf("deny code %q, want dev.ahpgateway.audit.unavailable", code)
	}
	// Once the audit works again, the retry is decided afresh, not replayed as a denial.
	rec.setFail(false)
	d, err = c.Intercept(context.Background(), testkit.ShellEvent("e1", "ls"), nil)
	wantFreshAllow(t, "after recovery", d, err)
	// A typed event gets its own refusal shape.
	rec.setFail(true)
	conf := &ahpv1.Event{Id: "c", Type: ahpv1.EventType_EVENT_TYPE_CONFIRMATION, Body: &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{
		ConfirmationType: &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: ahpv1.ConfirmationKind_CONFIRMATION_KIND_USER_CONFIRM}},
	}}}
	d, err = c.Typed(context.Background(), conf, ahpv1.EventType_EVENT_TYPE_CONFIRMATION)
	if err != nil {
		t.Fatalf("typed under failing audit: %v", err)
	}
	if d.GetConfirmation().GetReject() == nil {
		t.Fatalf("typed under failing audit: d.GetConfirmation().GetReject() is nil")
	}
	if !d.GetSynthetic() {
		t.Fatalf("typed under failing audit: d.GetSynthetic() is false")
	}
}

func TestOptionalAuditFailureDoesNotChangeDecisions(t *testing.T) {
	t.Parallel()
	c := recordingCore(t, &fakeRecorder{fail: true}, nil)
	d, err := c.Intercept(context.Background(), testkit.ShellEvent("e1", "ls"), nil)
	wantFreshAllow(t, "decision", d, err)
}

// wantFreshAllow fails the test unless d is the policy's own allow, decided now: no error, not
// replayed, not synthetic.
func wantFreshAllow(t *testing.T, what string, d *ahpv1.Decision, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d.GetReplayed() {
		t.Fatalf("%s: d.GetReplayed() is true", what)
	}
	if d.GetSynthetic() {
		t.Fatalf("%s: d.GetSynthetic() is true", what)
	}
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("%s: d.GetVerdict() = %v, want VERDICT_ALLOW", what, d.GetVerdict())
	}
}

func TestRequiredAuditFailureRefusesObservationAndAllowsRetry(t *testing.T) {
	t.Parallel()
	rec := &fakeRecorder{fail: true, required: true}
	obs := &countingObserver{}
	c := recordingCore(t, rec, obs)
	ev := &ahpv1.Event{Id: "o1", Source: "urn:t", Type: ahpv1.EventType_EVENT_TYPE_TOOL_AFTER}
	_, err := c.Observe(context.Background(), ev)
	if ce, ok := core.AsError(err); !ok {
		t.Fatalf("not a core error: %v", err)
	} else if ce.Code != core.CodeUnavailable {
		t.Fatalf("ce.Code = %v, want core.CodeUnavailable", ce.Code)
	}
	rec.setFail(false)
	dup, err := c.Observe(context.Background(), ev)
	if err != nil {
		t.Fatalf("retry after recovery: %v", err)
	}
	if dup {
		t.Fatalf("retry after recovery: dup is true")
	}
	if rec.observed != 1 {
		t.Fatalf("recorded %d observations, want 1", rec.observed)
	}
	if obs.observed != 1 {
		t.Fatalf("observer saw %d observations, want 1", obs.observed)
	}
}

func TestEveryDecisionIsRecordedAndCounted(t *testing.T) {
	t.Parallel()
	rec := &fakeRecorder{}
	obs := &countingObserver{}
	c := recordingCore(t, rec, obs)
	for _, cmd := range []string{"ls", "rm -rf /", "ls"} {
		if _, err := c.Intercept(context.Background(), testkit.ShellEvent("same-"+cmd, cmd), nil); err != nil {
			t.Fatal(err)
		}
	}
	if rec.decisions != 2 || obs.decided != 3 { // the third call is a replay: counted, not re-recorded
		t.Fatalf("recorded %d, counted %d", rec.decisions, obs.decided)
	}
}
