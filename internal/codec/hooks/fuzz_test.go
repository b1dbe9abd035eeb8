package hooks_test

import (
	"bytes"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/proto"
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds every file of the named testdata/hooks directories to the seed corpus.
func addSeeds(f *testing.F, dirs ...string) {
	f.Helper()
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(testdataDir, dir, "*"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
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
