package convert_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ahp-gateway/ahp/internal/convert"
	"google.golang.org/protobuf/proto"
)

// hooksCase is one entry of testdata/hooks/manifest.json.
type hooksCase struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"` // message, stdio or registration
	Valid     bool   `json:"valid"`
	ErrorPath string `json:"errorPath"`
	ErrorCode int    `json:"errorCode"`
	Note      string `json:"note"`
}

const hooksTestdata = "testdata/hooks"

func hooksLoadCases(t testing.TB) []hooksCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(hooksTestdata, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cases []hooksCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m.Cases
}

// hooksSameJSON reports whether two JSON documents hold the same value, ignoring formatting and
// key order.
func hooksSameJSON(t testing.TB, got, want []byte) bool {
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

// hooksMessageDiff names the first difference between two messages, or returns "".
func hooksMessageDiff(a, b *convert.HooksMessage) string {
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

// hooksWantError checks that err is a *FieldError at path whose JSON-RPC code is code (0: any).
func hooksWantError(t testing.TB, err error, path string, code int) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error at %q", path)
	}
	fe, ok := convert.AsFieldError(err)
	if !ok {
		t.Fatalf("error %q is not a *FieldError", err)
	}
	if fe.Path != path {
		t.Errorf("error path = %q, want %q (error: %v)", fe.Path, path, err)
	}
	if got := convert.HooksErrorCode(err); code != 0 && got != code {
		t.Errorf("HooksErrorCode = %d, want %d (error: %v)", got, code, err)
	}
}

// hooksRoundTripMessage decodes data, encodes it again and checks that the JSON and the decoded
// message survive unchanged.
func hooksRoundTripMessage(t testing.TB, data []byte) *convert.HooksMessage {
	t.Helper()
	msg, err := convert.DecodeHooksMessage(data)
	if err != nil {
		t.Fatalf("DecodeHooksMessage: %v", err)
	}
	out, err := convert.EncodeHooksMessage(msg)
	if err != nil {
		t.Fatalf("EncodeHooksMessage: %v", err)
	}
	if !hooksSameJSON(t, out, data) {
		t.Errorf("round trip changed the JSON\n got: %s\nwant: %s", out, data)
	}
	again, err := convert.DecodeHooksMessage(out)
	if err != nil {
		t.Fatalf("decoding the encoding: %v", err)
	}
	if d := hooksMessageDiff(msg, again); d != "" {
		t.Errorf("decode(encode(m)) != m: %s", d)
	}
	return msg
}

// hooksRoundTripRegistration is hooksRoundTripMessage for registration documents.
func hooksRoundTripRegistration(t testing.TB, data []byte) {
	t.Helper()
	reg, err := convert.DecodeHooksRegistration(data)
	if err != nil {
		t.Fatalf("DecodeHooksRegistration: %v", err)
	}
	out, err := convert.EncodeHooksRegistration(reg)
	if err != nil {
		t.Fatalf("EncodeHooksRegistration: %v", err)
	}
	if !hooksSameJSON(t, out, data) {
		t.Errorf("round trip changed the JSON\n got: %s\nwant: %s", out, data)
	}
	again, err := convert.DecodeHooksRegistration(out)
	if err != nil {
		t.Fatalf("decoding the encoding: %v", err)
	}
	if !proto.Equal(reg, again) {
		t.Errorf("decode(encode(r)) != r")
	}
}
