package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
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

// messageDiff describes the differences between two messages, or returns "".
func messageDiff(a, b *hooks.Message) string {
	// An Offer's raw tree is checked by the JSON comparison of every round trip.
	return cmp.Diff(a, b, protocmp.Transform(), cmp.Comparer(func(x, y hooks.ID) bool { return x == y }),
		cmpopts.IgnoreUnexported(hooks.Offer{}))
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
	return roundTrip(t, "Message", data, hooks.DecodeMessage, hooks.EncodeMessage, messageDiff)
}

// roundTripRegistration is roundTripMessage for registration documents.
func roundTripRegistration(t testing.TB, data []byte) {
	t.Helper()
	roundTrip(t, "Registration", data, hooks.DecodeRegistration, hooks.EncodeRegistration,
		func(a, b *ahpv1.HooksRegistration) string { return cmp.Diff(a, b, protocmp.Transform()) })
}

// document is a kind of document the fixtures hold: how to decode it and how to round-trip it.
type document struct {
	decode    func([]byte) error
	roundTrip func(testing.TB, []byte)
}

var (
	messageDoc = document{
		decode:    func(b []byte) error { _, err := hooks.DecodeMessage(b); return err },
		roundTrip: func(t testing.TB, b []byte) { roundTripMessage(t, b) },
	}
	draftDoc = document{
		decode: func(b []byte) error { _, err := hooks.DecodeBytes(b); return err },
		roundTrip: func(t testing.TB, b []byte) {
			roundTrip(t, "Draft", b, hooks.DecodeBytes, hooks.EncodeMessage, messageDiff)
		},
	}
	draftRegistrationDoc = document{
		decode: func(b []byte) error { _, err := hooks.DecodeDraftRegistration(b); return err },
		roundTrip: func(t testing.TB, b []byte) {
			roundTrip(t, "DraftRegistration", b, hooks.DecodeDraftRegistration, hooks.EncodeDraftRegistration,
				func(a, b *ahpv1.HooksRegistration) string { return cmp.Diff(a, b, protocmp.Transform()) })
		},
	}
	registrationDoc = document{
		decode:    func(b []byte) error { _, err := hooks.DecodeRegistration(b); return err },
		roundTrip: roundTripRegistration,
	}
)

// check round-trips data when valid, and otherwise wants decoding to fail at path with code.
func (d document) check(t testing.TB, data []byte, valid bool, path string, code int) {
	t.Helper()
	if !valid {
		wantError(t, d.decode(data), path, code)
		return
	}
	d.roundTrip(t, data)
}

// roundTrip decodes data, encodes it again and checks that the JSON survives unchanged and that
// decoding the encoding gives the same value (diff returns "" when it does).
func roundTrip[M any](t testing.TB, what string, data []byte, decode func([]byte) (M, error), encode func(M) ([]byte, error), diff func(a, b M) string) M {
	t.Helper()
	m, err := decode(data)
	if err != nil {
		t.Fatalf("Decode%s: %v", what, err)
	}
	out, err := encode(m)
	if err != nil {
		t.Fatalf("Encode%s: %v", what, err)
	}
	if !testkit.SameJSON(t, out, data) {
		t.Errorf("round trip changed the JSON\n got: %s\nwant: %s", out, data)
	}
	again, err := decode(out)
	if err != nil {
		t.Fatalf("decoding the encoding: %v", err)
	}
	if d := diff(m, again); d != "" {
		t.Errorf("decode(encode(m)) != m: %s", d)
	}
	return m
}
