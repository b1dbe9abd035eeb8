package convert_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-gateway/ahp/internal/convert"
	"google.golang.org/protobuf/proto"
)

// hooksAddSeeds adds every file of the named testdata/hooks directories to the seed corpus.
func hooksAddSeeds(f *testing.F, dirs ...string) {
	f.Helper()
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(hooksTestdata, dir, "*"))
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

// FuzzHooksMessage checks that DecodeHooksMessage never panics, that whatever it accepts encodes
// as one stdio line and decodes back to an equal message, and that whatever it rejects yields a
// classified error whose JSON-RPC answer encodes.
func FuzzHooksMessage(f *testing.F) {
	hooksAddSeeds(f, "message", "stdio")
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := convert.DecodeHooksMessage(data)
		if err != nil {
			if msg != nil {
				t.Fatal("a message was returned with an error")
			}
			if _, ok := convert.AsFieldError(err); !ok {
				t.Fatalf("error is not a *FieldError: %v", err)
			}
			if code := convert.HooksErrorCode(err); code == convert.HooksCodeInternalError {
				t.Fatalf("unclassified error: %v", err)
			}
			if resp, ok := convert.HooksErrorResponse(err); ok {
				if _, err := convert.EncodeHooksMessage(resp); err != nil {
					t.Fatalf("error response does not encode: %v", err)
				}
			}
			return
		}
		out, err := convert.EncodeHooksMessage(msg)
		if err != nil {
			t.Fatalf("accepted message does not encode: %v", err)
		}
		if err := convert.CheckHooksStdioFraming(append(bytes.Clone(out), '\n')); err != nil {
			t.Fatalf("encoding is not one stdio line: %v", err)
		}
		again, err := convert.DecodeHooksMessage(out)
		if err != nil {
			t.Fatalf("encoding does not decode: %v\n%s", err, out)
		}
		if d := hooksMessageDiff(msg, again); d != "" {
			t.Fatalf("decode(encode(m)) != m: %s\n%s", d, out)
		}
		out2, err := convert.EncodeHooksMessage(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable: %v\n%s\n%s", err, out, out2)
		}
	})
}

// FuzzHooksRegistration is FuzzHooksMessage for registration documents.
func FuzzHooksRegistration(f *testing.F) {
	hooksAddSeeds(f, "registration")
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := convert.DecodeHooksRegistration(data)
		if err != nil {
			if _, ok := convert.AsFieldError(err); !ok {
				t.Fatalf("error is not a *FieldError: %v", err)
			}
			return
		}
		out, err := convert.EncodeHooksRegistration(reg)
		if err != nil {
			t.Fatalf("accepted registration does not encode: %v", err)
		}
		again, err := convert.DecodeHooksRegistration(out)
		if err != nil {
			t.Fatalf("encoding does not decode: %v\n%s", err, out)
		}
		if !proto.Equal(reg, again) {
			t.Fatalf("decode(encode(r)) != r\n%s", out)
		}
	})
}
