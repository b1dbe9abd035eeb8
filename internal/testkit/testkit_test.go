package testkit_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func TestShellEventDefaultsAndOptions(t *testing.T) {
	t.Parallel()
	ev := testkit.ShellEvent("e1", "ls")
	if got := ev.GetTool().GetInput().GetFields()["command"].GetStringValue(); got != "ls" {
		t.Errorf("command = %q, want ls", got)
	}
	if ev.GetTool().GetCallId() != "c-e1" {
		t.Errorf("call id = %q, want c-e1", ev.GetTool().GetCallId())
	}
	if ev.GetSource() != testkit.DefaultSource {
		t.Errorf("source = %q", ev.GetSource())
	}
	if ev.GetSession().GetId() != testkit.DefaultSession {
		t.Errorf("session = %q", ev.GetSession().GetId())
	}
	ev = testkit.ShellEvent("e2", "ls", testkit.Session("s9"), testkit.Agent("a1"), testkit.Source("urn:x"), testkit.HooksOrigin(),
		testkit.Type(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER), testkit.Tool("Read", ahpv1.ToolKind_TOOL_KIND_FILE_READ))
	if ev.GetSession().GetId() != "s9" {
		t.Errorf("session = %q, want s9", ev.GetSession().GetId())
	}
	if ev.GetSession().GetAgent().GetId() != "a1" {
		t.Errorf("agent = %q, want a1", ev.GetSession().GetAgent().GetId())
	}
	if ev.GetSource() != "urn:x" {
		t.Errorf("source = %q, want urn:x", ev.GetSource())
	}
	if ev.GetOrigin().GetDialect() != ahpv1.Dialect_DIALECT_HOOKS {
		t.Errorf("origin = %v, want Hooks", ev.GetOrigin())
	}
	if ev.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_AFTER {
		t.Errorf("type = %v", ev.GetType())
	}
	if ev.GetTool().GetName() != "Read" {
		t.Errorf("tool name = %q, want Read", ev.GetTool().GetName())
	}
	if ev.GetTool().GetInput() == nil {
		t.Error("Tool dropped the input")
	}
}

func TestLogBufferWaitFor(t *testing.T) {
	t.Parallel()
	var logs testkit.LogBuffer
	log := logs.Logger()
	go func() {
		log.Info("first")
		log.Info("second")
	}()
	logs.WaitFor(t, `msg=second`, 1)
	logs.WaitFor(t, `msg=first`, 1) // already written
}

func TestSameJSON(t *testing.T) {
	t.Parallel()
	if !testkit.SameJSON(t, []byte(`{"a":1,"b":[true,null]}`), []byte(` { "b" : [true, null], "a" : 1.0 } `)) {
		t.Error("spacing, key order and number spelling made a difference")
	}
	if testkit.SameJSON(t, []byte(`{"a":1}`), []byte(`{"a":"1"}`)) {
		t.Error("a number and a string compared equal")
	}
}

func TestServeTCPAndReceive(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	addr, stop, served := testkit.ServeTCP(t, func(ctx context.Context, ln net.Listener) error {
		started <- ln.Addr().String()
		<-ctx.Done()
		return ln.Close()
	})
	if got := testkit.Receive(t, started, "serve did not start"); got != addr {
		t.Errorf("serve listens on %s, ServeTCP returned %s", got, addr)
	}
	stop()
	stop()
	if err := testkit.Receive(t, served, "serve did not return after stop"); err != nil {
		t.Errorf("serve returned %v", err)
	}
}

func TestSocketPathIsShortAndGoesAway(t *testing.T) {
	t.Parallel()
	var path string
	t.Run("listen", func(t *testing.T) {
		path = testkit.SocketPath(t)
		if len(path) > 100 {
			t.Errorf("path %q has %d bytes, over a socket path's limit", path, len(path))
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
	})
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("directory of %s after the test: %v, want it removed", path, err)
	}
}

func TestReadFilesInNameOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{"b.json": "2", "a.json": "1", "c.txt": "3"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := testkit.ReadFiles(t, filepath.Join(dir, "*.json"))
	if len(files) != 2 {
		t.Fatalf("read %d files, want 2 (a.json, b.json)", len(files))
	}
	for i, want := range []struct{ base, data string }{{"a.json", "1"}, {"b.json", "2"}} {
		if got := filepath.Base(files[i].Path); got != want.base {
			t.Errorf("file %d is %s, want %s", i, got, want.base)
		}
		if got := string(files[i].Data); got != want.data {
			t.Errorf("%s holds %q, want %q", want.base, got, want.data)
		}
	}
}

func TestDownURLRefusesEveryRequest(t *testing.T) {
	t.Parallel()
	url := testkit.DownURL(t)
	for range 3 {
		resp, err := http.Post(url+"/ahp", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("POST %s answered %s, want a transport error", url, resp.Status)
		}
	}
}
