package hooks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/proto"
)

// testCase is one entry of testdata/hooks/manifest.json.
type testCase struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"` // message, stdio or registration
	Valid     bool   `json:"valid"`
	ErrorPath string `json:"errorPath"`
	ErrorCode int    `json:"errorCode"`
	Note      string `json:"note"`
}

const testdataDir = "testdata"

func loadCases(t testing.TB) []testCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cases []testCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m.Cases
}

// sameJSON reports whether two JSON documents hold the same value, ignoring formatting and
// key order.
func sameJSON(t testing.TB, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("input is not JSON: %v", err)
	}
	return reflect.DeepEqual(g, w)
}

// messageDiff names the first difference between two messages, or returns "".
func messageDiff(a, b *hooks.Message) string {
	switch {
	case a.ID != b.ID:
		return fmt.Sprintf("ID %+v != %+v", a.ID, b.ID)
	case a.Method != b.Method:
		return fmt.Sprintf("Method %q != %q", a.Method, b.Method)
	case !proto.Equal(a.UnknownFields, b.UnknownFields):
		return "UnknownFields differ"
	case !proto.Equal(a.Result, b.Result):
		return "Result differs"
	case !proto.Equal(a.Error, b.Error):
		return "Error differs"
	case (a.Intercept == nil) != (b.Intercept == nil),
		(a.Observe == nil) != (b.Observe == nil),
		(a.Capabilities == nil) != (b.Capabilities == nil):
		return "different message kinds"
	}
	if p, q := a.Intercept, b.Intercept; p != nil {
		switch {
		case p.ProtocolVersion != q.ProtocolVersion:
			return "Intercept.ProtocolVersion differs"
		case !proto.Equal(p.Request, q.Request):
			return "Intercept.Request differs"
		case !proto.Equal(p.Extensions, q.Extensions):
			return "Intercept.Extensions differ"
		case !proto.Equal(p.State, q.State):
			return "Intercept.State differs"
		case !proto.Equal(p.CapabilitiesUnknownFields, q.CapabilitiesUnknownFields):
			return "Intercept.CapabilitiesUnknownFields differ"
		case !proto.Equal(p.UnknownFields, q.UnknownFields):
			return "Intercept.UnknownFields differ"
		}
	}
	if p, q := a.Observe, b.Observe; p != nil {
		switch {
		case p.ProtocolVersion != q.ProtocolVersion:
			return "Observe.ProtocolVersion differs"
		case !proto.Equal(p.Request, q.Request):
			return "Observe.Request differs"
		case !proto.Equal(p.UnknownFields, q.UnknownFields):
			return "Observe.UnknownFields differ"
		}
	}
	if p, q := a.Capabilities, b.Capabilities; p != nil {
		switch {
		case p.ProtocolVersion != q.ProtocolVersion:
			return "Capabilities.ProtocolVersion differs"
		case !proto.Equal(p.UnknownFields, q.UnknownFields):
			return "Capabilities.UnknownFields differ"
		}
	}
	return ""
}

// wantError checks that err is a *FieldError at path whose JSON-RPC code is code (0: any).
func wantError(t testing.TB, err error, path string, code int) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error at %q", path)
	}
	fe, ok := jsonwire.AsFieldError(err)
	if !ok {
		t.Fatalf("error %q is not a *FieldError", err)
	}
	if fe.Path != path {
		t.Errorf("error path = %q, want %q (error: %v)", fe.Path, path, err)
	}
	if got := hooks.ErrorCode(err); code != 0 && got != code {
		t.Errorf("ErrorCode = %d, want %d (error: %v)", got, code, err)
	}
}

// roundTripMessage decodes data, encodes it again and checks that the JSON and the decoded
// message survive unchanged.
func roundTripMessage(t testing.TB, data []byte) *hooks.Message {
	t.Helper()
	msg, err := hooks.DecodeMessage(data)
	if err != nil {
		t.Fatalf("DecodeMessage: %v", err)
	}
	out, err := hooks.EncodeMessage(msg)
	if err != nil {
		t.Fatalf("EncodeMessage: %v", err)
	}
	if !sameJSON(t, out, data) {
		t.Errorf("round trip changed the JSON\n got: %s\nwant: %s", out, data)
	}
	again, err := hooks.DecodeMessage(out)
	if err != nil {
		t.Fatalf("decoding the encoding: %v", err)
	}
	if d := messageDiff(msg, again); d != "" {
		t.Errorf("decode(encode(m)) != m: %s", d)
	}
	return msg
}

// roundTripRegistration is roundTripMessage for registration documents.
func roundTripRegistration(t testing.TB, data []byte) {
	t.Helper()
	reg, err := hooks.DecodeRegistration(data)
	if err != nil {
		t.Fatalf("DecodeRegistration: %v", err)
	}
	out, err := hooks.EncodeRegistration(reg)
	if err != nil {
		t.Fatalf("EncodeRegistration: %v", err)
	}
	if !sameJSON(t, out, data) {
		t.Errorf("round trip changed the JSON\n got: %s\nwant: %s", out, data)
	}
	again, err := hooks.DecodeRegistration(out)
	if err != nil {
		t.Fatalf("decoding the encoding: %v", err)
	}
	if !proto.Equal(reg, again) {
		t.Errorf("decode(encode(r)) != r")
	}
}
