package main

import (
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
