package hooks_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// addSeeds adds every file of the named testdata/hooks directories to the seed corpus.
func addSeeds(f *testing.F, dirs ...string) {
	f.Helper()
	for _, dir := range dirs {
		for _, file := range testkit.ReadFiles(f, filepath.Join(testdataDir, dir, "*")) {
			f.Add(file.Data)
		}
	}
}

// FuzzHooksMessage checks that hooks.DecodeMessage never panics, that whatever it accepts encodes
// as one stdio line and decodes back to an equal message, and that whatever it rejects yields a
// classified error whose JSON-RPC answer encodes.
func FuzzHooksMessage(f *testing.F) {
	addSeeds(f, "message", "stdio")
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := hooks.DecodeMessage(data)
		if err != nil {
			if msg != nil {
				t.Fatal("a message was returned with an error")
			}
			if _, ok := jsonwire.AsFieldError(err); !ok {
				t.Fatalf("error is not a *FieldError: %v", err)
			}
			if code := hooks.ErrorCode(err); code == hooks.CodeInternalError {
				t.Fatalf("unclassified error: %v", err)
			}
			if resp, ok := hooks.ErrorResponse(err); ok {
				if _, err := hooks.EncodeMessage(resp); err != nil {
					t.Fatalf("error response does not encode: %v", err)
				}
			}
			return
		}
		out, err := hooks.EncodeMessage(msg)
		if err != nil {
			t.Fatalf("accepted message does not encode: %v", err)
		}
		if err := hooks.CheckStdioFraming(append(bytes.Clone(out), '\n')); err != nil {
			t.Fatalf("encoding is not one stdio line: %v", err)
		}
		again, err := hooks.DecodeMessage(out)
		if err != nil {
			t.Fatalf("encoding does not decode: %v\n%s", err, out)
		}
		if d := messageDiff(msg, again); d != "" {
			t.Fatalf("decode(encode(m)) != m: %s\n%s", d, out)
		}
		out2, err := hooks.EncodeMessage(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable: %v\n%s\n%s", err, out, out2)
		}
		if msg.Result != nil && len(msg.UnknownFields.GetFields()) == 0 {
			if direct := hooks.EncodeResult(msg.ID, msg.Result); !bytes.Equal(direct, out) {
				t.Fatalf("EncodeResult differs from EncodeMessage:\n%s\n%s", direct, out)
			}
		}
	})
}

// FuzzRenderResult is the property that lets the bridge write answers with EncodeResult, which
// does not check them: whatever RenderResult makes of a decision encodes under EncodeMessage's
// check, in the same bytes, and decodes back (encode -> decode round trip).
func FuzzRenderResult(f *testing.F) {
	f.Add("rm -rf /", "dev.ahpgateway.policy.destructive", "rule-1", "dec-1", "com.example.x", 1.5, true, true, "ev-1", int64(0), uint8(2))
	f.Add("", "not a code", "", "", "bad key", 0.0, false, false, "", int64(1<<53), uint8(3))
	f.Add("\u2028<&>\xff", "a.b", "r", "d", "dev.ahpgateway", -0.0, true, false, "x", int64(-7), uint8(1))
	f.Add("no", "dev.ahpgateway.policy.deny", "rule-2", "dec-2", "", 0.0, true, false, "sha256:00", int64(41), uint8(0))
	f.Add("", "", "", "", "", 0.0, false, true, "", int64(0), uint8(1))
	f.Fuzz(func(t *testing.T, reason, code, ruleID, decisionID, extKey string, num float64, deny, synthetic bool, idStr string, idNum int64, idKind uint8) {
		d := &ahpv1.Decision{DecisionId: decisionID, Synthetic: synthetic}
		if ruleID != "" {
			d.MatchedRuleIds = []string{ruleID, extKey}
		}
		d.PolicyDigest = idStr
		if idNum > 0 {
			d.PolicyRevision = uint64(idNum)
		}
		if deny {
			var ext *structpb.Struct // no extensions of its own when extKey is empty
			if extKey != "" {
				ext = &structpb.Struct{Fields: map[string]*structpb.Value{extKey: structpb.NewNumberValue(num)}}
			}
			d.Effects = append(d.Effects,
				&ahpv1.Effect{RuleId: ruleID, Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason, Code: code, Extensions: ext}}},
				&ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "second"}}})
		}
		var id hooks.ID
		switch idKind % 3 {
		case 0:
			id = hooks.StringID(idStr)
		case 1:
			id = hooks.IntID(idNum)
		default:
			id = hooks.NullID()
		}
		r := hooks.RenderResult(d, hooks.ProtocolVersion)
		got := hooks.EncodeResult(id, r)
		want, err := hooks.EncodeMessage(&hooks.Message{ID: id, Result: r})
		if err != nil {
			if s, ok := id.StringValue(); ok && s == "" {
				return // an empty string is not an id; callers never have one
			}
			if n, ok := id.IntValue(); ok && (n > 1<<53-1 || n < -(1<<53-1)) {
				return // nor an integer beyond ±(2^53-1)
			}
			t.Fatalf("RenderResult made an invalid result: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("EncodeResult:\n got %s\nwant %s", got, want)
		}
		if direct := hooks.EncodeDecision(id, d, hooks.ProtocolVersion); !bytes.Equal(direct, got) {
			t.Fatalf("EncodeDecision:\n got %s\nwant %s", direct, got)
		}
		back, err := hooks.DecodeMessage(got)
		if err != nil {
			t.Fatalf("the answer does not decode: %v\n%s", err, got)
		}
		again, err := hooks.EncodeMessage(back)
		if err != nil {
			t.Fatalf("decode(encode(r)) does not encode: %v\n%s", err, got)
		}
		// Invalid UTF-8 is written as \ufffd and so comes back as U+FFFD; everything else
		// comes back byte for byte.
		valid := true
		for _, s := range []string{reason, code, ruleID, decisionID, extKey, idStr} {
			valid = valid && utf8.ValidString(s)
		}
		if valid && !bytes.Equal(again, got) {
			t.Fatalf("decode(encode(r)) does not encode back:\n%s\n%s", got, again)
		}
	})
}

// FuzzHooksRegistration is FuzzHooksMessage for registration documents.
func FuzzHooksRegistration(f *testing.F) {
	addSeeds(f, "registration")
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := hooks.DecodeRegistration(data)
		if err != nil {
			if _, ok := jsonwire.AsFieldError(err); !ok {
				t.Fatalf("error is not a *FieldError: %v", err)
			}
			return
		}
		out, err := hooks.EncodeRegistration(reg)
		if err != nil {
			t.Fatalf("accepted registration does not encode: %v", err)
		}
		again, err := hooks.DecodeRegistration(out)
		if err != nil {
			t.Fatalf("encoding does not decode: %v\n%s", err, out)
		}
		if !proto.Equal(reg, again) {
			t.Fatalf("decode(encode(r)) != r\n%s", out)
		}
	})
}
