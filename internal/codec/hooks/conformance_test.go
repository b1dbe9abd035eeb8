package hooks_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/hooks"
)

// conformanceDir holds the upstream Agent Hooks Protocol v0.1 fixtures. It lives outside this
// repository: $AHP_SHARED_DIR/conformance/hooks-v0.1, by default in ../shared next to the checkout;
// the test skips when it is absent.
var conformanceDir = func() string {
	shared := os.Getenv("AHP_SHARED_DIR")
	if shared == "" {
		shared = filepath.Join("..", "..", "..", "..", "shared") // ../shared from the repository root
	}
	return filepath.Join(shared, "conformance", "hooks-v0.1")
}()

// conformanceRejects is where each invalid upstream fixture must fail. For stdio fixtures the
// framing check runs first; decodePath additionally checks hooks.DecodeMessage on the whole file.
var conformanceRejects = map[string]struct {
	path       string
	code       int
	framing    bool
	decodePath string
}{
	"stdio.intercept-request-multiline.invalid":  {path: "", code: -32700, framing: true, decodePath: "params"},
	"stdio.deny-response-multiple.invalid":       {path: "result.effects", code: -32602},
	"http.intercept-request-id-mismatch.invalid": {path: "id", code: -32602},
	"http.no-effect-response-version.invalid":    {path: "result.protocolVersion", code: -32001},
	"registration.empty-hooks.invalid":           {path: "hooks", code: -32602},
	"registration.literal-token.invalid":         {path: "hooks[0].authentication.token", code: -32602},
	"registration.observe-policy-fields.invalid": {path: "hooks[0].subscriptions[0].timeoutMs", code: -32602},
}

// TestConformanceFixtures runs the upstream v0.1 fixtures through the codec by their
// manifest: every valid fixture round-trips losslessly and every invalid one fails at the expected
// field.
func TestConformanceFixtures(t *testing.T) {
	t.Parallel()
	manifestPath := filepath.Join(conformanceDir, "fixtures", "0.1.0-draft.1", "manifest.json")
	raw, err := os.ReadFile(manifestPath)
	if os.IsNotExist(err) {
		t.Skipf("Agent Hooks Protocol v0.1 conformance fixtures not found at %s (they live outside this repository); testdata/hooks still covers the codec", conformanceDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Cases []struct {
			ID            string `json:"id"`
			Path          string `json:"path"`
			Binding       string `json:"binding"`
			ExpectedValid bool   `json:"expectedValid"`
			SHA256        string `json:"sha256"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Cases) == 0 {
		t.Fatal("manifest lists no cases")
	}
	for _, c := range manifest.Cases {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(conformanceDir, filepath.FromSlash(c.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != c.SHA256 {
				t.Fatalf("fixture does not match its manifest hash; it is not the upstream file")
			}
			want, listed := conformanceRejects[c.ID]
			if !c.ExpectedValid && !listed {
				t.Fatalf("invalid fixture without an expected error path; add it to conformanceRejects")
			}

			switch c.Binding {
			case "stdio-jsonl":
				err := hooks.CheckStdioFraming(data)
				if want.framing {
					wantError(t, err, want.path, want.code)
					_, err := hooks.DecodeMessage(data)
					wantError(t, err, want.decodePath, 0)
					return
				}
				if err != nil {
					t.Fatalf("CheckStdioFraming: %v", err)
				}
				messageDoc.check(t, bytes.TrimSuffix(data, []byte("\n")), c.ExpectedValid, want.path, want.code)
			case "http-json":
				messageDoc.check(t, data, c.ExpectedValid, want.path, want.code)
			case "registration-json":
				registrationDoc.check(t, data, c.ExpectedValid, want.path, want.code)
			default:
				t.Fatalf("unknown binding %q", c.Binding)
			}
		})
	}
}
