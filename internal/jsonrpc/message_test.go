package jsonrpc_test

import (
	"errors"
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/jsonrpc"
)

func TestRead(t *testing.T) {
	t.Parallel()
	type want struct {
		syntax, object, notification, response, duplicate, duplicateID bool
		method                                                         string
	}
	for _, c := range []struct {
		msg  string
		want want
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{}}`, want{object: true, method: "ahp/event"}},
		{`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}`, want{object: true, notification: true, method: "hooks/observe"}},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, want{object: true, response: true}},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, want{object: true, response: true}},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, want{object: true}},
		{`{"id":1,"method":"a","params":{"x":1,"x":2}}`, want{object: true, method: "a"}},
		{`{"id":1,"method":"a","params":{"x":1,"x":2},"method":"b"}`, want{object: true, method: "b", duplicate: true}},
		{`{"id":1,"params":{"x":1,"x":2},"id":2,"method":"a"}`, want{object: true, method: "a", duplicate: true, duplicateID: true}},
		{`[{"jsonrpc":"2.0"}]`, want{}},
		{`null`, want{}},
		{`{"id":1`, want{syntax: true}},
		{"{\"id\":\"\xff\"}", want{syntax: true}},
	} {
		m := jsonrpc.Read([]byte(c.msg))
		got := want{
			syntax: m.Syntax(), object: m.Object != nil, notification: m.IsNotification(), response: m.IsResponse(),
			duplicate: m.Duplicate, duplicateID: m.DuplicateID, method: m.Method,
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.msg, got, c.want)
		}
		if c.want.duplicate && !errors.Is(m.Err, jsonwire.ErrDuplicateKey) {
			t.Errorf("%s: error %v, want a duplicate key", c.msg, m.Err)
		}
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	m := jsonrpc.Read([]byte(`{"a":"x\u003c","b":"","c":-9007199254740991,"d":9007199254740992,"e":1.0,"f":1e3,"g":null,"h":true}`))
	for key, want := range map[string]string{"a": `"x<"`, "b": `""`, "c": `-9007199254740991`, "d": "", "e": "", "f": "", "g": "", "h": ""} {
		idJSON, _ := jsonrpc.RequestID(m.Object[key])
		if string(idJSON) != want {
			t.Errorf("id %s: %s, want %q", key, idJSON, want)
		}
	}
}

func TestResponses(t *testing.T) {
	t.Parallel()
	if got := string(jsonrpc.ErrorResponse(jsonrpc.NullID, -32700, "Parse <error>")); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse <error>"}}` {
		t.Errorf("error response: %s", got)
	}
	if got := string(jsonrpc.ResultResponse([]byte(`"r1"`), []byte(`{"decision":"allow"}`))); got != `{"jsonrpc":"2.0","id":"r1","result":{"decision":"allow"}}` {
		t.Errorf("result response: %s", got)
	}
}
