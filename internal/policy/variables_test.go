package policy_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// holds asserts that each CEL expression is true for in, without evaluation errors.
func holds(t *testing.T, in policy.Input, exprs ...string) {
	t.Helper()
	for _, expr := range exprs {
		p, err := policy.Parse([]byte("version: 1\nrules:\n  - id: probe\n    when: '"+expr+"'\n    effect: {deny: {reason: x}}\n"), "probe.yaml")
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		res := p.Evaluate(in)
		switch {
		case len(res.Errors) > 0:
			t.Errorf("%s: %v", expr, res.Errors[0].Err)
		case len(res.MatchedRuleIDs) == 0:
			t.Errorf("%s: false", expr)
		}
	}
}

func TestEventVariable(t *testing.T) {
	t.Parallel()
	ext, _ := structpb.NewStruct(map[string]any{"dev.example/trace": "abc"})
	meta, _ := structpb.NewStruct(map[string]any{"team": "infra"})
	out := structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("line")}})
	in := toolBefore(t, "mcp__github__get", ahpv1.ToolKind_TOOL_KIND_MCP, map[string]any{"n": 3})
	ev := in.Event
	ev.Time = "2025-06-01T11:59:00Z"
	ev.Session.Cwd = "/work"
	ev.Session.WorkspaceRoots = []string{"/work", "/lib"}
	ev.Session.Model = "model-x"
	ev.Session.Agent.Type = "coder"
	ev.Tool.Output = out
	ev.Tool.Error = &ahpv1.ToolError{Message: "boom", Code: structpb.NewNumberValue(7), Category: "io"}
	ev.Tool.Mcp = &ahpv1.McpTool{Server: "github", Tool: "get"}
	ev.Extensions = ext
	ev.Origin = &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HARNESS, ProtocolVersion: "2.4", EventType: "pre_action"}
	ev.Harness = &ahpv1.HarnessEnvelope{AgentId: "agent-1", Depth: 2, Metadata: meta,
		Context: &ahpv1.EventContext{CurrentTask: strPtr("fix bug"), SessionStats: &ahpv1.SessionStats{TotalActions: 12}}}
	holds(t, in,
		`event.id == "evt-1" && event.source.startsWith("https://")`,
		`event.type == "tool.before" && event.time == "2025-06-01T11:59:00Z"`,
		`timestamp(event.time) < now`,
		`event.session.id == "sess-1" && event.session.cwd == "/work" && "/lib" in event.session.workspace_roots`,
		`event.session.model == "model-x" && event.session.agent.id == "agent-1" && event.session.agent.type == "coder"`,
		`event.tool.call_id == "call-1" && event.tool.name == "mcp__github__get" && event.tool.kind == "mcp"`,
		`event.tool.input.n == 3 && event.tool.output[0] == "line"`,
		`event.tool.error.message == "boom" && event.tool.error.code == 7 && event.tool.error.category == "io"`,
		`event.tool.mcp.server == "github" && event.tool.mcp.tool == "get"`,
		`event.extensions["dev.example/trace"] == "abc"`,
		`event.harness.agent_id == "agent-1" && event.harness.depth == 2 && event.harness.metadata.team == "infra"`,
		`event.harness.context.current_task == "fix bug" && event.harness.context.session_stats.total_actions == 12`,
		`!has(event.harness.context.memory_summary)`,
		`event.origin.dialect == "harness" && event.origin.protocol_version == "2.4" && event.origin.event_type == "pre_action"`,
		`event.payload == {} && event.raw_payload == null && event.outcome == ""`,
		`tool == event.tool && input == tool.input && type(tool) == map && size(tool) == 7`,
		`"name" in tool && !("nope" in tool) && tool.exists(k, k == "mcp")`,
	)
}

func strPtr(s string) *string { return &s }

func TestAbsentPartsReadAsZeroValues(t *testing.T) {
	t.Parallel()
	in := policy.Input{Event: &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_SESSION_START}, Now: testNow}
	holds(t, in,
		`tool.name == "" && tool.kind == "" && input == {} && !has(input.command)`,
		`tool.output == null && tool.error.message == "" && tool.mcp.server == ""`,
		`event.session.id == "" && event.extensions == {} && event.harness.context == {}`,
		`session.id == "" && session.event_count == 0 && session.idle_ms == 0 && session.facts == []`,
		`session.last_seen == timestamp("1970-01-01T00:00:00Z")`,
		`payload == {}`,
	)
}

func TestSessionVariable(t *testing.T) {
	t.Parallel()
	in := shell(t, "ls")
	in.Session = &policy.SessionView{
		SessionID: "sess-1", AgentID: "agent-1",
		EventCount: 40, ToolCallCount: 12, ErrorCount: 3, DenyCount: 2,
		FirstSeen: testNow.Add(-time.Hour), LastSeen: testNow.Add(-90 * time.Second),
		LastEventType: "tool.after", RunStatus: "executing", VerificationStatus: "failed",
		Facts:  []*ahpv1.Fact{{Content: "uses go", Source: "go.mod", Confidence: 0.5}},
		Recent: []policy.EventSummary{{Type: "tool.before", ToolName: "Bash", ToolKind: "shell", Time: testNow}},
	}
	holds(t, in,
		`session.id == "sess-1" && session.agent_id == "agent-1"`,
		`session.event_count == 40 && session.tool_call_count == 12 && session.error_count == 3 && session.deny_count == 2`,
		`session.deny_count * 2 == 4`,
		`session.idle_ms == 90000`,
		`now - session.first_seen == duration("1h")`,
		`session.last_event_type == "tool.after" && session.run_status == "executing" && session.verification_status == "failed"`,
		`session.facts[0].content == "uses go" && session.facts[0].confidence == 0.5`,
		`session.recent.exists(r, r.tool_kind == "shell" && r.tool_name == "Bash" && r.time == now)`,
	)
}

func TestPayloadVariableUsesHarnessWireNames(t *testing.T) {
	t.Parallel()
	ev := func(body any) policy.Input {
		e := &ahpv1.Event{Id: "e"}
		switch b := body.(type) {
		case *ahpv1.IdlePayload:
			e.Type, e.Body = ahpv1.EventType_EVENT_TYPE_IDLE, &ahpv1.Event_Idle{Idle: b}
		case *ahpv1.RateLimitPayload:
			e.Type, e.Body = ahpv1.EventType_EVENT_TYPE_RATE_LIMIT, &ahpv1.Event_RateLimit{RateLimit: b}
		case *ahpv1.ConfirmationPayload:
			e.Type, e.Body = ahpv1.EventType_EVENT_TYPE_CONFIRMATION, &ahpv1.Event_Confirmation{Confirmation: b}
		case *ahpv1.PlanningPayload:
			e.Type, e.Body = ahpv1.EventType_EVENT_TYPE_PLANNING, &ahpv1.Event_Planning{Planning: b}
		case *ahpv1.ContextPerceptionPayload:
			e.Type, e.Body = ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION, &ahpv1.Event_ContextPerception{ContextPerception: b}
		case *ahpv1.IntentDetectionPayload:
			e.Type, e.Body = ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION, &ahpv1.Event_IntentDetection{IntentDetection: b}
		}
		return policy.Input{Event: e, Now: testNow}
	}
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		holds(t, ev(&ahpv1.IdlePayload{IdleDurationMs: 6000, IdleReason: "waiting"}),
			`payload.idle_duration_ms > 5000 && payload.idle_duration_ms - 1000 == 5000`,
			`payload.idle_reason == "waiting" && !has(payload.suggested_action)`,
			`event.payload == payload`,
		)
	})
	t.Run("rate_limit known and custom", func(t *testing.T) {
		t.Parallel()
		holds(t, ev(&ahpv1.RateLimitPayload{
			LimitType:    &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Known{Known: ahpv1.RateLimitKind_RATE_LIMIT_KIND_LLM_TOKEN_LIMIT}},
			RetryAfterMs: 2000,
		}), `payload.limit_type == "llm_token_limit" && payload.retry_after_ms * 2 == 4000`)
		holds(t, ev(&ahpv1.RateLimitPayload{LimitType: &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Custom{Custom: "quota"}}}),
			`payload.limit_type == "quota"`)
	})
	t.Run("confirmation", func(t *testing.T) {
		t.Parallel()
		holds(t, ev(&ahpv1.ConfirmationPayload{
			ConfirmationType: &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: ahpv1.ConfirmationKind_CONFIRMATION_KIND_SAFETY_CONFIRM}},
			Message:          "delete?",
			Options:          &ahpv1.StringList{Values: []string{"yes", "no"}},
		}), `payload.confirmation_type == "safety_confirm" && payload.options == ["yes", "no"] && payload.message == "delete?"`)
	})
	t.Run("planning", func(t *testing.T) {
		t.Parallel()
		c, _ := structpb.NewValue(map[string]any{"budget": 3})
		holds(t, ev(&ahpv1.PlanningPayload{
			TaskDescription: "ship",
			AvailableStrategies: []*ahpv1.PlanningStrategy{
				{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP}},
				{Strategy: &ahpv1.PlanningStrategy_Custom{Custom: "mine"}},
			},
			Constraints: c,
		}), `payload.available_strategies == ["step_by_step", "mine"] && payload.constraints.budget == 3`)
	})
	t.Run("context_perception", func(t *testing.T) {
		t.Parallel()
		holds(t, ev(&ahpv1.ContextPerceptionPayload{
			Intent:      ahpv1.PerceptionIntent_PERCEPTION_INTENT_LOCATE,
			Target:      &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Location{Location: &ahpv1.LocationTarget{Path: "/"}}},
			Constraints: &ahpv1.PerceptionConstraints{MaxResults: u64Ptr(5)},
		}),
			`payload.intent == "locate" && payload.target.location.path == "/" && payload.domain == ""`,
			`payload.constraints.max_results == 5 && !has(payload.constraints.include_sources)`,
		)
	})
	t.Run("untyped events see the dialect payload", func(t *testing.T) {
		t.Parallel()
		raw, _ := structpb.NewValue(map[string]any{"prompt": "hello", "tokens": 12})
		in := policy.Input{Event: &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, Payload: raw}, Now: testNow}
		holds(t, in, `payload.prompt == "hello" && payload.tokens == 12 && event.raw_payload.prompt == "hello"`)
	})
	t.Run("typed payload keeps unmodelled fields", func(t *testing.T) {
		t.Parallel()
		in := ev(&ahpv1.IntentDetectionPayload{Prompt: "find main"})
		in.Event.Payload, _ = structpb.NewValue(map[string]any{"x_trace": "t1", "prompt": "ignored"})
		holds(t, in, `payload.prompt == "find main" && payload.x_trace == "t1"`)
	})
}

func u64Ptr(u uint64) *uint64 { return &u }

func TestHelperFunctions(t *testing.T) {
	t.Parallel()
	in := toolBefore(t, "Write", ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, map[string]any{"file_path": "/a/b/../c/.env.local"})
	holds(t, in,
		`path.base(input.file_path) == ".env.local" && path.ext(input.file_path) == ".local"`,
		`path.clean(input.file_path) == "/a/c/.env.local" && path.dir(input.file_path) == "/a/c"`,
		`glob(path.base(input.file_path), ".env*") && !glob("a/b", "*")`,
		`input.?missing.orValue("d") == "d"`,
		`"a,b".split(",") == ["a", "b"] && ["x", "y"].join("-") == "x-y"`,
		`sets.contains(["a", "b"], ["a"])`,
		`cel.bind(n, path.base(input.file_path), n.startsWith(".env"))`,
	)
}
