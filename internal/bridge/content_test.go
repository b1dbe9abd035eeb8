package bridge_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/contentstore"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/httprpc"
	"github.com/ahp-gateway/ahp/internal/transport/upload"
)

// The PNG the tests upload, and a policy that denies exactly it, by media type, size and SHA-256
// (the docs/policy.md example).
const (
	attachmentBytes = "\x89PNG\r\n\x1a\nIHDR"
	attachmentRule  = `version: 1
rules:
  - id: known-image
    on: [turn.start]
    when: 'event.catalogue.items.exists(m, has(m.parts) && m.parts.exists(p, p.kind == "attachment" && p.mediaType == "image/png" && has(p.body) && p.body.sha256 == "%s" && p.body.size == 12.0))'
    effect:
      deny: {reason: this image is not allowed}
`
)

type uploadClock struct{ t time.Time }

func (c *uploadClock) now() time.Time { return c.t }

// uploadListener serves a bridge with the content upload binding on a loopback HTTP listener,
// the way ahp-jsonrpc-bridge does (one store shared by the upload handler and the bridge). The
// caller's principal is the X-Test-Principal header, standing in for authentication.
func uploadListener(t *testing.T, policy string, clock *uploadClock) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	clients, closer, err := bridge.NewEmbedded(server.Config{Logger: quietLogger(), Version: "2.4.0", PolicyFile: path, PolicyPollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	store := contentstore.New(contentstore.Limits{TTL: time.Minute}, clock.now)
	b := newBridge(t, clients, func(c *bridge.Config) { c.Uploads = store })
	h := httprpc.NewHandler(b, httprpc.Options{UploadPath: "/hooks/content", Upload: upload.Handler(store, quietLogger())})
	return testkit.StartLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name := r.Header.Get("X-Test-Principal"); name != "" {
			r = r.WithContext(auth.ContextWithPrincipal(r.Context(), auth.Principal{Name: name}))
		}
		h.ServeHTTP(w, r)
	}))
}

func postAs(t *testing.T, url, principal, ctype, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("X-Test-Principal", principal)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// turnStart is a draft turn.start intercept whose user message carries one attachment part; body
// is the part's body object.
func turnStart(body string) string {
	return `{"jsonrpc":"2.0","id":"t1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"t1","source":"urn:test:h","type":"turn.start","time":"2026-09-15T12:00:00Z","turn":{"id":"turn1"},"trigger":"user","items":[{"id":"m1","role":"user","parts":[{"id":"m1-text","kind":"text","mediaType":"text/plain","selection":"body","text":"What is this?"},{"id":"m1-image","kind":"attachment","mediaType":"image/png","selection":"body","body":` + body + `}]}]},"capabilities":{"effects":["deny"]}}}`
}

// TestAttachmentRefsResolveThroughTheHTTPListener: an upload, then an intercept referring to it:
// the policy sees the attachment's verified media type, size and SHA-256 and decides on them. A
// declared size or hash the upload does not have, another principal's ref and an expired ref are
// refused with -32602 naming the member, never its value.
func TestAttachmentRefsResolveThroughTheHTTPListener(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(attachmentBytes))
	hexSum := hex.EncodeToString(sum[:])
	clock := &uploadClock{t: time.Date(2026, 9, 15, 12, 0, 0, 0, time.UTC)}
	base := uploadListener(t, strings.Replace(attachmentRule, "%s", hexSum, 1), clock)

	code, body := postAs(t, base+"/hooks/content", "alice", "application/octet-stream", attachmentBytes, map[string]string{"AHP-Content-SHA256": hexSum})
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, body)
	}
	var receipt contentstore.Receipt
	if err := json.Unmarshal([]byte(body), &receipt); err != nil || receipt.Size != int64(len(attachmentBytes)) || receipt.SHA256 != hexSum {
		t.Fatalf("receipt %s (%v)", body, err)
	}
	intercept := func(principal, partBody string) (int, string) {
		return postAs(t, base+"/hooks", principal, "application/json", turnStart(partBody), nil)
	}
	ref := jsonString(receipt.Ref)

	// The ref alone: the bridge completes size and sha256, and the rule on them fires.
	for _, partBody := range []string{`{"ref":` + ref + `}`, `{"ref":` + ref + `,"size":12,"sha256":"` + hexSum + `"}`} {
		code, answer := intercept("alice", partBody)
		if code != http.StatusOK || !strings.Contains(answer, `"type":"deny"`) || !strings.Contains(answer, "this image is not allowed") {
			t.Errorf("body %s: %d %s, want the known-image deny", partBody, code, answer)
		}
	}

	// Other content under the same media type is not the known image: no deny.
	other := "\x89PNG\r\n\x1a\nIDAT"
	otherSum := sha256.Sum256([]byte(other))
	if code, body := postAs(t, base+"/hooks/content", "alice", "application/octet-stream", other, map[string]string{"AHP-Content-SHA256": hex.EncodeToString(otherSum[:])}); code != http.StatusCreated {
		t.Fatalf("second upload: %d %s", code, body)
	}
	if code, answer := intercept("alice", `{"ref":"sha256-`+hex.EncodeToString(otherSum[:])+`"}`); code != http.StatusOK || strings.Contains(answer, "deny") || !strings.Contains(answer, `"result"`) {
		t.Errorf("other image: %d %s, want no deny", code, answer)
	}
	// An observe notification referring to an unknown upload is not recorded.
	observe := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{"id":"o1","source":"urn:test:h","time":"2026-09-15T12:00:00Z","type":"turn.start","turn":{"id":"turn1"},"trigger":"user","items":[{"id":"i1","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"nope"}}]}}}`
	if code, answer := postAs(t, base+"/hooks", "alice", "application/json", observe, nil); code != http.StatusBadRequest || answer != "" {
		t.Errorf("observe with an unknown ref: %d %q, want 400 and no body", code, answer)
	}
	if code, _ := postAs(t, base+"/hooks", "alice", "application/json", strings.Replace(observe, `"nope"`, ref, 1), nil); code != http.StatusNoContent {
		t.Errorf("observe with a live ref: %d, want 204", code)
	}

	wrongSum := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, principal, body, path string
	}{
		{"wrong sha256", "alice", `{"ref":` + ref + `,"sha256":"` + wrongSum + `"}`, "params.event.items[0].parts[1].body.sha256"},
		{"wrong size", "alice", `{"ref":` + ref + `,"size":13}`, "params.event.items[0].parts[1].body.size"},
		{"another principal's ref", "bob", `{"ref":` + ref + `}`, "params.event.items[0].parts[1].body.ref"},
		{"unknown ref", "alice", `{"ref":"sha256-` + wrongSum + `"}`, "params.event.items[0].parts[1].body.ref"},
	} {
		code, answer := intercept(tc.principal, tc.body)
		var resp struct {
			Error struct {
				Code int `json:"code"`
				Data struct {
					Path, Reason string
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(answer), &resp); err != nil || code != http.StatusOK {
			t.Errorf("%s: %d %s (%v)", tc.name, code, answer, err)
			continue
		}
		if resp.Error.Code != -32602 || resp.Error.Data.Path != tc.path || resp.Error.Data.Reason == "" {
			t.Errorf("%s: %s, want -32602 at %s", tc.name, answer, tc.path)
		}
		if strings.Contains(answer, wrongSum) || strings.Contains(answer, receipt.Ref) || strings.Contains(answer, hexSum) {
			t.Errorf("%s: the error repeats a value: %s", tc.name, answer)
		}
	}

	// Expired: a minute after the upload the ref no longer resolves.
	clock.t = clock.t.Add(time.Minute)
	code, answer := intercept("alice", `{"ref":`+ref+`}`)
	if code != http.StatusOK || !strings.Contains(answer, `"code":-32602`) || !strings.Contains(answer, `params.event.items[0].parts[1].body.ref`) {
		t.Errorf("expired ref: %d %s", code, answer)
	}
}

// TestAttachmentRefsOnStdioAreTheUnauthenticatedCallers: a stdio caller has no principal, so its
// refs resolve among unauthenticated uploads only, never an authenticated principal's.
func TestAttachmentRefsOnStdioAreTheUnauthenticatedCallers(t *testing.T) {
	t.Parallel()
	store := contentstore.New(contentstore.Limits{}, nil)
	b := newBridge(t, embeddedClients(t), func(c *bridge.Config) { c.Uploads = store })
	sum := sha256.Sum256([]byte(attachmentBytes))
	hexSum := hex.EncodeToString(sum[:])
	mine, err := store.Put("", []byte(attachmentBytes), hexSum)
	if err != nil {
		t.Fatal(err)
	}
	other := []byte("GIF89a")
	otherSum := sha256.Sum256(other)
	alices, err := store.Put("alice", other, hex.EncodeToString(otherSum[:]))
	if err != nil {
		t.Fatal(err)
	}
	if r := wantResult(t, handle(t, b, turnStart(`{"ref":`+jsonString(mine.Ref)+`}`), bridge.TransportStdio), `"t1"`); !strings.Contains(string(r), `"protocolVersion":"draft"`) {
		t.Errorf("own unauthenticated upload: %s", r)
	}
	resp := wantError(t, handle(t, b, turnStart(`{"ref":`+jsonString(alices.Ref)+`}`), bridge.TransportStdio), `"t1"`, -32602, "Invalid params")
	if !strings.Contains(string(resp.Error.Data), `params.event.items[0].parts[1].body.ref`) {
		t.Errorf("alice's upload from stdio: %s, want -32602 at body.ref", resp.Error.Data)
	}
}
