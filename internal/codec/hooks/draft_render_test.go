package hooks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/types/known/structpb"
)

// minimalBodies are the smallest valid bodies of the 19 interceptable draft events.
var minimalBodies = map[string]string{
	"session.start":            `"session":{"id":"s"},"trigger":"startup","harness":{"name":"h"},"permissionMode":"default","manifest":{},"items":[]`,
	"tool.before":              `"call":{"id":"c"},"tool":{"name":"Bash","input":{"command":"ls"},"origin":"native","kind":"shell"},"path":"native"`,
	"tool.after":               `"call":{"id":"c"},"tool":{"name":"Bash","input":{},"origin":"native"},"path":"native","outcome":"ok","execution":{"status":"executed"},"items":[]`,
	"turn.start":               `"turn":{"id":"t"},"trigger":"user","items":[]`,
	"turn.finish.before":       `"turn":{"id":"t"},"outcome":"completed","continuationCount":0,"items":[]`,
	"model.request.before":     `"model":{"id":"m","provider":"p"},"attempt":{"id":"a","number":1},"params":{},"items":[]`,
	"model.response.after":     `"model":{"id":"m","provider":"p"},"attempt":{"id":"a","number":1},"execution":{"status":"executed"},"items":[],"finishReason":"stop"`,
	"model.switch.before":      `"current":{"id":"m"},"proposed":{"id":"n"},"reason":"user"`,
	"tool.permission.request":  `"call":{"id":"c"},"tool":{"name":"Bash","input":{},"origin":"native"},"path":"native","suggestions":[],"sandboxBypass":false`,
	"tool.batch.after":         `"batch":{"id":"b","callIds":[]},"calls":[]`,
	"context.compact.before":   `"trigger":"auto","items":[]`,
	"context.compact.after":    `"summary":[],"removed":[],"execution":{"status":"executed"}`,
	"config.change.before":     `"change":{"source":"user","scope":"project","settings":{},"summary":"x"}`,
	"user.elicitation.request": `"elicitation":{"server":"s","mode":"form"}`,
	"user.elicitation.result":  `"elicitation":{"server":"s","mode":"form","action":"accept"}`,
	"user.message.inbound":     `"message":{"channel":"c","sender":"u","messages":[]}`,
	"user.message.outbound":    `"message":{"channel":"c","messages":[]}`,
	"task.change.before":       `"task":{"id":"t","operation":"create","change":{}}`,
	"workspace.change.before":  `"workspace":{"kind":"cwd","change":{}}`,
}

// interceptMessage builds a draft hooks/intercept request for event with the given capabilities.
func interceptMessage(event, capabilities string) string {
	return `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"e1","source":"urn:test:h","time":"2026-09-15T12:00:00Z","type":"` +
		event + `",` + minimalBodies[event] + `},"capabilities":` + capabilities + `}}`
}

var (
	draftSchemaOnce sync.Once
	draftSchema     *jsonschema.Schema
	draftSchemaErr  error
)

// responseSchema compiles the shared draft intercept-response schema (with format assertions),
// or returns nil when the shared data is absent.
func responseSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	draftSchemaOnce.Do(func() {
		dir := filepath.Join(draftConformanceDir, "schemas", "draft")
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".schema.json") && e.Name() != "schema.json" {
				continue
			}
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				draftSchemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(f)
			f.Close()
			if err != nil {
				draftSchemaErr = err
				return
			}
			if err := c.AddResource("https://agenthooksprotocol.org/schemas/draft/"+e.Name(), doc); err != nil {
				draftSchemaErr = err
				return
			}
		}
		draftSchema, draftSchemaErr = c.Compile("https://agenthooksprotocol.org/schemas/draft/intercept-response.schema.json")
	})
	if draftSchemaErr != nil {
		t.Fatalf("draft schemas: %v", draftSchemaErr)
	}
	return draftSchema
}

// checkRendered holds a rendered answer to everything a draft answer must be: it encodes, decodes
// back as a draft result, validates against the draft response schema (when the shared schemas
// are present), never leaves the offer, and labels every deny it made up.
func checkRendered(t testing.TB, offer *hooks.Offer, r *ahpv1.HooksInterceptResult, fallbacks []*ahpv1.Fallback) {
	t.Helper()
	out := hooks.EncodeResult(hooks.StringID("e1"), r)
	m, err := hooks.DecodeBytes(out)
	if err != nil {
		t.Fatalf("rendered answer does not decode: %v\n%s", err, out)
	}
	if hooks.VersionOf(m) != hooks.Draft {
		t.Fatalf("answer version %q", hooks.VersionOf(m))
	}
	if s := responseSchema(t); s != nil {
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(out)))
		if err := s.Validate(doc); err != nil {
			t.Fatalf("rendered answer fails intercept-response.schema.json: %v\n%s", err, out)
		}
	}
	for _, e := range r.GetEffects() {
		if !offer.Has(e.GetType()) {
			t.Fatalf("effect %q not advertised: %s", e.GetType(), out)
		}
		u := e.GetUnknownFields().GetFields()
		switch e.GetType() {
		case "modify":
			ops, ok := offer.Modify[u["target"].GetStringValue()]
			op := u["operation"].GetStringValue()
			if !ok || (op == "replace" && !ops.Replace) || (op == "merge" && !ops.Merge) {
				t.Fatalf("modify target/operation not advertised: %s", out)
			}
		case "flow":
			if !slices.Contains(offer.FlowOps, u["operation"].GetStringValue()) {
				t.Fatalf("flow operation not advertised: %s", out)
			}
		case "inject":
			if !slices.Contains(offer.InjectDeliverAt, u["deliverAt"].GetStringValue()) {
				t.Fatalf("inject deliverAt not advertised: %s", out)
			}
		case "deny":
			if e.GetCode() == hooks.FallbackCode && len(fallbacks) == 0 {
				t.Fatalf("a fallback deny without a recorded fallback: %s", out)
			}
		}
	}
	for _, f := range fallbacks {
		if f.GetReason() == "" || f.GetWanted() == nil {
			t.Fatalf("unlabelled fallback %v", f)
		}
	}
	if len(fallbacks) > 0 {
		ns := r.GetExtensions().GetFields()["dev.ahpgateway"].GetStructValue()
		if len(ns.GetFields()["fallbacks"].GetListValue().GetValues()) != len(fallbacks) {
			t.Fatalf("fallbacks not labelled in the answer: %s", out)
		}
	}
}

func offerFor(t testing.TB, event, capabilities string) *hooks.Offer {
	t.Helper()
	m, err := hooks.DecodeBytes([]byte(interceptMessage(event, capabilities)))
	if err != nil {
		t.Fatalf("%s %s: %v", event, capabilities, err)
	}
	return m.Intercept.Offer
}

func message(role, text string) *structpb.Value {
	v, _ := structpb.NewValue([]any{map[string]any{"id": "m1", "role": role, "parts": []any{
		map[string]any{"id": "m1-p", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": text}}}})
	return v
}

// TestRenderDraftResult renders each canonical effect for callers that can and cannot express it.
func TestRenderDraftResult(t *testing.T) {
	t.Parallel()
	input, _ := structpb.NewValue(map[string]any{"command": "ls -la"})
	deny := &ahpv1.Effect{RuleId: "r-deny", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no", Code: "com.example.no"}}}
	ask := &ahpv1.Effect{RuleId: "r-ask", Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "check"}}}
	allow := &ahpv1.Effect{RuleId: "r-allow", Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{}}}
	modInput := &ahpv1.Effect{RuleId: "r-mod", Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: ahpv1.ModifyTarget_MODIFY_TARGET_INPUT, Operation: ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE, Value: input}}}
	msg := &ahpv1.Effect{RuleId: "r-msg", Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "hello"}}}
	ret := &ahpv1.Effect{RuleId: "r-ret", Effect: &ahpv1.Effect_Return{Return: &ahpv1.ReturnEffect{Value: message("assistant", "cached")}}}
	stop := &ahpv1.Effect{RuleId: "r-stop", Effect: &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: "stop", Reason: "budget"}}}
	cont := &ahpv1.Effect{RuleId: "r-cont", Effect: &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: "continue", Instruction: "run tests"}}}
	inj := &ahpv1.Effect{RuleId: "r-inj", Effect: &ahpv1.Effect_Inject{Inject: &ahpv1.InjectEffect{DeliverAt: "next_turn", Value: message("system", "note").GetListValue()}}}
	modResp := &ahpv1.Effect{RuleId: "r-resp", Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: ahpv1.ModifyTarget_MODIFY_TARGET_RESPONSE, Value: message("assistant", "better")}}}

	all := `{"effects":["deny","allow","ask","modify","message","return","flow","inject"],"modify":{"input":{"replace":true,"merge":true}},"flow":{"operations":["stop"]},"inject":{"context":{"append":true,"deliverAt":["now","next_turn"]}}}`
	for _, tc := range []struct {
		name, event, caps string
		effects           []*ahpv1.Effect
		want              []string // rendered effect types, in order
		fallbacks         int
	}{
		{"allow as itself", "tool.before", all, []*ahpv1.Effect{allow}, []string{"allow"}, 0},
		{"ask as itself", "tool.before", all, []*ahpv1.Effect{ask}, []string{"ask"}, 0},
		{"deny wins over allow", "tool.before", all, []*ahpv1.Effect{allow, deny}, []string{"deny"}, 0},
		{"every expressible effect", "tool.before", all, []*ahpv1.Effect{msg, modInput, inj, ret, stop}, []string{"message", "modify", "inject", "return", "flow"}, 0},
		{"ask without ask: labelled deny", "tool.before", `{"effects":["deny"]}`, []*ahpv1.Effect{ask}, []string{"deny"}, 1},
		{"modify merge without merge: labelled deny", "tool.before", `{"effects":["deny","modify"],"modify":{"input":{"replace":true}}}`, []*ahpv1.Effect{modInput}, []string{"deny"}, 1},
		{"message not advertised: dropped", "tool.before", `{"effects":["deny"]}`, []*ahpv1.Effect{msg}, nil, 1},
		{"continue with continuations", "turn.finish.before", `{"effects":["flow","message"],"flow":{"operations":["stop","continue"],"remainingContinuations":1,"continuationCount":0}}`, []*ahpv1.Effect{msg, cont}, []string{"message", "flow"}, 0},
		{"continue exhausted: dropped", "turn.finish.before", `{"effects":["flow"],"flow":{"operations":["stop","continue"],"remainingContinuations":0,"continuationCount":3}}`, []*ahpv1.Effect{cont}, nil, 1},
		{"deny without deny: flow stop", "turn.finish.before", `{"effects":["flow"],"flow":{"operations":["stop"]}}`, []*ahpv1.Effect{deny}, []string{"flow"}, 1},
		{"modify response at model.response.after", "model.response.after", `{"effects":["modify"],"modify":{"response":{"replace":true}}}`, []*ahpv1.Effect{modResp}, []string{"modify"}, 0},
		{"modify response as an object: refused", "model.response.after", `{"effects":["modify","flow"],"modify":{"response":{"replace":true}},"flow":{"operations":["stop"]}}`,
			[]*ahpv1.Effect{{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: ahpv1.ModifyTarget_MODIFY_TARGET_RESPONSE, Value: input}}}}, []string{"flow"}, 1},
		{"nothing expressible at all", "session.start", `{"effects":["message"]}`, []*ahpv1.Effect{deny}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			offer := offerFor(t, tc.event, tc.caps)
			r, fb := hooks.RenderDraftResult(&ahpv1.Decision{DecisionId: "d1", PolicyDigest: "sha256:4f2a", PolicyRevision: 3, Effects: tc.effects}, offer)
			checkRendered(t, offer, r, fb)
			var got []string
			for _, e := range r.GetEffects() {
				got = append(got, e.GetType())
			}
			if !slices.Equal(got, tc.want) || len(fb) != tc.fallbacks {
				t.Errorf("effects %v fallbacks %d, want %v and %d (%v)", got, len(fb), tc.want, tc.fallbacks, fb)
			}
		})
	}
}

// FuzzRenderDraftResult: random advertised capabilities × random policy effects → the rendered
// answer is a valid draft answer inside the offer, or a labelled fallback.
func FuzzRenderDraftResult(f *testing.F) {
	f.Add([]byte{0, 0xff, 3, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{4, 0x3f, 0, 8, 9, 8, 9})
	f.Add([]byte{9, 0x01, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := byteSource(data)
		events := hooks.InterceptableEvents
		event := events[int(b.next())%len(events)]
		offer := randomOffer(t, event, &b)
		var effects []*ahpv1.Effect
		for n := int(b.next() % 8); n > 0; n-- {
			effects = append(effects, randomEffect(&b))
		}
		d := &ahpv1.Decision{DecisionId: "d", Effects: effects}
		if b.next()&1 == 1 {
			d.PolicyDigest, d.PolicyRevision = "sha256:4f2a", uint64(b.next())
		}
		r, fb := hooks.RenderDraftResult(d, offer)
		checkRendered(t, offer, r, fb)
	})
}

type byteSource []byte

func (b *byteSource) next() byte {
	if len(*b) == 0 {
		return 0
	}
	x := (*b)[0]
	*b = (*b)[1:]
	return x
}

// randomOffer advertises a random subset of what the event allows, with random blocks.
func randomOffer(t *testing.T, event string, b *byteSource) *hooks.Offer {
	allowed := hooks.AllowedEffects(event)
	mask := b.next()
	var names []string
	for i, e := range allowed {
		if mask&(1<<uint(i%8)) != 0 {
			names = append(names, e)
		}
	}
	if event == "tool.before" && !slices.Contains(names, "deny") {
		names = append(names, "deny")
	}
	if len(names) == 0 {
		names = []string{allowed[0]}
	}
	caps := map[string]any{"effects": names}
	pick := b.next()
	if slices.Contains(names, "modify") {
		targets := hooks.AllowedModifyTargets(event)
		caps["modify"] = map[string]any{targets[0]: map[string]any{"replace": pick&1 != 0 || pick&2 == 0, "merge": pick&2 != 0}}
	}
	if slices.Contains(names, "flow") {
		ops := hooks.AllowedFlowOps(event)
		fl := map[string]any{"operations": ops[:1+int(pick>>2)%len(ops)]}
		if slices.Contains(fl["operations"].([]string), "continue") {
			fl["remainingContinuations"] = int(pick>>4) % 2
			fl["continuationCount"] = 0
		}
		caps["flow"] = fl
	}
	if slices.Contains(names, "inject") {
		at := [][]string{{"now"}, {"next_turn"}, {"now", "next_turn"}}[int(pick>>5)%3]
		caps["inject"] = map[string]any{"context": map[string]any{"append": true, "deliverAt": at}}
	}
	raw, _ := json.Marshal(caps)
	return offerFor(t, event, string(raw))
}

func randomEffect(b *byteSource) *ahpv1.Effect {
	rule := fmt.Sprintf("r%d", b.next())
	values := []*structpb.Value{
		message("assistant", "x"), message("tool", "y"), structpb.NewStringValue("s"),
		func() *structpb.Value { v, _ := structpb.NewValue(map[string]any{"k": "v"}); return v }(), nil,
	}
	v := values[int(b.next())%len(values)]
	target := ahpv1.ModifyTarget(int(b.next()) % 10)
	op := ahpv1.ModifyOperation(int(b.next()) % 3)
	var e *ahpv1.Effect
	switch b.next() % 11 {
	case 0:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no", Code: "not dns"}}}
	case 1:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{}}}
	case 2:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{}}}
	case 3:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: target, Operation: op, Value: v}}}
	case 4:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "m"}}}
	case 5:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Return{Return: &ahpv1.ReturnEffect{Value: v}}}
	case 6:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: "stop"}}}
	case 7:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: "continue"}}}
	case 8:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Inject{Inject: &ahpv1.InjectEffect{DeliverAt: []string{"now", "next_turn", ""}[int(b.next())%3], Value: v.GetListValue()}}}
	case 9:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: 5}}}
	default:
		e = &ahpv1.Effect{Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Target: "sec"}}}
	}
	e.RuleId = rule
	return e
}

// TestDraftResponseSchemaBites makes sure the schema check in checkRendered is real: the shared
// schema refuses an unknown effect and a modify without its value.
func TestDraftResponseSchemaBites(t *testing.T) {
	t.Parallel()
	s := responseSchema(t)
	if s == nil {
		t.Skipf("draft schemas not found under %s", draftConformanceDir)
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":"e1","result":{"protocolVersion":"draft","effects":[{"type":"unknown"}]}}`,
		`{"jsonrpc":"2.0","id":"e1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"replace"}]}}`,
	} {
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if s.Validate(doc) == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
}

// TestRenderDraftModifyInContext: content at user.elicitation.result is the MCP answer object of an
// accepted form elicitation; anything else falls back.
func TestRenderDraftModifyInContext(t *testing.T) {
	t.Parallel()
	answer, _ := structpb.NewValue(map[string]any{"answer": "no"})
	mod := &ahpv1.Effect{RuleId: "r", Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: ahpv1.ModifyTarget_MODIFY_TARGET_CONTENT, Value: answer}}}
	caps := `{"effects":["modify","message"],"modify":{"content":{"replace":true}}}`
	accept := offerFor(t, "user.elicitation.result", caps)
	r, fb := hooks.RenderDraftResult(&ahpv1.Decision{Effects: []*ahpv1.Effect{mod}}, accept)
	checkRendered(t, accept, r, fb)
	if len(r.GetEffects()) != 1 || len(fb) != 0 {
		t.Errorf("accepted form: %v, %v", r.GetEffects(), fb)
	}
	m, err := hooks.DecodeBytes([]byte(strings.Replace(interceptMessage("user.elicitation.result", caps), `"action":"accept"`, `"action":"decline"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	r, fb = hooks.RenderDraftResult(&ahpv1.Decision{Effects: []*ahpv1.Effect{mod}}, m.Intercept.Offer)
	checkRendered(t, m.Intercept.Offer, r, fb)
	if len(r.GetEffects()) != 0 || len(fb) != 1 {
		t.Errorf("declined: %v, %v", r.GetEffects(), fb)
	}
}
