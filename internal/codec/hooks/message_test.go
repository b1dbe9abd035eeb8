package hooks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

const interceptLine = `{"jsonrpc":"2.0","id":"ev-1","method":"hooks/intercept","params":{"protocolVersion":"0.1",` +
	`"event":{"id":"ev-1","source":"urn:example:host","type":"tool.before","time":"2026-09-01T10:00:00Z",` +
	`"session":{"id":"s1"},"tool":{"callId":"c1","name":"Bash","kind":"shell","input":{"command":"ls"}}},` +
	`"capabilities":{"effects":["deny"]}}}`

func TestIDs(t *testing.T) {
	t.Parallel()
	var absent hooks.ID
	if !absent.IsAbsent() || absent.IsNull() {
		t.Error("zero ID must be absent")
	}
	if s, ok := hooks.StringID("a").StringValue(); !ok || s != "a" {
		t.Error("string id")
	}
	if n, ok := hooks.IntID(-7).IntValue(); !ok || n != -7 {
		t.Error("int id")
	}
	if _, ok := hooks.IntID(7).StringValue(); ok {
		t.Error("int id reads as string")
	}
	if !hooks.NullID().IsNull() {
		t.Error("null id")
	}
	if hooks.StringID("7") == hooks.IntID(7) {
		t.Error(`"7" and 7 are different ids`)
	}

	for _, tt := range []struct {
		raw  string
		want hooks.ID
	}{
		{`"abc"`, hooks.StringID("abc")},
		{`0`, hooks.IntID(0)},
		{`-12`, hooks.IntID(-12)},
		{`9007199254740991`, hooks.IntID(1<<53 - 1)},
		{`1e3`, hooks.IntID(1000)},
		{`1.0`, hooks.IntID(1)},
		{`-250E-1`, hooks.IntID(-25)},

		{`null`, hooks.NullID()},
	} {
		msg, err := hooks.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + tt.raw + `,"result":{"protocolVersion":"0.1","effects":[]}}`))
		if err != nil {
			t.Errorf("id %s: %v", tt.raw, err)
			continue
		}
		if msg.ID != tt.want {
			t.Errorf("id %s = %+v, want %+v", tt.raw, msg.ID, tt.want)
		}
	}
	for _, raw := range []string{`""`, `1.5`, `9007199254740992`, `100.000000000000000000001`, `1e400`, `5e-1`,
		`1e99999999999`, `true`, `{}`, `[1]`} {
		_, err := hooks.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"result":{"protocolVersion":"0.1","effects":[]}}`))
		wantError(t, err, "id", hooks.CodeInvalidRequest)
	}
}

// TestErrorResponse checks whom a rejected message is answered to: requests to their id (or
// null when it is unreadable), notifications and responses never.
func TestErrorResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		reply  bool
		id     hooks.ID
		code   int32
		substr string // expected in the encoded response
	}{
		{"unparsable", `{"jsonrpc":"2.0",`, true, hooks.NullID(), -32700, `"id":null`},
		{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\"}", true, hooks.NullID(), -32700, `"id":null`},
		{"batch", `[]`, true, hooks.NullID(), -32600, `"id":null`},
		{"null document", `null`, true, hooks.NullID(), -32600, `"id":null`},
		{"id mismatch", strings.Replace(interceptLine, `"id":"ev-1","method"`, `"id":"other","method"`, 1),
			true, hooks.StringID("other"), -32602, `"path":"id"`},
		{"bad version", strings.Replace(interceptLine, `"0.1"`, `"draft"`, 1),
			true, hooks.StringID("ev-1"), -32001, `"supported":["0.1"]`},
		{"unsupported event", strings.Replace(interceptLine, `"tool.before"`, `"tool.after"`, 1),
			true, hooks.StringID("ev-1"), -32002, `"path":"params.event.type"`},
		{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"hooks/x","params":{}}`,
			true, hooks.IntID(3), -32601, `"id":3`},
		{"invalid id", `{"jsonrpc":"2.0","id":true,"method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`,
			true, hooks.NullID(), -32600, `"id":null`},
		{"no method", `{"jsonrpc":"2.0","id":"q"}`, true, hooks.StringID("q"), -32600, `"id":"q"`},
		{"duplicate id key", `{"jsonrpc":"2.0","id":"a","id":"b","method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`,
			true, hooks.NullID(), -32600, `"id":null`},
		{"duplicate other key", `{"jsonrpc":"2.0","id":"a","method":"hooks/capabilities","params":{"protocolVersion":"0.1","x":1,"x":2}}`,
			true, hooks.StringID("a"), -32600, `"path":"params.x"`},
		{"duplicate key in an array", `{"jsonrpc":"2.0","id":"a","method":"hooks/capabilities","params":{"protocolVersion":"0.1","x":[{"k":1},[],{"k":1,"k":2}]}}`,
			true, hooks.StringID("a"), -32600, `"path":"params.x[2].k"`},
		{"invalid notification", `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1"}}`, false, hooks.ID{}, 0, ""},
		{"intercept without id", strings.Replace(interceptLine, `"id":"ev-1","method"`, `"method"`, 1), false, hooks.ID{}, 0, ""},
		{"invalid response", `{"jsonrpc":"2.0","id":"ev-1","result":{"protocolVersion":"0.1","effects":[{"type":"allow"}]}}`, false, hooks.ID{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg, err := hooks.DecodeMessage([]byte(tt.in))
			if err == nil || msg != nil {
				t.Fatalf("accepted: %v", msg)
			}
			resp, ok := hooks.ErrorResponse(err)
			if ok != tt.reply {
				t.Fatalf("reply = %v, want %v", ok, tt.reply)
			}
			if !ok {
				return
			}
			if resp.ID != tt.id || resp.Error.GetCode() != tt.code {
				t.Errorf("response id %+v code %d, want %+v %d", resp.ID, resp.Error.GetCode(), tt.id, tt.code)
			}
			out, err := hooks.EncodeMessage(resp)
			if err != nil {
				t.Fatalf("error response does not encode: %v", err)
			}
			if !strings.Contains(string(out), tt.substr) {
				t.Errorf("response %s lacks %s", out, tt.substr)
			}
		})
	}
}

func TestErrorSentinels(t *testing.T) {
	t.Parallel()
	_, err := hooks.DecodeMessage([]byte(strings.Replace(interceptLine, `"0.1"`, `"0.2"`, 1)))
	if !errors.Is(err, hooks.ErrUnsupportedProtocolVersion) || errors.Is(err, hooks.ErrUnsupportedEvent) {
		t.Errorf("version error %v does not match exactly ErrUnsupportedProtocolVersion", err)
	}
	_, err = hooks.DecodeMessage([]byte(strings.Replace(interceptLine, `"tool.before"`, `"session.start"`, 1)))
	if !errors.Is(err, hooks.ErrUnsupportedEvent) || errors.Is(err, hooks.ErrUnsupportedProtocolVersion) {
		t.Errorf("event error %v does not match exactly ErrUnsupportedEvent", err)
	}
	fe, ok := jsonwire.AsFieldError(err)
	if !ok || fe.Path != "params.event.type" {
		t.Errorf("FieldError = %v", fe)
	}

	for _, tt := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("boom"), hooks.CodeInternalError},
		{&jsonwire.FieldError{Path: "x", Message: "y"}, hooks.CodeInvalidParams},
		{hooks.ErrUnsupportedEvent, hooks.CodeUnsupportedEvent},
		{hooks.ErrUnsupportedProtocolVersion, hooks.CodeUnsupportedProtocolVersion},
	} {
		if got := hooks.ErrorCode(tt.err); got != tt.code {
			t.Errorf("ErrorCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
	// The text of foreign errors may hold anything; it is not sent.
	rpc := hooks.RPCError(errors.New("secret-token-123"))
	if rpc.GetCode() != hooks.CodeInternalError || rpc.GetData() != nil || strings.Contains(rpc.GetMessage(), "secret") {
		t.Errorf("internal error object = %v", rpc)
	}
}

// TestErrorsDoNotEchoValues feeds values that stand in for secrets into offending fields and
// checks that neither the error text nor the JSON-RPC error object repeats them.
func TestErrorsDoNotEchoValues(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-7f3a"
	messages := []string{
		strings.Replace(interceptLine, `"shell"`, `"`+secret+`"`, 1),
		strings.Replace(interceptLine, `"urn:example:host"`, `"`+secret+` x"`, 1),
		strings.Replace(interceptLine, `"2026-09-01T10:00:00Z"`, `"`+secret+`"`, 1),
		strings.Replace(interceptLine, `"0.1"`, `"`+secret+`"`, 1),
		strings.Replace(interceptLine, `"tool.before"`, `"`+secret+`"`, 1),
		strings.Replace(interceptLine, `"hooks/intercept"`, `"`+secret+`"`, 1),
		strings.Replace(interceptLine, `"id":"ev-1","method"`, `"id":"`+secret+`","method"`, 1),
		strings.Replace(interceptLine, `["deny"]`, `["deny","`+secret+`"]`, 1),
		strings.Replace(interceptLine, `"input":{"command":"ls"}`, `"input":"`+secret+`"`, 1),
		`{"jsonrpc":"2.0","id":"e","result":{"protocolVersion":"0.1","effects":[{"type":"deny","reason":"r","code":"` + secret + `"}]}}`,
		`{"jsonrpc":"` + secret + `","id":"e","result":{}}`,
	}
	for i, in := range messages {
		_, err := hooks.DecodeMessage([]byte(in))
		if err == nil {
			t.Errorf("message %d accepted", i)
			continue
		}
		out, _ := json.Marshal(hooks.EncodeRPCError(hooks.RPCError(err)))
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(string(out), "SECRET") {
			t.Errorf("message %d: value echoed: %v / %s", i, err, out)
		}
	}
	regs := []string{
		`{"protocolVersion":"0.1","hooks":[{"id":"com.example.a","transport":{"type":"http","url":"https://h.example/"},` +
			`"authentication":{"type":"bearer","tokenEnv":"T","token":"` + secret + `"},"subscriptions":[{"events":["tool.after"],"mode":"observe"}]}]}`,
		`{"protocolVersion":"0.1","hooks":[{"id":"com.example.a","transport":{"type":"http","url":"https://h.example/"},` +
			`"authentication":{"type":"bearer","tokenEnv":"` + secret + `-x"},"subscriptions":[{"events":["tool.after"],"mode":"observe"}]}]}`,
		`{"protocolVersion":"0.1","hooks":[{"id":"com.example.a","transport":{"type":"http","url":"https://` + secret + ` h/"},` +
			`"subscriptions":[{"events":["tool.after"],"mode":"observe"}]}]}`,
	}
	for i, in := range regs {
		_, err := hooks.DecodeRegistration([]byte(in))
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("registration %d: error %v", i, err)
		}
	}
}

func TestRPCErrorCodec(t *testing.T) {
	t.Parallel()
	in := parseText(t, `{"code":-32003,"message":"Backend unavailable","data":{"retryAfterMs":100},"extra":1}`)
	e, err := hooks.DecodeRPCError("error", in)
	if err != nil {
		t.Fatal(err)
	}
	if e.GetCode() != -32003 || e.GetMessage() != "Backend unavailable" ||
		e.GetData().GetStructValue().GetFields()["retryAfterMs"].GetNumberValue() != 100 {
		t.Errorf("decoded %v", e)
	}
	out, _ := json.Marshal(hooks.EncodeRPCError(e))
	if string(out) != `{"code":-32003,"data":{"retryAfterMs":100},"message":"Backend unavailable"}` {
		t.Errorf("encoded %s", out)
	}
	for _, tt := range []struct{ in, path string }{
		{`{"code":"x","message":"m"}`, "error.code"},
		{`{"code":2147483648,"message":"m"}`, "error.code"},
		{`{"message":"m"}`, "error.code"},
		{`{"code":1,"message":2}`, "error.message"},
		{`"oops"`, "error"},
	} {
		_, err := hooks.DecodeRPCError("error", parseText(t, tt.in))
		wantError(t, err, tt.path, hooks.CodeInvalidParams)
	}
}

// TestEncodeMessageRefusesInvalid checks that the encoder never writes what the decoder
// would refuse.
func TestEncodeMessageRefusesInvalid(t *testing.T) {
	t.Parallel()
	valid, err := hooks.DecodeMessage([]byte(interceptLine))
	if err != nil {
		t.Fatal(err)
	}
	deny := func(reason string) *ahpv1.HooksEffect { return &ahpv1.HooksEffect{Type: "deny", Reason: reason} }
	tests := []struct {
		name string
		msg  *hooks.Message
	}{
		{"nothing set", &hooks.Message{ID: hooks.StringID("a")}},
		{"two bodies", &hooks.Message{ID: hooks.StringID("a"),
			Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1"}, Error: &ahpv1.RpcError{Code: -32603}}},
		{"method mismatch", &hooks.Message{ID: hooks.StringID("a"), Method: hooks.MethodObserve,
			Capabilities: &hooks.CapabilitiesParams{ProtocolVersion: "0.1"}}},
		{"two denies", &hooks.Message{ID: hooks.StringID("a"),
			Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("x"), deny("y")}}}},
		{"empty reason", &hooks.Message{ID: hooks.StringID("a"),
			Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("")}}}},
		{"no version", &hooks.Message{ID: hooks.StringID("a"), Result: &ahpv1.HooksInterceptResult{}}},
		{"response without id", &hooks.Message{Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1"}}},
		{"intercept id mismatch", &hooks.Message{ID: hooks.StringID("other"), Intercept: valid.Intercept}},
		{"observe with id", &hooks.Message{ID: hooks.StringID("ev-1"),
			Observe: &hooks.ObserveParams{ProtocolVersion: "0.1", Request: &ahpv1.ObserveRequest{Event: valid.Intercept.Request.GetEvent()}}}},
		{"allow capability", &hooks.Message{ID: hooks.StringID("ev-1"), Intercept: &hooks.InterceptParams{
			ProtocolVersion: "0.1", Request: &ahpv1.InterceptRequest{Event: valid.Intercept.Request.GetEvent(),
				Capabilities: &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_ALLOW}}}}}},
		{"bad extension key", &hooks.Message{ID: hooks.StringID("a"), Result: &ahpv1.HooksInterceptResult{
			ProtocolVersion: "0.1", Extensions: &structpb.Struct{Fields: map[string]*structpb.Value{"nodots": structpb.NewNullValue()}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if out, err := hooks.EncodeMessage(tt.msg); err == nil {
				t.Errorf("encoded %s", out)
			}
		})
	}
	if _, err := hooks.EncodeMessage(nil); err == nil {
		t.Error("nil message encoded")
	}
}

// TestEncodeMessageBuilt encodes messages built in code rather than decoded.
func TestEncodeMessageBuilt(t *testing.T) {
	t.Parallel()
	out, err := hooks.EncodeMessage(&hooks.Message{
		ID:     hooks.IntID(9),
		Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":9,"jsonrpc":"2.0","result":{"effects":[],"protocolVersion":"0.1"}}`; string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
	out, err = hooks.EncodeMessage(&hooks.Message{
		ID:           hooks.StringID("cap-1"),
		Capabilities: &hooks.CapabilitiesParams{ProtocolVersion: "0.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"cap-1","jsonrpc":"2.0","method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`; string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
}

func TestCheckStdioFraming(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in    string
		valid bool
	}{
		{"{}\n", true},
		{`{"a":"line\nbreak"}` + "\n", true},
		{"{}", false},
		{"{}\r\n", false},
		{"{\n}\n", false},
		{"{}\n\n", false},
		{"\n", false},
		{"  \n", false},
		{"", false},
		{"{}\n{}\n", false},
	} {
		err := hooks.CheckStdioFraming([]byte(tt.in))
		if tt.valid != (err == nil) {
			t.Errorf("%q: err = %v, want valid %v", tt.in, err, tt.valid)
		}
		if err != nil && hooks.ErrorCode(err) != hooks.CodeParseError {
			t.Errorf("%q: code %d", tt.in, hooks.ErrorCode(err))
		}
	}
}

// TestDuplicateKeys exercises the duplicate-key walk on tricky but valid JSON.
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	wrap := func(params string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"a","method":"hooks/capabilities","params":{"protocolVersion":"0.1",` + params + `}}`)
	}
	tests := []struct {
		params string
		path   string // "" when the message is valid
	}{
		{`"x":{"a":1,"b":{"a":2}}`, ""},
		{`"x":"{\"k\":1,\"k\":2}","y":"[,]}"`, ""},
		{`"x":{"a\"b":1,"a\\b":2,"a":3}`, ""},
		{`"x":[{"a":1},{"a":2}],"y":[[{"a":1}]]`, ""},
		{`"x":{"a":1,"\u0061":2}`, "params.x.a"},
		{`"x":{"a":1,"b":[1,{"c":1,"c":2}]}`, "params.x.b[1].c"},
		{`"x":[[],[[{"d":1,"d":1}]]]`, "params.x[1][0][0].d"},
		{`"protocolVersion":"0.1"`, "params.protocolVersion"},
	}
	for _, tt := range tests {
		msg, err := hooks.DecodeMessage(wrap(tt.params))
		if tt.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.params, err)
			} else if len(msg.Capabilities.UnknownFields.GetFields()) == 0 {
				t.Errorf("%s: members lost", tt.params)
			}
			continue
		}
		wantError(t, err, tt.path, hooks.CodeInvalidRequest)
	}
}
