package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ahp-gateway/ahp/internal/bridge"
)

// notificationShaped is the fuzz oracle's notification: UTF-8 JSON, an object, a string method
// and no id member. The bridge must never answer one on a stream transport, nor with a body on
// HTTP other than the Agent Harness reference's id "" error.
func notificationShaped(msg []byte) bool {
	if !utf8.Valid(msg) || !json.Valid(msg) {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(msg, &obj) != nil {
		return false
	}
	var method string
	_, hasID := obj["id"]
	return !hasID && json.Unmarshal(obj["method"], &method) == nil && obj["method"] != nil && string(obj["method"]) != "null"
}

// fuzzSeeds are every message this package's tests use: both digests' vectors and fixtures.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	add := func(root string) {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "manifest.json" || !strings.HasSuffix(path, "json") && !strings.HasSuffix(path, "jsonl") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err == nil {
				seeds = append(seeds, bytes.TrimSuffix(data, []byte("\n")))
			}
			return nil
		})
	}
	add(filepath.Join(hooksTestdata, "message"))
	add(filepath.Join(hooksTestdata, "stdio"))
	add(filepath.Join(harnessTestdata, "exchanges"))
	add(filepath.Join(sharedDir, "conformance", "hooks-v0.1", "fixtures"))
	for _, line := range readLines(f, filepath.Join(harnessTestdata, "errors.jsonl")) {
		var v harnessVector
		if json.Unmarshal([]byte(line), &v) == nil {
			id := `"id":"r1",`
			if v.Notification {
				id = ""
			}
			seeds = append(seeds, []byte(`{"jsonrpc":"2.0",`+id+`"method":"`+v.Method+`","params":`+string(v.Params)+`}`))
		}
	}
	seeds = append(seeds, []byte(""), []byte("[]"), []byte("null"), []byte(`{"jsonrpc":"2.0","id":1,"method":"ahp/event"}`),
		[]byte(`{"method":"hooks/observe"}`), []byte("{\"jsonrpc\":\"2.0\",\n\"method\":\"hooks/observe\"}"))
	return seeds
}

// FuzzBridgeHandle feeds arbitrary bytes to a bridge over an in-process ahp-server: it must
// never panic, never answer a notification-shaped message, and answer everything else with
// one valid JSON-RPC response or nothing.
func FuzzBridgeHandle(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	b := newBridge(f, embeddedClients(f), func(c *bridge.Config) { c.Timeout = 5 * time.Second })
	f.Fuzz(func(t *testing.T, msg []byte) {
		notification := notificationShaped(msg)
		for _, tr := range []bridge.Transport{bridge.TransportStdio, bridge.TransportHTTP} {
			reply := b.Handle(context.Background(), msg, tr)
			if reply.Body == nil {
				continue
			}
			if !utf8.Valid(reply.Body) || !json.Valid(reply.Body) {
				t.Fatalf("reply is not UTF-8 JSON: %q", reply.Body)
			}
			var resp response
			dec := json.NewDecoder(bytes.NewReader(reply.Body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&resp); err != nil || resp.JSONRPC != "2.0" || (resp.Result == nil) == (resp.Error == nil) {
				t.Fatalf("reply is not one JSON-RPC response (%v): %s", err, reply.Body)
			}
			if notification && (tr != bridge.TransportHTTP || string(resp.ID) != `""` || resp.Error == nil) {
				t.Fatalf("a notification was answered on %v: %s\n-> %s", tr, msg, reply.Body)
			}
		}
		if n := b.Counters().Panics; n > 0 {
			t.Fatalf("handling panicked (%d)", n)
		}
	})
}
