package hooks_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// draftConformanceDir holds the upstream Agent Hooks Protocol "draft" conformance data
// ($AHP_SHARED_DIR/conformance/hooks-draft, by default ../shared next to the checkout).
var draftConformanceDir = func() string {
	shared := os.Getenv("AHP_SHARED_DIR")
	if shared == "" {
		shared = filepath.Join("..", "..", "..", "..", "shared") // ../shared from the repository root
	}
	return filepath.Join(shared, "conformance", "hooks-draft")
}()

// draftCase is one entry of the draft fixture manifest.
type draftCase struct {
	ID                      string `json:"id"`
	Path                    string `json:"path"`
	Binding                 string `json:"binding"`
	SHA256                  string `json:"sha256"`
	ExpectedValid           bool   `json:"expectedValid"`
	AggregateExpectedValid  *bool  `json:"aggregateExpectedValid"`
	ContextualExpectedValid *bool  `json:"contextualExpectedValid"`
	EditContext             *struct {
		Event  string `json:"event"`
		Mode   string `json:"mode"`
		Action string `json:"action"`
	} `json:"editContext"`
}

// loadDraftCases reads the draft fixture manifest, or skips when the shared data is absent.
func loadDraftCases(t testing.TB) []draftCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(draftConformanceDir, "fixtures", "draft", "manifest.json"))
	if os.IsNotExist(err) {
		t.Skipf("Agent Hooks Protocol draft conformance data not found at %s (it lives outside this repository); testdata/draft still covers the draft codec", draftConformanceDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cases []draftCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) < 150 {
		t.Fatalf("manifest lists %d cases, want 150", len(m.Cases))
	}
	return m.Cases
}

// valid is the verdict the fixture's name gives (the manifest agrees: .valid files are valid
// on every axis, .invalid files fail on at least one).
func (c draftCase) valid() bool { return strings.Contains(c.Path, ".valid.") }

// readDraftFixture reads a fixture as a JSON-RPC message, wrapping the bare params and result
// documents some fixtures hold in the envelope they belong to.
func readDraftFixture(t testing.TB, c draftCase) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(draftConformanceDir, filepath.FromSlash(c.Path)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Binding == "stdio-jsonl" {
		return data
	}
	return hooks.WrapDraftDocument(data)
}

// TestDraftConformanceFixtures handles every fixture of the draft manifest as its name says: a
// valid message decodes, encodes back to the same JSON values and decodes again to the same
// message; an invalid one is rejected with a field error at the recorded path whose text repeats
// no value of the document. Contextual fixtures are checked in their edit context.
func TestDraftConformanceFixtures(t *testing.T) {
	t.Parallel()
	for _, c := range loadDraftCases(t) {
		if c.Binding == "registration-json" {
			continue // TestDraftRegistrationFixtures
		}
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			if reason, stale := draftStale[c.ID]; stale {
				raw, err := os.ReadFile(filepath.Join(draftConformanceDir, filepath.FromSlash(c.Path)))
				if err != nil {
					t.Fatal(err)
				}
				if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) == c.SHA256 {
					t.Fatalf("listed as stale but matches its manifest hash; remove it from draftStale")
				}
				t.Skipf("stale copy (its bytes differ from the manifest's): %s", reason)
			}
			data := readDraftFixture(t, c)
			if c.Binding == "stdio-jsonl" {
				if err := hooks.CheckStdioFraming(data); err != nil {
					if c.valid() {
						t.Fatalf("CheckStdioFraming: %v", err)
					}
					checkDraftRejection(t, c, data, err)
					return
				}
				data = bytes.TrimSuffix(data, []byte("\n"))
			}
			m, err := hooks.DecodeBytes(data)
			if err == nil && c.EditContext != nil && c.ContextualExpectedValid != nil {
				err = hooks.CheckResultAt(m, c.EditContext.Event, c.EditContext.Mode, c.EditContext.Action)
			}
			if !c.valid() {
				checkDraftRejection(t, c, data, err)
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if got := hooks.VersionOf(m); m.Error == nil && got != hooks.Draft {
				t.Fatalf("version = %q, want draft", got)
			}
			roundTrip(t, "Draft", data, hooks.DecodeBytes, hooks.EncodeMessage, messageDiff)
		})
	}
}

// checkDraftRejection wants err to be a field error at draftRejects[c.ID] that echoes no value.
func checkDraftRejection(t *testing.T, c draftCase, data []byte, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; the fixture is invalid")
	}
	want, listed := draftRejects[c.ID]
	fe, ok := jsonwire.AsFieldError(err)
	if !ok {
		t.Fatalf("error %q is not a field error", err)
	}
	if !listed {
		t.Fatalf("no expected path recorded; got %q (%v)", fe.Path, err)
	}
	if fe.Path != want {
		t.Errorf("error path = %q, want %q (%v)", fe.Path, want, err)
	}
	for _, v := range leafStrings(data) {
		if len(v) >= 4 && !protocolWord(v) && strings.Contains(err.Error(), v) && !strings.Contains(fe.Path, v) {
			t.Errorf("error %q echoes a value of the document (%q)", err, v)
		}
	}
}

// protocolWord reports whether a string value looks like protocol vocabulary (event and effect
// names, roles, selections: lower-case letters, '.', '_', '/', '-'), which an error may name;
// anything else (ids, text, hashes, paths, times) is the sender's data and must not be echoed.
func protocolWord(s string) bool {
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz._/-") == ""
}

// leafStrings lists the string values (not keys) of a JSON document.
func leafStrings(data []byte) []string {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// draftRejects is where each invalid draft fixture must fail.
var draftRejects = map[string]string{
	"http.atomic-unknown.invalid":                         "result.effects[1].type",
	"http.attachment-content-edit.invalid":                "params.event.items[0].parts[0].text",
	"http.attachment-json-suffix.invalid":                 "params.event.items[0].parts[0].mediaType",
	"http.attachment-json.invalid":                        "params.event.items[0].parts[0].mediaType",
	"http.content-bad-hash.invalid":                       "params.event.items[0].body.sha256",
	"http.content-inline.invalid":                         "params.event.items[0].text",
	"http.content-negative-size.invalid":                  "params.event.items[0].body.size",
	"http.contextual-elicitation-content-decline.invalid": "result.effects[0].target",
	"http.contextual-elicitation-content-list.invalid":    "result.effects[0].value",
	"http.contextual-elicitation-content-nested.invalid":  "result.effects[0].value.nested",
	"http.contextual-elicitation-content-url.invalid":     "result.effects[0].target",
	"http.contextual-outbound-content-object.invalid":     "result.effects[0].value",
	"http.contextual-tool-output-object.invalid":          "result.effects[0].value",
	"http.contextual-tool-output-parts.invalid":           "result.effects[0].value[0].parts",
	"http.contextual-tool-output-primitive.invalid":       "result.effects[0].value",
	"http.dedicated-json-part.invalid":                    "params.event.items[0].parts[0].kind",
	"http.error-response-result.invalid":                  "error",
	"http.flow-no-operation.invalid":                      "result.effects[1].operation",
	"http.gap-text-leak.invalid":                          "params.event.items[0].parts[0].text",
	"http.hash-newline-body.invalid":                      "params.event.items[0].parts[0].body.sha256",
	"http.hash-newline-metadata.invalid":                  "params.event.items[0].parts[0].sha256",
	"http.inject-wrong-operation.invalid":                 "result.effects[1].operation",
	"http.intercept-request-effects-missing.invalid":      "params.capabilities.effects",
	"http.intercept-request-id-mismatch.invalid":          "id",
	"http.mcp-http-location-missing.invalid":              "params.event.tool.mcp.connection.url",
	"http.mcp-stdio-location-missing.invalid":             "params.event.tool.mcp.connection.command",
	"http.message-role-wrong-type.invalid":                "params.event.items[0].role",
	"http.message-wrong-role.invalid":                     "params.event.items[0].role",
	"http.metadata-body.invalid":                          "params.event.items[0].body",
	"http.metadata-text-leak.invalid":                     "params.event.items[0].parts[0].text",
	"http.model-child-role-missing.invalid":               "params.event.items[1].role",
	"http.model-item-role-missing.invalid":                "params.event.items[0].role",
	"http.model-response-input-target.invalid":            "params.capabilities.modify.input",
	"http.modify-attachment-bytes.invalid":                "result.effects[0].value[0].parts[0].body.text",
	"http.modify-instructions-message.invalid":            "result.effects[0].value[0]",
	"http.modify-invalid-path.invalid":                    "result.effects[0].path",
	"http.modify-invalid-target.invalid":                  "result.effects[0].target",
	"http.modify-prompt-wrong-type.invalid":               "result.effects[0].value",
	"http.no-effect-response-version.invalid":             "result.protocolVersion",
	"http.observe-session-end-outcome.invalid":            "params.event.outcome",
	"http.observe-session-start-tool.invalid":             "params.event.tool",
	"http.observe-tool-after-error.invalid":               "params.event.error",
	"http.observe-tool-after-input-missing.invalid":       "params.event.tool.input",
	"http.observe-tool-error-message-missing.invalid":     "params.event.error.message",
	"http.observe-tool-error-output.invalid":              "params.event.tool.output",
	"http.observe-unknown-event.invalid":                  "params.event.type",
	"http.observe-with-id.invalid":                        "id",
	"http.omit-text-leak.invalid":                         "params.event.items[0].parts[0].text",
	"http.parent-empty.invalid":                           "params.event.parentEventId",
	"http.source-malformed.invalid":                       "params.event.source",
	"http.stop-no-reason.invalid":                         "result.effects[1].reason",
	"http.synthesized-call-string.invalid":                "params.event.call.synthesized",
	"http.synthesized-items-string.invalid":               "params.event.items[0].synthesized",
	"http.task-id-missing.invalid":                        "params.event.task.id",
	"http.task-return-capability.invalid":                 "params.capabilities.effects[0]",
	"http.text-as-ref.invalid":                            "params.event.items[0].parts[0].body",
	"http.text-nonstring.invalid":                         "params.event.items[0].parts[0].text",
	"http.text-part-parent.invalid":                       "params.event.items[0].parts[0].parentItemId",
	"http.text-part-role.invalid":                         "params.event.items[0].parts[0].role",
	"http.text-wrong-media-type.invalid":                  "params.event.items[0].parts[0].mediaType",
	"http.timestamp-compact.invalid":                      "params.event.time",
	"http.tool-before-continue-capability.invalid":        "params.capabilities.flow.operations[0]",
	"http.user-message-inbound-wrong-role.invalid":        "params.event.message.messages[0].role",
	"http.user-message-outbound-wrong-role.invalid":       "params.event.message.messages[0].role",
	"stdio.deny-response-multiple.invalid":                "result.effects",
	"stdio.intercept-request-multiline.invalid":           "",
}

// draftStale are fixtures whose stored bytes are an older upstream version than the manifest
// names (README of the conformance data); the test checks that they still differ.
var draftStale = map[string]string{
	"http.intercept-request.valid": "the pre-catalogue tool shape (tool.callId, no call, path or tool.origin), which the newest schemas refuse",
}

// draftRegistrationRejects is where each invalid draft registration fixture must fail.
var draftRegistrationRejects = map[string]string{
	"registration.content-default-missing.invalid":     "hooks[0].subscriptions[0].content.default",
	"registration.empty-hooks.invalid":                 "hooks",
	"registration.intercept-content-missing.invalid":   "hooks[0].subscriptions[0].content",
	"registration.intercept-observation-event.invalid": "hooks[0].subscriptions[0].events[0]",
	"registration.literal-token.invalid":               "hooks[0].authentication.token",
	"registration.observe-content-missing.invalid":     "hooks[1].subscriptions[1].content",
	"registration.observe-policy-fields.invalid":       "hooks[0].subscriptions[0].timeoutMs",
}

// TestDraftRegistrationFixtures: valid draft registrations round-trip, invalid ones fail at the
// recorded field.
func TestDraftRegistrationFixtures(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range loadDraftCases(t) {
		if c.Binding != "registration-json" {
			continue
		}
		n++
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(draftConformanceDir, filepath.FromSlash(c.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if c.valid() {
				roundTrip(t, "DraftRegistration", data, hooks.DecodeDraftRegistration, hooks.EncodeDraftRegistration,
					func(a, b *ahpv1.HooksRegistration) string { return cmp.Diff(a, b, protocmp.Transform()) })
				return
			}
			want, listed := draftRegistrationRejects[c.ID]
			if !listed {
				t.Fatalf("invalid registration without an expected path")
			}
			_, err = hooks.DecodeDraftRegistration(data)
			wantError(t, err, want, -32602)
		})
	}
	if n != 9 {
		t.Errorf("%d registration fixtures, want 9", n)
	}
}
