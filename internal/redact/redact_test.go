package redact_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/redact"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

func newRedactor(t testing.TB, cfg redact.Config) *redact.Redactor {
	t.Helper()
	r, err := redact.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func kinds(rep redact.Report) []string {
	var ks []string
	for _, f := range rep.Masked {
		ks = append(ks, f.Kind)
	}
	return ks
}

func mustJSON(t *testing.T, m proto.Message) string {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatalf("protojson.Marshal: %v", err)
	}
	return string(b)
}

func TestStringMasksEveryPlantedSecret(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	for _, p := range plants {
		got, rep := r.String(p.text)
		if strings.Contains(got, p.secret) {
			t.Errorf("%s: secret survived in %q", p.kind, got)
		}
		if !slices.Contains(kinds(rep), p.kind) {
			t.Errorf("%s: report kinds %v, want %s (output %q)", p.kind, kinds(rep), p.kind, got)
		}
		if !strings.Contains(got, redact.Placeholder(p.kind)) && !strings.Contains(got, "[REDACTED:") {
			t.Errorf("%s: no placeholder in %q", p.kind, got)
		}
		if strings.Contains(fmt.Sprint(rep), p.secret) {
			t.Errorf("%s: the report holds the secret: %v", p.kind, rep)
		}
	}
}

func TestStringKeepsContextAroundSecrets(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	cases := map[string]string{
		"curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c' https://api":          "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://api",
		"DATABASE_URL=postgres://admin:Sup3rS3cretPw@db.internal:5432/app":          "DATABASE_URL=postgres://admin:[REDACTED:url_password]@db.internal:5432/app",
		"GITHUB_TOKEN=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d git push":            "GITHUB_TOKEN=[REDACTED:github_token] git push",
		"a AKIAIOSFODNN7EXAMPLE b AKIAIOSFODNN7EXAMPLE":                             "a [REDACTED:aws_access_key_id] b [REDACTED:aws_access_key_id]",
		"-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\nafter": "[REDACTED:private_key]\nafter",
		`{"password":"p4ss","user":"bob"}`:                                          `{"password":"[REDACTED:secret_assignment]","user":"bob"}`,
		// An AWS secret key is found next to its access key id; a git object id there is not one.
		"AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY":  "[REDACTED:aws_access_key_id],[REDACTED:aws_secret_access_key]",
		"AKIAIOSFODNN7EXAMPLE 9cd2d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7a8b":  "[REDACTED:aws_access_key_id] 9cd2d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7a8b",
		"AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYX": "[REDACTED:aws_access_key_id] wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYX",
		"GITHUB_PAT=opaque sort_key=name":                                "GITHUB_PAT=[REDACTED:secret_assignment] sort_key=name",
	}
	for in, want := range cases {
		if got, _ := r.String(in); got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestOrdinaryTextSurvives(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	for _, s := range ordinary {
		if got, rep := r.String(s); got != s || !rep.Empty() {
			t.Errorf("String(%q) = %q, report %+v; want it unchanged", s, got, rep)
		}
	}
	// base64 file content in moderation: 3 KiB of base64 of pseudo-random bytes.
	var b strings.Builder
	for i := range 3 << 10 {
		b.WriteByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i*7919+i/64*104729)%64])
	}
	blob := b.String()
	if got, _ := r.String(blob); got != blob {
		t.Errorf("base64 blob changed")
	}
}

// places where a string can be planted in an event, and the path the report names.
var places = []struct {
	path  string
	plant func(ev *ahpv1.Event, s string)
}{
	{"tool.input.command", func(ev *ahpv1.Event, s string) { ev.Tool.Input.Fields["command"] = structpb.NewStringValue(s) }},
	{"tool.input.steps.1.args.0", func(ev *ahpv1.Event, s string) {
		ev.Tool.Input.Fields["steps"] = mustValue([]any{"x", map[string]any{"args": []any{s}}})
	}},
	{"tool.output", func(ev *ahpv1.Event, s string) { ev.Tool.Output = structpb.NewStringValue(s) }},
	{"tool.output.stdout", func(ev *ahpv1.Event, s string) { ev.Tool.Output = mustValue(map[string]any{"stdout": s, "exit": 0}) }},
	{"tool.error.message", func(ev *ahpv1.Event, s string) { ev.Tool.Error = &ahpv1.ToolError{Message: s} }},
	{"tool.unknown_fields.extra", func(ev *ahpv1.Event, s string) { ev.Tool.UnknownFields = mustStruct(map[string]any{"extra": s}) }},
	{"native.payload.tool_response", func(ev *ahpv1.Event, s string) {
		ev.Native = &ahpv1.Native{Provider: "claude-code", Payload: mustStruct(map[string]any{"tool_response": s})}
	}},
	{"extensions.com\\.example/debug.note", func(ev *ahpv1.Event, s string) {
		ev.Extensions = mustStruct(map[string]any{"com.example/debug": map[string]any{"note": s}})
	}},
	{"harness.metadata.env", func(ev *ahpv1.Event, s string) {
		ev.Harness = &ahpv1.HarnessEnvelope{Metadata: mustStruct(map[string]any{"env": s})}
	}},
	{"harness.context.current_task", func(ev *ahpv1.Event, s string) {
		ev.Harness = &ahpv1.HarnessEnvelope{Context: &ahpv1.EventContext{CurrentTask: &s}}
	}},
	{"harness.context.recent_facts.values.0.content", func(ev *ahpv1.Event, s string) {
		ev.Harness = &ahpv1.HarnessEnvelope{Context: &ahpv1.EventContext{RecentFacts: &ahpv1.FactList{Values: []*ahpv1.Fact{{Content: s}}}}}
	}},
	{"payload.leftover", func(ev *ahpv1.Event, s string) { ev.Payload = mustValue(map[string]any{"leftover": s}) }},
	{"unknown_fields.x", func(ev *ahpv1.Event, s string) { ev.UnknownFields = mustStruct(map[string]any{"x": s}) }},
	{"session.unknown_fields.y", func(ev *ahpv1.Event, s string) { ev.Session.UnknownFields = mustStruct(map[string]any{"y": s}) }},
	{"source", func(ev *ahpv1.Event, s string) { ev.Source = s }},
	{"intent_detection.prompt", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_IntentDetection{IntentDetection: &ahpv1.IntentDetectionPayload{Prompt: s}}
	}},
	{"memory_recall.query", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallPayload{Query: s}}
	}},
	{"reasoning.problem_statement", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_Reasoning{Reasoning: &ahpv1.ReasoningPayload{ProblemStatement: s}}
	}},
	{"reasoning.hints.values.0", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_Reasoning{Reasoning: &ahpv1.ReasoningPayload{Hints: &ahpv1.StringList{Values: []string{s}}}}
	}},
	{"planning.task_description", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_Planning{Planning: &ahpv1.PlanningPayload{TaskDescription: s}}
	}},
	{"rate_limit.current_usage", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{CurrentUsage: s}}
	}},
	{"confirmation.message", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{Message: s}}
	}},
	{"context_perception.context.query", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_ContextPerception{ContextPerception: &ahpv1.ContextPerceptionPayload{Context: &ahpv1.PerceptionContext{Query: &s}}}
	}},
	{"run_lifecycle.error", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_RunLifecycle{RunLifecycle: &ahpv1.RunLifecycle{Status: ahpv1.RunStatus_RUN_STATUS_FAILED, Error: &s}}
	}},
	{"verification.checks.0.command", func(ev *ahpv1.Event, s string) {
		ev.Body = &ahpv1.Event_Verification{Verification: &ahpv1.Verification{Checks: []*ahpv1.VerificationCheck{{Command: &s}}}}
	}},
}

func mustValue(v any) *structpb.Value {
	x, err := structpb.NewValue(v)
	if err != nil {
		panic(err)
	}
	return x
}

func mustStruct(m map[string]any) *structpb.Struct {
	x, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return x
}

// toolBefore is a typical tool.before event.
func toolBefore() *ahpv1.Event {
	return &ahpv1.Event{
		Id:      "0190b3a4-5c6d-7e8f-9a0b-1c2d3e4f5a6b",
		Source:  "urn:ahp:harness:claude-code:host-1",
		Type:    ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		Time:    "2026-11-29T10:00:00Z",
		Session: &ahpv1.Session{Id: "sess-42", Cwd: "/home/dev/project", Model: "claude-sonnet", Agent: &ahpv1.Agent{Id: "agent-1"}},
		Tool: &ahpv1.Tool{
			CallId: "call-7",
			Name:   "Bash",
			Kind:   ahpv1.ToolKind_TOOL_KIND_SHELL,
			Input:  mustStruct(map[string]any{"command": "git push origin main", "description": "Push the branch", "timeout": 120000}),
		},
		Origin: &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HOOKS, ProtocolVersion: "0.1", EventType: "tool.before"},
	}
}

func TestEventSecretsNeverSurvive(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	for _, place := range places {
		for _, p := range plants {
			ev := toolBefore()
			place.plant(ev, p.text)
			out, rep := r.Event(ev)
			if js := mustJSON(t, out); strings.Contains(js, p.secret) {
				t.Errorf("%s in %s survived: %s", p.kind, place.path, js)
			}
			found := false
			for _, f := range rep.Masked {
				found = found || f.Path == place.path
			}
			if !found {
				t.Errorf("%s in %s: report %+v does not name the path", p.kind, place.path, rep.Masked)
			}
			if !strings.Contains(mustJSON(t, ev), p.secret) {
				t.Fatalf("%s in %s: the input event was modified", p.kind, place.path)
			}
		}
	}
}

func TestEventLeavesOrdinaryEventsAlone(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	for _, s := range ordinary {
		ev := toolBefore()
		ev.Tool.Input.Fields["command"] = structpb.NewStringValue(s)
		ev.Tool.Output = mustValue(map[string]any{"stdout": s, "max_tokens": 100, "token_count": 12, "session_id": "s1"})
		out, rep := r.Event(ev)
		if !proto.Equal(out, ev) || !rep.Empty() {
			t.Errorf("event with %q changed: report %+v\n got %s", s, rep, mustJSON(t, out))
		}
	}
}

func TestEventDoesNotMutateInput(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{Paths: []string{"tool.input"}, MaxFieldBytes: 16})
	ev := toolBefore()
	ev.Tool.Input.Fields["password"] = structpb.NewStringValue("hunter2")
	ev.Tool.Output = structpb.NewStringValue(strings.Repeat("long output ", 10) + plants[0].text)
	ev.Extensions = mustStruct(map[string]any{"ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d": 1})
	before := proto.Clone(ev)
	if _, rep := r.Event(ev); rep.Empty() {
		t.Fatal("nothing was redacted")
	}
	if !proto.Equal(ev, before) {
		t.Fatal("Event modified its input")
	}
}

func TestSecretKeyNamesMaskWholeValues(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{SecretKeys: []string{"pin_code"}})
	ev := toolBefore()
	ev.Tool.Input = mustStruct(map[string]any{
		"password":      "plainword",
		"DB_PASSWORD":   "plain too",
		"clientSecret":  "abc",
		"x-api-key":     "k",
		"credentials":   map[string]any{"user": "u", "pass": "p"},
		"session_token": []any{"a", "b"},
		"Set-Cookie":    "id=1",
		"auth":          "whatever",
		"PIN-CODE":      "1234",
		"max_tokens":    100,
		"token_count":   12.5,
		"has_password":  true,
		"author":        "Jane",
		"session_id":    "s1",
		"headers":       map[string]any{"Authorization": "Token xyz", "Accept": "*/*"},
	})
	out, rep := r.Event(ev)
	in := out.GetTool().GetInput().AsMap()
	for _, k := range []string{"password", "DB_PASSWORD", "clientSecret", "x-api-key", "credentials", "session_token", "Set-Cookie", "auth", "PIN-CODE"} {
		if in[k] != redact.Placeholder(redact.KindSecretKey) {
			t.Errorf("%s = %v, want the placeholder", k, in[k])
		}
	}
	if h := in["headers"].(map[string]any); h["Authorization"] != redact.Placeholder(redact.KindSecretKey) || h["Accept"] != "*/*" {
		t.Errorf("headers = %v", h)
	}
	for k, want := range map[string]any{"max_tokens": 100.0, "token_count": 12.5, "has_password": true, "author": "Jane", "session_id": "s1"} {
		if in[k] != want {
			t.Errorf("%s = %v, want %v kept", k, in[k], want)
		}
	}
	if n := rep.MaskedFields(); n != 10 {
		t.Errorf("MaskedFields() = %d, want 10: %+v", n, rep.Masked)
	}
	if !slices.Contains(rep.Masked, redact.Finding{Path: "tool.input.headers.Authorization", Kind: redact.KindSecretKey}) {
		t.Errorf("report %+v lacks tool.input.headers.Authorization", rep.Masked)
	}
}

func TestSecretInObjectKeyIsMasked(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	ev := toolBefore()
	ev.Tool.Input.Fields["ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"] = structpb.NewNumberValue(1)
	ev.Tool.Input.Fields["ghp_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR"] = structpb.NewNumberValue(2)
	out, _ := r.Event(ev)
	js := mustJSON(t, out)
	if strings.Contains(js, "u8jzPde0") || strings.Contains(js, "KLzdocJ2") {
		t.Fatalf("secret key survived: %s", js)
	}
	in := out.GetTool().GetInput().GetFields()
	if _, ok := in["[REDACTED:github_token]"]; !ok {
		t.Errorf("keys %v", in)
	}
	if _, ok := in["[REDACTED:github_token]#2"]; !ok {
		t.Errorf("colliding masked key not kept apart: %v", in)
	}
}

func TestConfiguredPaths(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{Paths: []string{
		"tool.input.pin",
		"native.payload.headers.*",
		"tool.input.items.*.note",
		"**.deep_secret",
		"extensions.com\\.example/token",
		"harness.context",
		"tool.output",
		"unknownFields.whole",
	}})
	ev := toolBefore()
	ev.Tool.Input.Fields["pin"] = structpb.NewNumberValue(1234)
	ev.Tool.Input.Fields["items"] = mustValue([]any{map[string]any{"note": "a", "keep": "b"}, map[string]any{"note": map[string]any{"x": 1}}})
	ev.Tool.Input.Fields["nested"] = mustValue(map[string]any{"a": map[string]any{"deep_secret": "d"}})
	ev.Tool.Output = mustValue(map[string]any{"stdout": "out"})
	task := "the task"
	ev.Harness = &ahpv1.HarnessEnvelope{AgentId: "a1", Depth: 2, Context: &ahpv1.EventContext{CurrentTask: &task, Capabilities: mustStruct(map[string]any{"c": 1})}}
	ev.Native = &ahpv1.Native{Provider: "p", Payload: mustStruct(map[string]any{"headers": map[string]any{"x-custom": "v", "accept": "json"}, "other": "kept"})}
	ev.Extensions = mustStruct(map[string]any{"com.example/token": "t", "com.example/other": "kept"})
	ev.UnknownFields = mustStruct(map[string]any{"whole": []any{"a", 1}})

	out, rep := r.Event(ev)
	ph := redact.Placeholder(redact.KindPath)
	checks := map[string]any{
		"tool.input.pin":                     out.Tool.Input.Fields["pin"].GetStringValue(),
		"tool.input.items.0.note":            out.Tool.Input.Fields["items"].GetListValue().Values[0].GetStructValue().Fields["note"].GetStringValue(),
		"tool.input.items.1.note":            out.Tool.Input.Fields["items"].GetListValue().Values[1].GetStructValue().Fields["note"].GetStringValue(),
		"tool.input.nested.a.deep_secret":    out.Tool.Input.Fields["nested"].GetStructValue().Fields["a"].GetStructValue().Fields["deep_secret"].GetStringValue(),
		"native.payload.headers.x-custom":    out.Native.Payload.Fields["headers"].GetStructValue().Fields["x-custom"].GetStringValue(),
		"extensions.com.example/token":       out.Extensions.Fields["com.example/token"].GetStringValue(),
		"harness.context.current_task":       out.Harness.Context.GetCurrentTask(),
		"harness.context.capabilities":       out.Harness.Context.Capabilities.Fields["redacted"].GetStringValue(),
		"tool.output":                        out.Tool.Output.GetStringValue(),
		"unknown_fields.whole (JSON name)":   out.UnknownFields.Fields["whole"].GetStringValue(),
		"native.payload.headers.accept kept": out.Native.Payload.Fields["headers"].GetStructValue().Fields["accept"].GetStringValue() == ph,
	}
	for what, got := range checks {
		if what == "native.payload.headers.accept kept" {
			if got != true {
				t.Errorf("native.payload.headers.* did not mask accept")
			}
			continue
		}
		if got != ph {
			t.Errorf("%s = %v, want %s", what, got, ph)
		}
	}
	for what, got := range map[string]string{
		"items.0.keep":       out.Tool.Input.Fields["items"].GetListValue().Values[0].GetStructValue().Fields["keep"].GetStringValue(),
		"native other":       out.Native.Payload.Fields["other"].GetStringValue(),
		"extension other":    out.Extensions.Fields["com.example/other"].GetStringValue(),
		"tool.input.command": out.Tool.Input.Fields["command"].GetStringValue(),
	} {
		if got == ph {
			t.Errorf("%s was masked but no path names it", what)
		}
	}
	if out.Harness.GetDepth() != 2 || out.Harness.GetAgentId() != "a1" {
		t.Errorf("fields outside the paths changed: %v", out.Harness)
	}
	want := []redact.Finding{
		{Path: "harness.context", Kind: redact.KindPath},
		{Path: "tool.input.pin", Kind: redact.KindPath},
		{Path: "tool.output", Kind: redact.KindPath},
	}
	for _, f := range want {
		if !slices.Contains(rep.Masked, f) {
			t.Errorf("report %+v lacks %+v", rep.Masked, f)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []redact.Config{
		{Paths: []string{""}},
		{Paths: []string{"tool..input"}},
		{Paths: []string{"tool.input."}},
		{Paths: []string{`tool\`}},
		{Disable: []string{"githubtoken"}},
	} {
		if _, err := redact.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
}

func TestDisable(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{Disable: []string{"github_token", redact.KindSecretKey}})
	if got, _ := r.String("ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"); got != "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d" {
		t.Errorf("disabled detector still masks: %q", got)
	}
	ev := toolBefore()
	ev.Tool.Input.Fields["password"] = structpb.NewStringValue("plainword")
	if out, _ := r.Event(ev); out.Tool.Input.Fields["password"].GetStringValue() != "plainword" {
		t.Errorf("key-name masking still on")
	}
	if got, _ := r.String("AKIAIOSFODNN7EXAMPLE"); got == "AKIAIOSFODNN7EXAMPLE" {
		t.Errorf("other detectors were disabled too")
	}
	if len(redact.Detectors()) < 20 {
		t.Errorf("Detectors() = %v", redact.Detectors())
	}
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{MaxFieldBytes: 64})
	long := strings.Repeat("a", 100)
	got, rep := r.String(long)
	if want := strings.Repeat("a", 64) + "[TRUNCATED:100 bytes]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(rep.Truncated) != 1 || rep.Truncated[0].Bytes != 100 {
		t.Errorf("report %+v", rep)
	}

	// A cut never splits a UTF-8 sequence or a placeholder, and masking happens first.
	got, _ = r.String("a" + strings.Repeat("é", 40))
	if !strings.HasSuffix(got, "[TRUNCATED:81 bytes]") || !utf8.ValidString(got) || len(got) > 64+len("[TRUNCATED:81 bytes]") {
		t.Errorf("UTF-8 cut: %q", got)
	}
	secret := "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	got, _ = r.String(strings.Repeat("x", 50) + secret + strings.Repeat("y", 50))
	if strings.Contains(got, "u8jz") || strings.Contains(got, "[REDACTED:gith") && !strings.Contains(got, "[REDACTED:github_token]") {
		t.Errorf("secret or half a placeholder at the cut: %q", got)
	}

	ev := toolBefore()
	ev.Tool.Output = mustValue(map[string]any{"stdout": long})
	out, rep := r.Event(ev)
	if s := out.Tool.Output.GetStructValue().Fields["stdout"].GetStringValue(); !strings.HasSuffix(s, "[TRUNCATED:100 bytes]") {
		t.Errorf("event field not truncated: %q", s)
	}
	if len(rep.Truncated) != 1 || rep.Truncated[0] != (redact.Truncation{Path: "tool.output.stdout", Bytes: 100}) {
		t.Errorf("report %+v", rep.Truncated)
	}

	unlimited := newRedactor(t, redact.Config{MaxFieldBytes: -1})
	if got, _ := unlimited.String(strings.Repeat("z", 1<<20)); len(got) != 1<<20 {
		t.Errorf("cap disabled but cut to %d", len(got))
	}
}

func TestDecision(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	secret := "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	d := &ahpv1.Decision{
		DecisionId: "0190b3a4-0000-7000-8000-000000000001",
		Verdict:    ahpv1.Verdict_VERDICT_DENY,
		Effects: []*ahpv1.Effect{
			{RuleId: "r1", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "command contains " + secret, Code: "dev.ahpgateway.policy.secret"}}},
			{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: mustValue(map[string]any{"command": "curl -H 'Authorization: Bearer " + secret + "'", "password": "x"})}}},
			{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "token=" + secret}}},
		},
		MatchedRuleIds: []string{"r1"},
		DryRuns:        []*ahpv1.DryRun{{RuleId: "d1", WouldBe: &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: secret}}}}},
		Typed:          &ahpv1.Decision_Planning{Planning: &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Modify_{Modify: &ahpv1.PlanningDecision_Modify{ModifiedTask: "use " + secret}}}},
	}
	before := proto.Clone(d)
	out, rep := r.Decision(d)
	if js := mustJSON(t, out); strings.Contains(js, "u8jzPde0") {
		t.Fatalf("secret survived: %s", js)
	}
	if !proto.Equal(d, before) {
		t.Fatal("Decision modified its input")
	}
	if out.GetDecisionId() != d.GetDecisionId() || out.GetEffects()[0].GetDeny().GetCode() != "dev.ahpgateway.policy.secret" {
		t.Errorf("identifiers changed: %v", out)
	}
	for _, path := range []string{"effects.0.deny.reason", "effects.1.modify.value.command", "effects.1.modify.value.password", "effects.2.message.text", "dry_runs.0.would_be.ask.reason", "planning.modify.modified_task"} {
		found := false
		for _, f := range rep.Masked {
			found = found || f.Path == path
		}
		if !found {
			t.Errorf("report %+v lacks %s", rep.Masked, path)
		}
	}
	if got, _ := r.Decision(nil); got != nil {
		t.Errorf("Decision(nil) = %v", got)
	}
	if got, _ := r.Event(nil); got != nil {
		t.Errorf("Event(nil) = %v", got)
	}
}

func TestUnknownWireFieldsAreDropped(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	ev := toolBefore()
	// Field 99 (not in the schema), length-delimited, holding a secret.
	raw := append([]byte{0x9a, 0x06, 40}, []byte("ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d")...)
	ev.Tool.ProtoReflect().SetUnknown(raw)
	out, rep := r.Event(ev)
	if len(out.Tool.ProtoReflect().GetUnknown()) != 0 {
		t.Error("unknown wire fields kept")
	}
	if !slices.Contains(rep.Masked, redact.Finding{Path: "tool", Kind: redact.KindUnknownFields}) {
		t.Errorf("report %+v", rep.Masked)
	}
}

func TestLongSecretsAreMaskedWhole(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{MaxFieldBytes: -1})
	body := strings.Repeat("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n", 80) // ~5 KiB
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----"
	got, _ := r.String("key:\n" + pem + "\nafter")
	if got != "key:\n[REDACTED:private_key]\nafter" {
		t.Errorf("long PEM block: %.200q", got)
	}
	long := strings.Repeat("x7", 3000)
	got, _ = r.String(`{"password": "` + long + `", "user": "bob"}`)
	if strings.Contains(got, "x7x7") || !strings.Contains(got, `"user": "bob"`) {
		t.Errorf("long quoted secret: %.200q", got)
	}
}
