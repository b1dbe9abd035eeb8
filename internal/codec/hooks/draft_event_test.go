package hooks_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func decodeDraftFile(t *testing.T, name string) *hooks.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, "draft", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := hooks.DecodeBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDraftEventTypedFields checks that the draft members land in their typed canonical fields.
func TestDraftEventTypedFields(t *testing.T) {
	t.Parallel()
	m := decodeDraftFile(t, "intercept-tool-before-mcp.valid.json")
	ev := m.Intercept.Request.GetEvent()
	if ev.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE || ev.GetOrigin().GetProtocolVersion() != "draft" {
		t.Fatalf("type %v origin %v", ev.GetType(), ev.GetOrigin())
	}
	tool := ev.GetTool()
	if tool.GetCallId() != "c1" || !ev.GetOrigin().GetSynthesizedCallId() || tool.GetOrigin() != "mcp" ||
		tool.GetMcp().GetServer() != "db" || tool.GetMcp().GetServerName() != "Database" ||
		tool.GetMcp().GetTool() != "query" || tool.GetMcp().GetProvenance() != "runtime" {
		t.Errorf("tool = %v", tool)
	}
	c := ev.GetCatalogue()
	if c.GetPath() != "mcp" || c.GetParentEventId() != "evt-d0" || c.GetTurn().GetId() != "t1" ||
		c.GetTurn().Synthesized == nil || len(c.GetGaps()) != 1 {
		t.Errorf("catalogue = %v", c)
	}
	caps := m.Intercept.Request.GetCapabilities()
	if len(caps.GetEffects()) != 8 || len(caps.GetExtensionEffects()) != 1 {
		t.Errorf("capabilities = %v", caps)
	}
	if ops := m.Intercept.Offer.Modify["input"]; !ops.Replace || !ops.Merge {
		t.Errorf("modify offer = %v", m.Intercept.Offer.Modify)
	}

	after := decodeDraftFile(t, "observe-tool-after-error.valid.json").Observe.Request.GetEvent()
	if after.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_ERROR || after.GetOrigin().GetEventType() != "tool.after" {
		t.Errorf("tool.after with outcome error: type %v, origin %q", after.GetType(), after.GetOrigin().GetEventType())
	}
	ac := after.GetCatalogue()
	if ac.GetOutcome() != "error" || ac.GetError().GetClass() != "tool" || ac.GetExecution().GetStatus() != "executed" ||
		ac.GetUsage().GetOutputTokens() != 7 || ac.GetUsage().InputTokens == nil || len(ac.GetItems().GetValues()) != 1 {
		t.Errorf("catalogue = %v", ac)
	}
}

// TestDraftVersionRouting checks exact version matching: each served version decodes as itself,
// anything else is -32001 naming both.
func TestDraftVersionRouting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		want    hooks.Version
	}{{"0.1", hooks.V01}, {"draft", hooks.Draft}} {
		m, err := hooks.DecodeBytes([]byte(`{"jsonrpc":"2.0","id":1,"method":"hooks/capabilities","params":{"protocolVersion":"` + tc.version + `"}}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		if got := hooks.VersionOf(m); got != tc.want {
			t.Errorf("%s: version %q", tc.version, got)
		}
	}
	for _, v := range []string{"0.1.0", "Draft", "0.2", ""} {
		_, err := hooks.DecodeBytes([]byte(`{"jsonrpc":"2.0","id":1,"method":"hooks/capabilities","params":{"protocolVersion":"` + v + `"}}`))
		if !errors.Is(err, hooks.ErrUnsupportedProtocolVersion) {
			t.Errorf("%q: %v, want ErrUnsupportedProtocolVersion", v, err)
			continue
		}
		resp, _ := hooks.ErrorResponse(err)
		out, _ := hooks.EncodeMessage(resp)
		if want := `"supported":["0.1","draft"]`; !contains(out, want) {
			t.Errorf("%q: %s lacks %s", v, out, want)
		}
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// FuzzDraftMessage: hooks.DecodeBytes (the bridge's decoder, both versions) never panics; what it
// accepts encodes, decodes back to an equal message and to the same JSON values; what it rejects
// is a classified field error whose answer encodes.
func FuzzDraftMessage(f *testing.F) {
	addSeeds(f, "draft")
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := hooks.DecodeBytes(data)
		if err != nil {
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
		again, err := hooks.DecodeBytes(out)
		if err != nil {
			t.Fatalf("encoding does not decode: %v\n%s", err, out)
		}
		if d := messageDiff(msg, again); d != "" {
			t.Fatalf("decode(encode(m)) != m: %s", d)
		}
		if !testkit.SameJSON(t, out, data) {
			t.Fatalf("round trip changed the JSON\n got: %s\nwant: %s", out, data)
		}
	})
}
