package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
)

func TestParseProvider(t *testing.T) {
	for _, p := range Providers() {
		got, err := ParseProvider(p.String())
		if err != nil {
			t.Errorf("ParseProvider(%q): %v", p.String(), err)
		} else if got != p {
			t.Errorf("ParseProvider(%q) = %v, want %v", p.String(), got, p)
		}
	}
	if _, err := ParseProvider("opencode"); err == nil {
		t.Error("ParseProvider(opencode) succeeded")
	}
	if got, err := ParseProvider(" Claude-Code\n"); err != nil || got != ClaudeCode {
		t.Errorf("ParseProvider ignores case and space: got %v, %v", got, err)
	}
	for p, want := range map[Provider]string{ClaudeCode: "claude-code", Codex: "codex", 0: "Provider(0)", Cursor: "cursor", Cline: "cline", 99: "Provider(99)", -1: "Provider(-1)"} {
		if got := p.String(); got != want {
			t.Errorf("Provider(%d).String() = %q, want %q", int(p), got, want)
		}
	}
}

func TestMapRejectsWhatItCannotRead(t *testing.T) {
	const secret = "sk-live-0123456789"
	cases := []struct{ in, want string }{
		{"", "hook input: empty input, want one JSON object"},
		{"  \n", "hook input: empty input, want one JSON object"},
		{`["PreToolUse"]`, "hook input: want one JSON object"},
		{`"` + secret + `"`, "hook input: want one JSON object"},
		{`{"hook_event_name":"PreToolUse"`, "hook input: not valid JSON (truncated)"},
		{`{"hook_event_name":"PreToolUse", "x": ` + secret + `}`, "hook input: not valid JSON (at byte 39)"},
		{`{"hook_event_name":"Stop"} {}`, "hook input: unexpected data after the JSON object"},
		{`{}`, "hook input: hook_event_name must be a non-empty string"},
		{`{"hook_event_name":7}`, "hook input: hook_event_name must be a non-empty string"},
		{`{"hook_event_name":"PreToolUse","tool_input":{}}`, "hook input (PreToolUse): tool_name must be a non-empty string"},
		{`{"hook_event_name":"PostToolUse","tool_name":["Bash"]}`, "hook input (PostToolUse): tool_name must be a non-empty string"},
	}
	for _, c := range cases {
		_, err := Map(ClaudeCode, []byte(c.in), Options{})
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("Map(%q) error %v, want an InputError", c.in, err)
		} else if err.Error() != c.want {
			t.Errorf("Map(%q) error %q, want %q", c.in, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("Map(%q) error quotes the input: %v", c.in, err)
		}
	}
	if _, err := Map(Provider(9), []byte(`{"hook_event_name":"Stop"}`), Options{}); err == nil {
		t.Error("Map with an unknown provider succeeded")
	}
}

// A field of an unexpected type has no canonical home, but it is not dropped either: policies
// can still see it in the payload.
func TestMapKeepsMistypedFieldsInThePayload(t *testing.T) {
	req, err := Map(Codex, []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","session_id":42,"cwd":null,"tool_input":"ls","tool_use_id":7}`), Options{ID: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	ev := req.Event
	if id := ev.GetSession().GetId(); id != "" {
		t.Errorf("a mistyped session_id was mapped: session %q", id)
	}
	if in := ev.GetTool().GetInput(); in != nil {
		t.Errorf("a mistyped tool_input was mapped: input %v", in)
	}
	payload := ev.GetPayload().GetStructValue().AsMap()
	for _, k := range []string{"session_id", "cwd", "tool_input", "tool_use_id"} {
		if _, ok := payload[k]; !ok {
			t.Errorf("payload lost %q: %v", k, payload)
		}
	}
	if id := ev.GetTool().GetCallId(); id != "call-e1" {
		t.Errorf("call id %q, want call-e1", id)
	}
	if !ev.GetOrigin().GetSynthesizedCallId() {
		t.Error("the call id is not marked synthesized")
	}
}

func TestMapDefaults(t *testing.T) {
	before := time.Now()
	req, err := Map(ClaudeCode, []byte(`{"hook_event_name":"SessionEnd","reason":"logout"}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := req.Event
	if len(ev.GetId()) != 36 {
		t.Errorf("id %q, want a UUID", ev.GetId())
	}
	if !ev.GetOrigin().GetSynthesizedId() {
		t.Error("the id is not marked synthesized")
	}
	at, err := time.Parse(time.RFC3339Nano, ev.GetTime())
	if err != nil {
		t.Errorf("time %q: %v", ev.GetTime(), err)
	} else if at.Before(before.Add(-time.Second)) {
		t.Errorf("time %q is before the call (%v)", ev.GetTime(), before)
	}
	if req.Intercepted() {
		t.Error("SessionEnd is intercepted, want only recorded")
	}
	if req.Capabilities != nil {
		t.Errorf("SessionEnd has capabilities %v, want none", req.Capabilities)
	}
	if ev.GetNative() != nil {
		t.Errorf("SessionEnd has native %v, want none", ev.GetNative())
	}
	// Codex has no PreCompact hook (Claude Code's is context.compact.before).
	other, err := Map(Codex, []byte(`{"hook_event_name":"PreCompact"}`), Options{})
	switch {
	case err != nil:
		t.Errorf("PreCompact: %v", err)
	case other.Adapted():
		t.Errorf("PreCompact is adapted, want passed through: %+v", other)
	case other.Event != nil:
		t.Errorf("PreCompact has event %v, want none", other.Event)
	case other.HookEvent != "PreCompact":
		t.Errorf("PreCompact: hook event %q", other.HookEvent)
	}
}

// The tool-kind table of the issue, through Map.
func TestMapToolKinds(t *testing.T) {
	want := map[string]ahpv1.ToolKind{
		"Bash": ahpv1.ToolKind_TOOL_KIND_SHELL, "Read": ahpv1.ToolKind_TOOL_KIND_FILE_READ,
		"Write": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, "Edit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
		"MultiEdit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, "Grep": ahpv1.ToolKind_TOOL_KIND_SEARCH,
		"Glob": ahpv1.ToolKind_TOOL_KIND_SEARCH, "WebFetch": ahpv1.ToolKind_TOOL_KIND_FETCH,
		"WebSearch": ahpv1.ToolKind_TOOL_KIND_FETCH, "Task": ahpv1.ToolKind_TOOL_KIND_TASK,
		"apply_patch": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, "mcp__github__create_issue": ahpv1.ToolKind_TOOL_KIND_MCP,
		"TodoWrite": ahpv1.ToolKind_TOOL_KIND_OTHER,
	}
	for name, kind := range want {
		req, err := Map(ClaudeCode, fmt.Appendf(nil, `{"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":{}}`, name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := req.Event.GetTool().GetKind(); got != kind {
			t.Errorf("%s: kind %v, want %v", name, got, kind)
		}
	}
}

// Only Codex's apply_patch is renamed, and only when the rename is unambiguous.
func TestApplyPatchRename(t *testing.T) {
	cases := []struct {
		p     Provider
		input string
		key   string
	}{
		{Codex, `{"command":"*** Begin Patch"}`, "patch"},
		{ClaudeCode, `{"command":"*** Begin Patch"}`, "command"},
		{Codex, `{"command":"x","patch":"y"}`, "command"},
		{Codex, `{"command":["x"]}`, "command"},
	}
	for _, c := range cases {
		req, err := Map(c.p, []byte(`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":`+c.input+`}`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := req.Event.GetTool().GetInput().GetFields()[c.key]; !ok {
			t.Errorf("%v %s: input %v lacks %q", c.p, c.input, req.Event.GetTool().GetInput(), c.key)
		}
	}
}

func mustMap(t *testing.T, p Provider, event, toolInput string) *Request {
	t.Helper()
	body := `{"hook_event_name":"` + event + `","session_id":"s"`
	if toolInput != "" {
		body += `,"tool_name":"Bash","tool_input":` + toolInput
	}
	req, err := Map(p, []byte(body+"}"), Options{ID: "e"})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func decisionOf(effects ...*ahpv1.Effect) *ahpv1.Decision {
	return &ahpv1.Decision{DecisionId: "d", Effects: effects}
}

func structOf(t *testing.T, m map[string]any) *structpb.Value {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return structpb.NewStructValue(s)
}

// What Render makes of effects the advertised capabilities normally keep away, and of answers
// from elsewhere: never more than the policy said.
func TestRenderNeverGrantsMore(t *testing.T) {
	deny := func(reason string) *ahpv1.Effect {
		return &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason}}}
	}
	ask := &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "a human decides"}}}
	escalate := &ahpv1.Effect{Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Reason: "prod change", Target: "oncall"}}}
	deferral := &ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: 2000, Reason: "deploy freeze"}}}
	allow := &ahpv1.Effect{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{}}}
	msg := func(s string) *ahpv1.Effect {
		return &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: s}}}
	}
	merge := &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{
		Operation: ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE,
		Value:     structOf(t, map[string]any{"timeout": 60, "description": nil}),
	}}}
	prompt := &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{
		Target: ahpv1.ModifyTarget_MODIFY_TARGET_PROMPT, Value: structOf(t, map[string]any{"x": 1}), Reason: "redact",
	}}}
	scalar := &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: structpb.NewStringValue("ls")}}}
	replace := &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: structOf(t, map[string]any{"command": "ls -l"})}}}

	flow := func(op, text string) *ahpv1.Effect {
		f := &ahpv1.FlowEffect{Operation: op, Reason: text}
		if op == "continue" {
			f = &ahpv1.FlowEffect{Operation: op, Instruction: text}
		}
		return &ahpv1.Effect{Effect: &ahpv1.Effect_Flow{Flow: f}}
	}
	inject := func(deliverAt string, texts ...string) *ahpv1.Effect {
		var parts []any
		for _, tx := range texts {
			parts = append(parts, map[string]any{"id": tx, "kind": "text", "mediaType": "text/plain", "selection": "body", "text": tx})
		}
		parts = append(parts, map[string]any{"id": "img", "kind": "attachment", "mediaType": "image/png", "selection": "metadata"})
		l, err := structpb.NewList([]any{map[string]any{"id": "m", "role": "system", "parts": parts}})
		if err != nil {
			t.Fatal(err)
		}
		return &ahpv1.Effect{Effect: &ahpv1.Effect_Inject{Inject: &ahpv1.InjectEffect{Target: "context", Operation: "append", DeliverAt: deliverAt, Value: l}}}
	}

	const bashInput = `{"command":"ls","description":"list","timeout":10}`
	cases := []struct {
		name  string
		p     Provider
		event string
		d     *ahpv1.Decision
		want  string
	}{
		{"empty deny reason", ClaudeCode, PreToolUse, decisionOf(deny(" ")),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by policy."}}`},
		{"deny verdict without its effect", Codex, PreToolUse, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by policy."}}`},
		{"deny wins over everything", ClaudeCode, PreToolUse, decisionOf(allow, ask, deny("no")),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{"escalate asks, naming the target", ClaudeCode, PreToolUse, decisionOf(escalate),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"Escalated to oncall: prod change"}}`},
		{"defer refuses, saying when", ClaudeCode, PreToolUse, decisionOf(deferral),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"retry in 2000ms: deploy freeze"}}`},
		{"merge patch applies to the input", ClaudeCode, PreToolUse, decisionOf(merge),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls","timeout":60}}}`},
		{"a prompt change cannot apply to a tool", ClaudeCode, PreToolUse, decisionOf(prompt),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"input must be changed: redact (this hook cannot apply it)"}}`},
		{"a modify without an object refuses", Codex, PreToolUse, decisionOf(scalar),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"input must be changed: the policy's change (this hook cannot apply it)"}}`},
		{"codex cannot ask from PreToolUse", Codex, PreToolUse, decisionOf(ask),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"approval required: a human decides"}}`},
		{"codex: an allow alone is no decision", Codex, PreToolUse, decisionOf(allow), ``},
		{"codex cannot change a permission request", Codex, PermissionRequest, decisionOf(replace),
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"input must be changed: the policy changes this input (this runtime cannot apply the change)"}}}`},
		{"claude-code changes a permission request", ClaudeCode, PermissionRequest, decisionOf(replace),
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls -l"}}}}`},
		{"escalate on a permission request is the dialog", ClaudeCode, PermissionRequest, decisionOf(escalate),
			`{"systemMessage":"approval required: Escalated to oncall: prod change"}`},
		{"a prompt cannot be asked about", ClaudeCode, UserPromptSubmit, decisionOf(ask),
			`{"decision":"block","reason":"approval required: a human decides"}`},
		{"a prompt cannot be changed", Codex, UserPromptSubmit, decisionOf(merge),
			`{"decision":"block","reason":"input must be changed: the policy changes this input (this runtime cannot apply the change)"}`},
		{"an allowed prompt is no decision", ClaudeCode, UserPromptSubmit, decisionOf(allow), ``},
		{"messages join, with the verdict", ClaudeCode, PreToolUse, decisionOf(msg("one"), msg("  "), deny("no"), msg("two")),
			`{"systemMessage":"one\ntwo","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{"no effect, no output", Codex, PermissionRequest, decisionOf(), ``},
		// The draft effects at the events that map onto the draft catalogue.
		{"inject on a prompt is additionalContext, text parts only", ClaudeCode, UserPromptSubmit, decisionOf(inject("now", "one", "two"), inject("next_turn", "three")),
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"one\n\ntwo\n\nthree"}}`},
		{"a denied prompt takes no context", Codex, UserPromptSubmit, decisionOf(inject("now", "one"), deny("no")),
			`{"decision":"block","reason":"no"}`},
		{"flow stop on a prompt ends the agent", Codex, UserPromptSubmit, decisionOf(flow("stop", "enough"), msg("bye")),
			`{"continue":false,"stopReason":"enough","systemMessage":"bye"}`},
		{"flow continue keeps the agent working", Codex, Stop, decisionOf(flow("continue", "fix the tests")),
			`{"decision":"block","reason":"fix the tests"}`},
		{"flow continue without instruction says why", ClaudeCode, SubagentStop, decisionOf(flow("continue", "")),
			`{"decision":"block","reason":"` + defaultContinueReason + `"}`},
		{"flow stop at Stop ends the agent", ClaudeCode, Stop, decisionOf(flow("stop", "done")),
			`{"continue":false,"stopReason":"done"}`},
		{"a deny at Stop ends the agent, never continues it", Codex, Stop, decisionOf(deny("no")),
			`{"continue":false,"stopReason":"no"}`},
		{"inject at Stop is dropped", ClaudeCode, Stop, decisionOf(inject("now", "x")), ``},
		{"inject at SessionStart is additionalContext", Codex, SessionStart, decisionOf(inject("now", "read TODO.md")),
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"read TODO.md"}}`},
		{"a deny at SessionStart refuses nothing", ClaudeCode, SessionStart, decisionOf(deny("no"), msg("note")), `{"systemMessage":"note"}`},
		{"flow stop a tool event cannot express refuses", ClaudeCode, PreToolUse, decisionOf(flow("stop", "halt")),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"halt"}}`},
		{"flow continue a tool event cannot express is dropped", Codex, PreToolUse, decisionOf(flow("continue", "go on")), ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			input := bashInput
			if c.event != PreToolUse && c.event != PermissionRequest {
				input = ""
			}
			out, err := Render(mustMap(t, c.p, c.event, input), c.d, "")
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != c.want {
				t.Errorf("Render:\n got %s\nwant %s", out, c.want)
			}
			checkRuntimeAccepts(t, c.p, c.event, out)
		})
	}
	if _, err := Render(mustMap(t, ClaudeCode, PostToolUse, `{}`), decisionOf(), ""); err == nil {
		t.Error("Render of an observed event succeeded")
	}
}

// checkRuntimeAccepts applies the rules each runtime's hook output parser enforces (from their
// documentation, and for Codex its output parser in codex-rs/hooks), so no rendering the adapter
// produces would make the runtime discard the hook's answer.
func checkRuntimeAccepts(t *testing.T, p Provider, event string, out []byte) {
	t.Helper()
	if out == nil {
		return
	}
	var o map[string]any
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("output is not a JSON object: %s", out)
	}
	allowed := map[string]bool{"systemMessage": true, "hookSpecificOutput": true}
	switch event {
	case SessionStart:
		allowed["continue"], allowed["stopReason"] = true, true
	case UserPromptSubmit:
		allowed["decision"], allowed["reason"], allowed["continue"], allowed["stopReason"] = true, true, true, true
	case Stop, SubagentStop:
		// Codex's stop.command.output schema: no hookSpecificOutput at all.
		allowed = map[string]bool{"systemMessage": true, "decision": true, "reason": true, "continue": true, "stopReason": true}
	}
	if c, ok := o["continue"]; ok && c != false {
		t.Errorf("%s: continue %v, want false when written: %s", event, c, out)
	}
	if _, ok := o["stopReason"]; ok && o["continue"] != false {
		t.Errorf("%s: stopReason without continue false: %s", event, out)
	}
	if d, ok := o["decision"]; ok && d != "block" {
		t.Errorf("%s: decision %v, want block: %s", event, d, out)
	}
	for k := range o {
		if !allowed[k] {
			t.Errorf("%s: unexpected top-level field %q in %s", event, k, out)
		}
	}
	if r, ok := o["reason"].(string); ok && o["decision"] == "block" && strings.TrimSpace(r) == "" {
		t.Errorf("block without a reason: %s", out)
	}
	hso, _ := o["hookSpecificOutput"].(map[string]any)
	if hso == nil {
		return
	}
	if hso["hookEventName"] != event {
		t.Errorf("hookEventName %v, want %s", hso["hookEventName"], event)
	}
	switch event {
	case PreToolUse:
		pd, _ := hso["permissionDecision"].(string)
		reason, _ := hso["permissionDecisionReason"].(string)
		_, updated := hso["updatedInput"]
		if pd == "" {
			t.Errorf("hookSpecificOutput without permissionDecision: %s", out)
		}
		if pd == "deny" && strings.TrimSpace(reason) == "" {
			t.Errorf("deny without a reason: %s", out)
		}
		if updated && pd != "allow" {
			t.Errorf("updatedInput without allow: %s", out)
		}
		if p == Codex && (pd == "ask" || (pd == "allow" && !updated)) {
			t.Errorf("Codex rejects permissionDecision %q here: %s", pd, out)
		}
	case PermissionRequest:
		d, _ := hso["decision"].(map[string]any)
		if b := d["behavior"]; b != "allow" && b != "deny" {
			t.Errorf("behavior %v: %s", b, out)
		}
		if _, updated := d["updatedInput"]; updated && (p == Codex || d["behavior"] != "allow") {
			t.Errorf("%v cannot take updatedInput here: %s", p, out)
		}
	case UserPromptSubmit, SessionStart:
		for k := range hso {
			if k != "hookEventName" && k != "additionalContext" {
				t.Errorf("%s: unexpected hookSpecificOutput field %q: %s", event, k, out)
			}
		}
		if ctx, _ := hso["additionalContext"].(string); strings.TrimSpace(ctx) == "" {
			t.Errorf("%s: hookSpecificOutput without additionalContext: %s", event, out)
		}
	default:
		t.Errorf("%s has no hookSpecificOutput to give: %s", event, out)
	}
}

// Every golden output passes the runtime checks too.
func TestGoldenOutputsAreAccepted(t *testing.T) {
	for _, c := range loadGolden(t) {
		if c.provider != ClaudeCode && c.provider != Codex {
			continue // the other runtimes' outputs are checked against their golden files only
		}
		var in struct {
			Event string `json:"hook_event_name"`
		}
		_ = json.Unmarshal(c.Input, &in)
		checkRuntimeAccepts(t, c.provider, in.Event, c.stdout(t))
	}
}

func TestClassify(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(live)
	cancel2()
	wire := func(code connect.Code) error {
		err := connect.NewError(code, errors.New("x"))
		return connect.NewWireError(code, err)
	}
	cases := []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{expired, errors.New("anything"), "deadline_exceeded"},
		{canceled, errors.New("anything"), "canceled"},
		{live, connect.NewError(connect.CodeDeadlineExceeded, nil), "deadline_exceeded"},
		{live, connect.NewError(connect.CodeUnavailable, nil), "unavailable"},
		{live, connect.NewError(connect.CodeCanceled, nil), "unavailable"},
		{live, connect.NewError(connect.CodeUnauthenticated, nil), "unauthenticated"},
		{live, connect.NewError(connect.CodePermissionDenied, nil), "unauthenticated"},
		{live, wire(connect.CodeInvalidArgument), "rejected"},
		{live, connect.NewError(connect.CodeInvalidArgument, nil), "bad_response"},
		{live, connect.NewError(connect.CodeInternal, nil), "bad_response"},
		{live, wire(connect.CodeInternal), "backend_error"},
		{live, wire(connect.CodeResourceExhausted), "backend_error"},
	}
	for _, c := range cases {
		if got := classify(c.ctx, c.err); got != c.want {
			t.Errorf("classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

func TestNewChecksConfig(t *testing.T) {
	be := testBackend(t)
	bad := []Config{
		{Clients: be.embedded},
		{Provider: ClaudeCode},
		{Provider: Codex, Clients: be.embedded, FailurePolicy: bridge.FailurePolicy(7)},
		{Provider: Codex, Clients: be.embedded, Timeout: time.Minute},
	}
	for _, cfg := range bad {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	if _, err := New(Config{Provider: Codex, StartErr: errors.New("no policy")}); err != nil {
		t.Errorf("New with StartErr: %v", err)
	}
}

func TestRunInputLimits(t *testing.T) {
	be := testBackend(t)
	a, err := New(Config{Provider: ClaudeCode, Clients: be.embedded, MaxInputBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	big := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("a", 100) + `"}}`
	if code := a.Run(context.Background(), strings.NewReader(big), &stdout, &stderr); code != 2 {
		t.Errorf("oversize: exit %d, want 2", code)
	}
	if stdout.Len() != 0 {
		t.Errorf("oversize: stdout %q, want nothing", stdout.String())
	}
	if !strings.Contains(stderr.String(), "over the 64-byte limit") {
		t.Errorf("oversize: stderr %q does not name the limit", stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := a.Run(context.Background(), iotestErrReader{}, &stdout, &stderr); code != 2 {
		t.Errorf("read error: exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "stdin could not be read") {
		t.Errorf("read error: stderr %q does not say stdin could not be read", stderr.String())
	}
	// A writer that fails: the answer is lost, which is a failed hook (1), never a success.
	if a, err = New(Config{Provider: ClaudeCode, Clients: be.embedded}); err != nil {
		t.Fatal(err)
	}
	if code := a.Run(context.Background(), strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`), failingWriter{}, &stderr); code != 1 {
		t.Errorf("write error: exit %d", code)
	}
}

// A hook run with bad flags blocks a decided event (exit 2) but not one that is only recorded.
func TestUsageExit(t *testing.T) {
	cases := []struct {
		input string
		want  int
	}{
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`, 2},
		{`{"hook_event_name":"PermissionRequest"}`, 2},
		{`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, 2},
		{`{"hook_event_name":"Stop","stop_hook_active":true}`, 1},
		// Decided, but exit 2 there keeps the agent working: never the answer to bad flags.
		{`{"hook_event_name":"SubagentStop","stop_hook_active":false}`, 1},
		{`{"hook_event_name":"SessionEnd","reason":"other"}`, 1},
		{`{"hook_event_name":"Notification"}`, 1},
		{`{"hook_event_name":"PreCompact","trigger":"auto"}`, 1},
		{`{"hook_event_name":"SessionStart","source":"startup"}`, 1},
		{`{"hook_event_name":""}`, 2},
		// The other runtimes' event fields: decided events block, recorded ones do not.
		{`{"agent_action_name":"pre_run_command","tool_info":{"command_line":"ls"}}`, 2},
		{`{"agent_action_name":"post_run_command"}`, 1},
		{`{"hookName":"PreToolUse","preToolUse":{"toolName":"execute_command"}}`, 2},
		{`{"hookName":"TaskStart"}`, 1},
		{`{"hookEventName":"SessionStart"}`, 1},
		{`{"hook_event_name":"beforeShellExecution","command":"ls"}`, 2},
		{`{"hook_event_name":"afterFileEdit"}`, 1},
		{`not json`, 2},
		{``, 2},
	}
	for _, c := range cases {
		if got := UsageExit(strings.NewReader(c.input)); got != c.want {
			t.Errorf("input %q: exit %d, want %d", c.input, got, c.want)
		}
	}
	if got := UsageExit(iotestErrReader{}); got != 2 {
		t.Errorf("read error: exit %d, want 2", got)
	}
	// A pipe is a file too, but not a terminal: the event on it is read.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		_, _ = io.WriteString(w, `{"hook_event_name":"Stop"}`)
		w.Close()
	}()
	if got := UsageExit(r); got != 1 {
		t.Errorf("recorded event on a pipe: exit %d, want 1", got)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

// The deadline bounds the whole answer, whatever the backend does.
func TestDeadlineBoundsTheAnswer(t *testing.T) {
	be := testBackend(t)
	a, err := New(Config{Provider: Codex, Clients: be.failing["deadline_exceeded"], Timeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := a.Handle(context.Background(), []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("answered after %v with a 150ms deadline", took)
	}
	if !bytes.Contains(res.Output, []byte(`"permissionDecision":"deny"`)) {
		t.Errorf("output %s, want a deny", res.Output)
	}
	if !bytes.Contains(res.Output, []byte("deadline_exceeded")) {
		t.Errorf("output %s does not name deadline_exceeded", res.Output)
	}
}

func TestHTTPRefusals(t *testing.T) {
	be := testBackend(t)
	a, err := New(Config{Provider: ClaudeCode, Clients: be.embedded, MaxInputBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	ok := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`
	cases := []struct {
		method, contentType, encoding, body string
		want                                int
	}{
		{http.MethodGet, "", "", "", http.StatusMethodNotAllowed},
		{http.MethodPost, "text/plain", "", ok, http.StatusUnsupportedMediaType},
		{http.MethodPost, "application/json", "gzip", ok, http.StatusUnsupportedMediaType},
		{http.MethodPost, "application/json", "", strings.Repeat(" ", 2048) + ok, http.StatusRequestEntityTooLarge},
		// No Content-Type is what a cross-site browser POST can send without asking first.
		{http.MethodPost, "", "", ok, http.StatusUnsupportedMediaType},
		{http.MethodPost, "application/json; charset=utf-8", "", ok, http.StatusOK},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, srv.URL+"/any/path", strings.NewReader(c.body))
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		if c.encoding != "" {
			req.Header.Set("Content-Encoding", c.encoding)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %q %q: status %d, want %d (%s)", c.method, c.contentType, c.encoding, resp.StatusCode, c.want, body)
		}
	}
}

// Many runtimes' hooks at once against one HTTP form: every answer is the right one.
func TestHTTPConcurrent(t *testing.T) {
	be := testBackend(t)
	a, err := New(Config{Provider: ClaudeCode, Clients: be.embedded})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			cmd, want := "ls", http.StatusNoContent
			if i%2 == 0 {
				cmd, want = "rm -rf /", http.StatusOK
			}
			body := fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"s%d","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"t%d"}`, i, cmd, i)
			resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s: status %d, want %d: %s", cmd, resp.StatusCode, want, out)
			} else if want == http.StatusOK && !bytes.Contains(out, []byte(`"deny"`)) {
				t.Errorf("%s: %s, want a deny", cmd, out)
			}
		})
	}
	wg.Wait()
}

// panicClient is an InterceptServiceClient whose Intercept panics: a stand-in for a bug.
type panicClient struct {
	ahpv1connect.InterceptServiceClient
}

func (panicClient) Intercept(context.Context, *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	panic("bug")
}

// A bug is answered like a backend failure, never with Go's crash status 2.
func TestHandleRecoversPanics(t *testing.T) {
	be := testBackend(t)
	clients := be.embedded
	clients.Intercept = panicClient{}
	a, err := New(Config{Provider: ClaudeCode, Clients: clients, FailurePolicy: bridge.FailClosed})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Handle(context.Background(), []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`))
	if res.Exit != 0 {
		t.Errorf("panic under fail-closed: exit %d, want 0", res.Exit)
	}
	if !bytes.Contains(res.Output, []byte(`"permissionDecision":"deny"`)) {
		t.Errorf("panic under fail-closed: %s, want a deny", res.Output)
	}
	if !bytes.Contains(res.Output, []byte("(internal)")) {
		t.Errorf("panic under fail-closed: %s does not say (internal)", res.Output)
	}
}
