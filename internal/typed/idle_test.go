package typed_test

import (
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestIdleBuiltin(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	tests := []struct {
		name   string
		ms     uint64
		view   *policy.SessionView
		s      policy.Settings
		reason string // "" means allow
	}{
		{name: "long idle is allowed", ms: 30000},
		{name: "exactly the minimum is allowed", ms: 5000},
		{name: "short idle defers", ms: 2000, reason: "idle for 2000ms, below the 5000ms minimum"},
		{name: "custom minimum", ms: 30000, s: policy.Settings{Idle: policy.IdleSettings{MinIdleMs: 60000}},
			reason: "idle for 30000ms, below the 60000ms minimum"},
		{name: "recent activity in the session shortens the idle time", ms: 30000,
			view:   &policy.SessionView{Recent: []policy.EventSummary{{Type: "tool.before", Time: ago(1200 * time.Millisecond)}}},
			reason: "idle for 1200ms since the last tool.before, below the 5000ms minimum"},
		{name: "idle and heartbeat events are not activity", ms: 30000,
			view: &policy.SessionView{Recent: []policy.EventSummary{
				{Type: "heartbeat", Time: ago(time.Second)},
				{Type: "idle", Time: ago(2 * time.Second)},
				{Type: "tool.after", Time: ago(time.Minute)},
			}}},
		{name: "activity older than the reported idle time changes nothing", ms: 2000,
			view:   &policy.SessionView{Recent: []policy.EventSummary{{Type: "tool.after", Time: ago(time.Hour)}}},
			reason: "idle for 2000ms, below the 5000ms minimum"},
		{name: "an event stamped in the future counts as activity now", ms: 30000,
			view:   &policy.SessionView{Recent: []policy.EventSummary{{Type: "tool.after", Time: now.Add(time.Second)}}},
			reason: "idle for 0ms since the last tool.after, below the 5000ms minimum"},
		{name: "LastSeen is used when no recent events are kept", ms: 30000,
			view:   &policy.SessionView{LastSeen: ago(3 * time.Second), LastEventType: "model.request.before"},
			reason: "idle for 3000ms since the last model.request.before, below the 5000ms minimum"},
		{name: "LastSeen of an idle event is not activity", ms: 30000,
			view: &policy.SessionView{LastSeen: ago(time.Second), LastEventType: "idle"}},
		{name: "running run defers when configured", ms: 30000,
			view:   &policy.SessionView{RunStatus: "executing"},
			s:      policy.Settings{Idle: policy.IdleSettings{DeferWhileRunning: true}},
			reason: "run is executing; idle work waits until it ends"},
		{name: "verifying run defers when configured", ms: 30000,
			view:   &policy.SessionView{RunStatus: "verifying"},
			s:      policy.Settings{Idle: policy.IdleSettings{DeferWhileRunning: true}},
			reason: "run is verifying; idle work waits until it ends"},
		{name: "running run is ignored by default", ms: 30000, view: &policy.SessionView{RunStatus: "executing"}},
		{name: "completed run does not defer", ms: 30000,
			view: &policy.SessionView{RunStatus: "completed"},
			s:    policy.Settings{Idle: policy.IdleSettings{DeferWhileRunning: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := decide(t, idleEvent(tt.ms), policy.Result{}, tt.view, tt.s)
			if tt.reason == "" {
				equal(t, arm(d), "idle.allow", "arm")
				return
			}
			equal(t, arm(d), "idle.defer", "arm")
			equal(t, d.GetIdle().GetDefer().GetReason(), tt.reason, "reason")
		})
	}
}

func TestIdleRuleAnswers(t *testing.T) {
	t.Parallel()
	t.Run("allow overrides the minimum", func(t *testing.T) {
		t.Parallel()
		d := decide(t, idleEvent(10), typedResult(policy.TypedAnswer{RuleID: "r", Action: "allow"}), nil, policy.Settings{})
		equal(t, arm(d), "idle.allow", "arm")
	})
	t.Run("defer without a reason leaves the reason out", func(t *testing.T) {
		t.Parallel()
		d := decide(t, idleEvent(60000), typedResult(policy.TypedAnswer{RuleID: "r", Action: "defer"}), nil, policy.Settings{})
		equal(t, arm(d), "idle.defer", "arm")
		equal(t, d.GetIdle().GetDefer().Reason == nil, true, "reason unset")
	})
}
