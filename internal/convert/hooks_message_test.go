package convert_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/convert"
	"google.golang.org/protobuf/types/known/structpb"
)

const hooksInterceptLine = `{"jsonrpc":"2.0","id":"ev-1","method":"hooks/intercept","params":{"protocolVersion":"0.1",` +
	`"event":{"id":"ev-1","source":"urn:example:host","type":"tool.before","time":"2026-09-01T10:00:00Z",` +
	`"session":{"id":"s1"},"tool":{"callId":"c1","name":"Bash","kind":"shell","input":{"command":"ls"}}},` +
	`"capabilities":{"effects":["deny"]}}}`

func TestHooksIDs(t *testing.T) {
	t.Parallel()
	var absent convert.HooksID
	if !absent.IsAbsent() || absent.IsNull() {
		t.Error("zero HooksID must be absent")
	}
	if s, ok := convert.HooksStringID("a").StringValue(); !ok || s != "a" {
		t.Error("string id")
	}
	if n, ok := convert.HooksIntID(-7).IntValue(); !ok || n != -7 {
		t.Error("int id")
	}
	if _, ok := convert.HooksIntID(7).StringValue(); ok {
		t.Error("int id reads as string")
	}
	if !convert.HooksNullID().IsNull() {
		t.Error("null id")
	}
	if convert.HooksStringID("7") == convert.HooksIntID(7) {
		t.Error(`"7" and 7 are different ids`)
	}

	for _, tt := range []struct {
		raw  string
		want convert.HooksID
	}{
		{`"abc"`, convert.HooksStringID("abc")},
		{`0`, convert.HooksIntID(0)},
		{`-12`, convert.HooksIntID(-12)},
		{`9007199254740991`, convert.HooksIntID(1<<53 - 1)},
		{`1e3`, convert.HooksIntID(1000)},
		{`1.0`, convert.HooksIntID(1)},
		{`-250E-1`, convert.HooksIntID(-25)},

		{`null`, convert.HooksNullID()},
	} {
		msg, err := convert.DecodeHooksMessage([]byte(`{"jsonrpc":"2.0","id":` + tt.raw + `,"result":{"protocolVersion":"0.1","effects":[]}}`))
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
		_, err := convert.DecodeHooksMessage([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"result":{"protocolVersion":"0.1","effects":[]}}`))
		hooksWantError(t, err, "id", convert.HooksCodeInvalidRequest)
	}
}

// TestHooksErrorResponse checks whom a rejected message is answered to: requests to their id (or
// null when it is unreadable), notifications and responses never.
func TestHooksErrorResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		reply  bool
		id     convert.HooksID
		code   int32
		substr string // expected in the encoded response
	}{
		{"unparsable", `{"jsonrpc":"2.0",`, true, convert.HooksNullID(), -32700, `"id":null`},
		{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\"}", true, convert.HooksNullID(), -32700, `"id":null`},
		{"batch", `[]`, true, convert.HooksNullID(), -32600, `"id":null`},
		{"null document", `null`, true, convert.HooksNullID(), -32600, `"id":null`},
		{"id mismatch", strings.Replace(hooksInterceptLine, `"id":"ev-1","method"`, `"id":"other","method"`, 1),
			true, convert.HooksStringID("other"), -32602, `"path":"id"`},
		{"bad version", strings.Replace(hooksInterceptLine, `"0.1"`, `"draft"`, 1),
			true, convert.HooksStringID("ev-1"), -32001, `"supported":["0.1"]`},
		{"unsupported event", strings.Replace(hooksInterceptLine, `"tool.before"`, `"tool.after"`, 1),
			true, convert.HooksStringID("ev-1"), -32002, `"path":"params.event.type"`},
		{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"hooks/x","params":{}}`,
			true, convert.HooksIntID(3), -32601, `"id":3`},
		{"invalid id", `{"jsonrpc":"2.0","id":true,"method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`,
			true, convert.HooksNullID(), -32600, `"id":null`},
		{"no method", `{"jsonrpc":"2.0","id":"q"}`, true, convert.HooksStringID("q"), -32600, `"id":"q"`},
		{"duplicate id key", `{"jsonrpc":"2.0","id":"a","id":"b","method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`,
			true, convert.HooksNullID(), -32600, `"id":null`},
		{"duplicate other key", `{"jsonrpc":"2.0","id":"a","method":"hooks/capabilities","params":{"protocolVersion":"0.1","x":1,"x":2}}`,
			true, convert.HooksStringID("a"), -32600, `"path":"params.x"`},
		{"duplicate key in an array", `{"jsonrpc":"2.0","id":"a","method":"hooks/capabilities","params":{"protocolVersion":"0.1","x":[{"k":1},[],{"k":1,"k":2}]}}`,
			true, convert.HooksStringID("a"), -32600, `"path":"params.x[2].k"`},
		{"invalid notification", `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1"}}`, false, convert.HooksID{}, 0, ""},
		{"intercept without id", strings.Replace(hooksInterceptLine, `"id":"ev-1","method"`, `"method"`, 1), false, convert.HooksID{}, 0, ""},
		{"invalid response", `{"jsonrpc":"2.0","id":"ev-1","result":{"protocolVersion":"0.1","effects":[{"type":"allow"}]}}`, false, convert.HooksID{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg, err := convert.DecodeHooksMessage([]byte(tt.in))
			if err == nil || msg != nil {
				t.Fatalf("accepted: %v", msg)
			}
			resp, ok := convert.HooksErrorResponse(err)
			if ok != tt.reply {
				t.Fatalf("reply = %v, want %v", ok, tt.reply)
			}
			if !ok {
				return
			}
			if resp.ID != tt.id || resp.Error.GetCode() != tt.code {
				t.Errorf("response id %+v code %d, want %+v %d", resp.ID, resp.Error.GetCode(), tt.id, tt.code)
			}
			out, err := convert.EncodeHooksMessage(resp)
			if err != nil {
				t.Fatalf("error response does not encode: %v", err)
			}
			if !strings.Contains(string(out), tt.substr) {
				t.Errorf("response %s lacks %s", out, tt.substr)
			}
		})
	}
}

func TestHooksErrorSentinels(t *testing.T) {
	t.Parallel()
	_, err := convert.DecodeHooksMessage([]byte(strings.Replace(hooksInterceptLine, `"0.1"`, `"0.2"`, 1)))
	if !errors.Is(err, convert.ErrUnsupportedProtocolVersion) || errors.Is(err, convert.ErrUnsupportedEvent) {
		t.Errorf("version error %v does not match exactly ErrUnsupportedProtocolVersion", err)
	}
	_, err = convert.DecodeHooksMessage([]byte(strings.Replace(hooksInterceptLine, `"tool.before"`, `"session.start"`, 1)))
	if !errors.Is(err, convert.ErrUnsupportedEvent) || errors.Is(err, convert.ErrUnsupportedProtocolVersion) {
		t.Errorf("event error %v does not match exactly ErrUnsupportedEvent", err)
	}
	fe, ok := convert.AsFieldError(err)
	if !ok || fe.Path != "params.event.type" {
		t.Errorf("FieldError = %v", fe)
	}

	for _, tt := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("boom"), convert.HooksCodeInternalError},
		{&convert.FieldError{Path: "x", Message: "y"}, convert.HooksCodeInvalidParams},
		{convert.ErrUnsupportedEvent, convert.HooksCodeUnsupportedEvent},
		{convert.ErrUnsupportedProtocolVersion, convert.HooksCodeUnsupportedProtocolVersion},
	} {
		if got := convert.HooksErrorCode(tt.err); got != tt.code {
			t.Errorf("HooksErrorCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
	// The text of foreign errors may hold anything; it is not sent.
	rpc := convert.HooksRPCError(errors.New("secret-token-123"))
	if rpc.GetCode() != convert.HooksCodeInternalError || rpc.GetData() != nil || strings.Contains(rpc.GetMessage(), "secret") {
		t.Errorf("internal error object = %v", rpc)
	}
}

// TestHooksErrorsDoNotEchoValues feeds values that stand in for secrets into offending fields and
// checks that neither the error text nor the JSON-RPC error object repeats them.
func TestHooksErrorsDoNotEchoValues(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-7f3a"
	messages := []string{
		strings.Replace(hooksInterceptLine, `"shell"`, `"`+secret+`"`, 1),
		strings.Replace(hooksInterceptLine, `"urn:example:host"`, `"`+secret+` x"`, 1),
		strings.Replace(hooksInterceptLine, `"2026-09-01T10:00:00Z"`, `"`+secret+`"`, 1),
		strings.Replace(hooksInterceptLine, `"0.1"`, `"`+secret+`"`, 1),
		strings.Replace(hooksInterceptLine, `"tool.before"`, `"`+secret+`"`, 1),
		strings.Replace(hooksInterceptLine, `"hooks/intercept"`, `"`+secret+`"`, 1),
		strings.Replace(hooksInterceptLine, `"id":"ev-1","method"`, `"id":"`+secret+`","method"`, 1),
		strings.Replace(hooksInterceptLine, `["deny"]`, `["deny","`+secret+`"]`, 1),
		strings.Replace(hooksInterceptLine, `"input":{"command":"ls"}`, `"input":"`+secret+`"`, 1),
		`{"jsonrpc":"2.0","id":"e","result":{"protocolVersion":"0.1","effects":[{"type":"deny","reason":"r","code":"` + secret + `"}]}}`,
		`{"jsonrpc":"` + secret + `","id":"e","result":{}}`,
	}
	for i, in := range messages {
		_, err := convert.DecodeHooksMessage([]byte(in))
		if err == nil {
			t.Errorf("message %d accepted", i)
			continue
		}
		out, _ := json.Marshal(convert.EncodeHooksRPCError(convert.HooksRPCError(err)))
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
		_, err := convert.DecodeHooksRegistration([]byte(in))
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("registration %d: error %v", i, err)
		}
	}
}

func TestHooksRPCErrorCodec(t *testing.T) {
	t.Parallel()
	in := hooksJSON(t, `{"code":-32003,"message":"Backend unavailable","data":{"retryAfterMs":100},"extra":1}`)
	e, err := convert.DecodeHooksRPCError("error", in)
	if err != nil {
		t.Fatal(err)
	}
	if e.GetCode() != -32003 || e.GetMessage() != "Backend unavailable" ||
		e.GetData().GetStructValue().GetFields()["retryAfterMs"].GetNumberValue() != 100 {
		t.Errorf("decoded %v", e)
	}
	out, _ := json.Marshal(convert.EncodeHooksRPCError(e))
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
		_, err := convert.DecodeHooksRPCError("error", hooksJSON(t, tt.in))
		hooksWantError(t, err, tt.path, convert.HooksCodeInvalidParams)
	}
}

// TestEncodeHooksMessageRefusesInvalid checks that the encoder never writes what the decoder
// would refuse.
func TestEncodeHooksMessageRefusesInvalid(t *testing.T) {
	t.Parallel()
	valid, err := convert.DecodeHooksMessage([]byte(hooksInterceptLine))
	if err != nil {
		t.Fatal(err)
	}
	deny := func(reason string) *ahpv1.HooksEffect { return &ahpv1.HooksEffect{Type: "deny", Reason: reason} }
	tests := []struct {
		name string
		msg  *convert.HooksMessage
	}{
		{"nothing set", &convert.HooksMessage{ID: convert.HooksStringID("a")}},
		{"two bodies", &convert.HooksMessage{ID: convert.HooksStringID("a"),
			Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1"}, Error: &ahpv1.RpcError{Code: -32603}}},
		{"method mismatch", &convert.HooksMessage{ID: convert.HooksStringID("a"), Method: convert.HooksMethodObserve,
			Capabilities: &convert.HooksCapabilitiesParams{ProtocolVersion: "0.1"}}},
		{"two denies", &convert.HooksMessage{ID: convert.HooksStringID("a"),
			Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("x"), deny("y")}}}},
		{"empty reason", &convert.HooksMessage{ID: convert.HooksStringID("a"),
			Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("")}}}},
		{"no version", &convert.HooksMessage{ID: convert.HooksStringID("a"), Result: &ahpv1.HooksInterceptResult{}}},
		{"response without id", &convert.HooksMessage{Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1"}}},
		{"intercept id mismatch", &convert.HooksMessage{ID: convert.HooksStringID("other"), Intercept: valid.Intercept}},
		{"observe with id", &convert.HooksMessage{ID: convert.HooksStringID("ev-1"),
			Observe: &convert.HooksObserveParams{ProtocolVersion: "0.1", Request: &ahpv1.ObserveRequest{Event: valid.Intercept.Request.GetEvent()}}}},
		{"allow capability", &convert.HooksMessage{ID: convert.HooksStringID("ev-1"), Intercept: &convert.HooksInterceptParams{
			ProtocolVersion: "0.1", Request: &ahpv1.InterceptRequest{Event: valid.Intercept.Request.GetEvent(),
				Capabilities: &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_ALLOW}}}}}},
		{"bad extension key", &convert.HooksMessage{ID: convert.HooksStringID("a"), Result: &ahpv1.HooksInterceptResult{
			ProtocolVersion: "0.1", Extensions: &structpb.Struct{Fields: map[string]*structpb.Value{"nodots": structpb.NewNullValue()}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if out, err := convert.EncodeHooksMessage(tt.msg); err == nil {
				t.Errorf("encoded %s", out)
			}
		})
	}
	if _, err := convert.EncodeHooksMessage(nil); err == nil {
		t.Error("nil message encoded")
	}
}

// TestEncodeHooksMessageBuilt encodes messages built in code rather than decoded.
func TestEncodeHooksMessageBuilt(t *testing.T) {
	t.Parallel()
	out, err := convert.EncodeHooksMessage(&convert.HooksMessage{
		ID:     convert.HooksIntID(9),
		Result: &ahpv1.HooksInterceptResult{ProtocolVersion: "0.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":9,"jsonrpc":"2.0","result":{"effects":[],"protocolVersion":"0.1"}}`; string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
	out, err = convert.EncodeHooksMessage(&convert.HooksMessage{
		ID:           convert.HooksStringID("cap-1"),
		Capabilities: &convert.HooksCapabilitiesParams{ProtocolVersion: "0.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"cap-1","jsonrpc":"2.0","method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`; string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
}

func TestCheckHooksStdioFraming(t *testing.T) {
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
		err := convert.CheckHooksStdioFraming([]byte(tt.in))
		if tt.valid != (err == nil) {
			t.Errorf("%q: err = %v, want valid %v", tt.in, err, tt.valid)
		}
		if err != nil && convert.HooksErrorCode(err) != convert.HooksCodeParseError {
			t.Errorf("%q: code %d", tt.in, convert.HooksErrorCode(err))
		}
	}
}

// TestHooksDuplicateKeys exercises the duplicate-key walk on tricky but valid JSON.
func TestHooksDuplicateKeys(t *testing.T) {
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
		msg, err := convert.DecodeHooksMessage(wrap(tt.params))
		if tt.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.params, err)
			} else if len(msg.Capabilities.UnknownFields.GetFields()) == 0 {
				t.Errorf("%s: members lost", tt.params)
			}
			continue
		}
		hooksWantError(t, err, tt.path, convert.HooksCodeInvalidRequest)
	}
}
