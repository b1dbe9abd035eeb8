package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
)

// draftIntercept is a draft hooks/intercept for a shell command, advertising deny.
func draftIntercept(id, command string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"` + id +
		`","source":"urn:test:harness","type":"tool.before","time":"2026-09-15T12:00:00Z","call":{"id":"c-` + id +
		`"},"tool":{"name":"Bash","kind":"shell","input":{"command":"` + command + `"},"origin":"native"},"path":"native"},"capabilities":{"effects":["deny"]}}}`
}

// TestProcessDraftOnStdioAndHTTP drives the real binary with draft and v0.1 messages: stdio
// persistent, stdio per event (-once) and HTTP; each answer carries its request's version.
func TestProcessDraftOnStdioAndHTTP(t *testing.T) {
	t.Parallel()
	p := startProc(t)
	p.send(t, draftIntercept("d1", "rm -rf /"), hooksIntercept("e1", "rm -rf /"), draftIntercept("d2", "ls"),
		`{"jsonrpc":"2.0","id":"d3","method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`,
		`{"jsonrpc":"2.0","id":"d4","method":"hooks/capabilities","params":{"protocolVersion":"0.2"}}`)
	for _, want := range []string{`"protocolVersion":"draft"`, `"protocolVersion":"0.1"`, `"effects":[]`, `"manifest"`, `"supported":["0.1","draft"]`} {
		if line := p.next(t); !strings.Contains(line, want) {
			t.Errorf("answer %s lacks %s", line, want)
		}
	}
	p.finish(t)

	once := startProc(t, "-once")
	once.send(t, draftIntercept("d5", "rm -rf /"))
	if line := once.next(t); !strings.Contains(line, `"type":"deny"`) || !strings.Contains(line, `"protocolVersion":"draft"`) {
		t.Errorf("-once answer %s", line)
	}
	once.finish(t)

	h := startProc(t, "-http", "127.0.0.1:0", "-log-format", "json", "-log-level", "info")
	addr := listening(t, h.stderr, "http")["http"]
	resp, err := http.Post("http://"+addr+"/hooks", "application/json", strings.NewReader(draftIntercept("d6", "rm -rf /")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"type":"deny"`) || !strings.Contains(string(body), `"protocolVersion":"draft"`) {
		t.Errorf("HTTP answer %d %s", resp.StatusCode, body)
	}
}

// TestProcessContentUpload drives the upload binding of the real binary: a receipt for good
// content, 400 for a hash mismatch, and the manifest states the limit.
func TestProcessContentUpload(t *testing.T) {
	t.Parallel()
	h := startProc(t, "-http", "127.0.0.1:0", "-upload-path", "/hooks/content", "-upload-max-bytes", "16", "-upload-principal-max-items", "1", "-log-format", "json", "-log-level", "info")
	addr := listening(t, h.stderr, "http")["http"]
	send := func(body, sum string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks/content", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("AHP-Content-SHA256", sum)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const png = "\x89PNG\r\n"
	const pngSum = "7e2f9ed1d7c1ea4dcc3d1e1bd1a2f5a4a2f6b8b59e1f58e8c9b51f86c8b0a1ce" // not the real hash
	if code, _ := send(png, pngSum); code != http.StatusBadRequest {
		t.Errorf("hash mismatch: %d", code)
	}
	sum := sha256Hex(png)
	code, body := send(png, sum)
	if code != http.StatusCreated || !strings.Contains(body, `"sha256":"`+sum+`"`) || !strings.Contains(body, `"size":6`) {
		t.Errorf("upload: %d %s", code, body)
	}
	// The caller's quota is one item.
	if code, body := send("GIF89a", sha256Hex("GIF89a")); code != http.StatusInsufficientStorage || !strings.Contains(body, "quota") {
		t.Errorf("over the principal's quota: %d %s", code, body)
	}
	// Events refer to the upload: the bridge resolves the ref in the same store the listener
	// filled; a ref it does not hold is -32602 at the member.
	intercept := func(ref string) string {
		msg := `{"jsonrpc":"2.0","id":"t1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"t1","source":"urn:test:h","type":"turn.start","time":"2026-09-15T12:00:00Z","turn":{"id":"turn1"},"trigger":"user","items":[{"id":"i1","kind":"attachment","mediaType":"image/png","selection":"body","body":{"ref":"` + ref + `","sha256":"` + sum + `"}}]},"capabilities":{"effects":["deny"]}}}`
		resp, err := http.Post("http://"+addr+"/hooks", "application/json", strings.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if answer := intercept("sha256-" + sum); !strings.Contains(answer, `"result"`) {
		t.Errorf("intercept referring to the upload: %s", answer)
	}
	if answer := intercept("sha256-" + sha256Hex("GIF89a")); !strings.Contains(answer, `"code":-32602`) || !strings.Contains(answer, `"path":"params.event.items[0].body.ref"`) {
		t.Errorf("intercept referring to no upload: %s", answer)
	}
	resp, err := http.Post("http://"+addr+"/hooks", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":"c","method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`))
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(manifest), `"maxUploadBytes":16`) {
		t.Errorf("manifest does not state the upload limit: %s", manifest)
	}
}

func sha256Hex(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}
