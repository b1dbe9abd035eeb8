package unixsock_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	tt "github.com/ahp-gateway/ahp/internal/transport/transporttest"
	"github.com/ahp-gateway/ahp/internal/transport/unixsock"
)

const testTimeout = 10 * time.Second

// start serves h on a new socket and returns its path and a stop function that waits for Serve.
func start(t *testing.T, h bridge.Handler, opts unixsock.Options) (string, func() error) {
	t.Helper()
	path := testkit.SocketPath(t)
	ln, err := unixsock.Listen(path, unixsock.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- unixsock.Serve(ctx, ln, h, opts) }()
	var once sync.Once
	var err2 error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case err2 = <-served:
			case <-time.After(testTimeout):
				err2 = fmt.Errorf("Serve did not return")
			}
		})
		return err2
	}
	t.Cleanup(func() { stop() })
	return path, stop
}

func connect(t *testing.T, path string) (net.Conn, *bufio.Scanner) {
	t.Helper()
	c, err := net.DialTimeout("unix", path, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, 16<<20)
	return c, sc
}

func TestListenSetsTheModeAndRemovesTheFileOnClose(t *testing.T) {
	t.Parallel()
	for _, mode := range []fs.FileMode{unixsock.DefaultMode, 0o660} {
		path := testkit.SocketPath(t)
		ln, err := unixsock.Listen(path, mode)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Type() != fs.ModeSocket || info.Mode().Perm() != mode {
			t.Errorf("socket file mode %v, want socket %v", info.Mode(), mode)
		}
		ln.Close()
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("socket file left after Close: %v", err)
		}
	}
}

func TestListenReplacesOnlyAStaleSocket(t *testing.T) {
	t.Parallel()
	// A socket file nobody listens on (a crashed bridge) is replaced.
	stale := testkit.SocketPath(t)
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	old.Close()
	ln, err := unixsock.Listen(stale, unixsock.DefaultMode)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	defer ln.Close()

	// A socket somebody listens on is not taken over.
	if _, err := unixsock.Listen(stale, unixsock.DefaultMode); err == nil || !strings.Contains(err.Error(), "listening") {
		t.Fatalf("live socket: %v", err)
	}

	// Nor is a file that is not a socket.
	file := testkit.SocketPath(t)
	if err := os.WriteFile(file, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := unixsock.Listen(file, unixsock.DefaultMode); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("regular file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep me" {
		t.Fatal("regular file was touched")
	}
}

func TestManyConcurrentConnections(t *testing.T) {
	t.Parallel()
	path, _ := start(t, &tt.Handler{}, unixsock.Options{})
	const clients, requests = 20, 25
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			c, sc := connect(t, path)
			go func() {
				for j := range requests {
					fmt.Fprintln(c, tt.Request(fmt.Sprintf(`"c%d-%d"`, i, j), "echo", ""))
					fmt.Fprintln(c, tt.Notification("echo", ""))
				}
			}()
			for j := range requests {
				if !sc.Scan() {
					t.Errorf("client %d: %v after %d answers", i, sc.Err(), j)
					return
				}
				r, err := tt.Decode(sc.Bytes())
				if err != nil {
					t.Error(err)
					return
				}
				e, _ := r.Echo()
				if want := fmt.Sprintf(`"c%d-%d"`, i, j); string(r.ID) != want || e.Transport != int(bridge.TransportUnix) {
					t.Errorf("client %d: answer %s (transport %d), want %s", i, r.ID, e.Transport, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestOversizeLineKeepsTheConnection(t *testing.T) {
	t.Parallel()
	path, _ := start(t, &tt.Handler{}, unixsock.Options{Stream: ndjson.Options{MaxMessageBytes: 100}})
	c, sc := connect(t, path)
	fmt.Fprintln(c, tt.Request(`"big"`, "echo", `{"p":"`+strings.Repeat("x", 1000)+`"}`))
	fmt.Fprintln(c, tt.Request(`"ok"`, "echo", ""))
	for _, want := range []string{`"big"`, `"ok"`} {
		if !sc.Scan() {
			t.Fatal(sc.Err())
		}
		if r, err := tt.Decode(sc.Bytes()); err != nil || string(r.ID) != want {
			t.Fatalf("answer %q, want id %s", sc.Text(), want)
		}
	}
}

func TestASlowReaderDoesNotHoldUpOthers(t *testing.T) {
	t.Parallel()
	h := &tt.Handler{}
	path, _ := start(t, h, unixsock.Options{ShutdownTimeout: 100 * time.Millisecond})
	hog, _ := connect(t, path)
	go flood(hog) // and never reads
	// The hog's first 1 MB answer cannot fit the buffers of a peer that never reads: once its
	// message reached the handler, that connection's writer is stuck.
	h.AwaitCalls(t, 1)
	c, sc := connect(t, path)
	fmt.Fprintln(c, tt.Request(`"polite"`, "echo", ""))
	if !sc.Scan() {
		t.Fatal(sc.Err())
	}
	if r, _ := tt.Decode(sc.Bytes()); string(r.ID) != `"polite"` {
		t.Fatalf("answer %q", sc.Text())
	}
}

func TestShutdownAnswersInFlightAndRemovesTheSocket(t *testing.T) {
	t.Parallel()
	h := &tt.Handler{}
	path, stop := start(t, h, unixsock.Options{})
	c, sc := connect(t, path)
	fmt.Fprintln(c, tt.Request(`"inflight"`, tt.MethodBlock, ""))
	stopped := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := h.HoldThroughShutdown(ctx, func() { go func() { stopped <- stop() }() }, "unix", path); err != nil {
		t.Fatal(err)
	}
	if !sc.Scan() {
		t.Fatal(sc.Err())
	}
	if r, _ := tt.Decode(sc.Bytes()); string(r.ID) != `"inflight"` {
		t.Fatalf("answer %q", sc.Text())
	}
	if sc.Scan() {
		t.Fatalf("more after the in-flight answer: %q", sc.Text())
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left: %v", err)
	}
	if _, err := net.Dial("unix", path); err == nil {
		t.Fatal("still accepting")
	}
}

func TestShutdownGivesUpOnAPeerThatStoppedReading(t *testing.T) {
	t.Parallel()
	h := &tt.Handler{}
	path, stop := start(t, h, unixsock.Options{ShutdownTimeout: 200 * time.Millisecond})
	c, _ := connect(t, path)
	go flood(c)
	h.AwaitCalls(t, 1) // its 1 MB answer cannot be written: the peer has stopped reading
	begin := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	io.Copy(io.Discard, c) // the connection has been closed: this ends
}

func TestAllowUIDsAdmitsOnlyListedPeers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		allow []uint32
		want  bool
	}{
		{"own uid allowed", []uint32{uint32(os.Getuid())}, true},
		{"other uid only", []uint32{uint32(os.Getuid()) + 4242}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testkit.SocketPath(t)
			ln, err := unixsock.Listen(path, unixsock.DefaultMode)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			echo := bridge.HandlerFunc(func(_ context.Context, msg []byte, _ bridge.Transport) bridge.Reply {
				return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)}
			})
			go func() { _ = unixsock.Serve(ctx, ln, echo, unixsock.Options{AllowUIDs: tc.allow}) }()
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":"x","method":"m","params":{}}` + "\n")); err != nil && tc.want {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(c).ReadString('\n')
			if got := err == nil && strings.Contains(line, `"result"`); got != tc.want {
				t.Fatalf("answered = %v (%q, %v), want %v", got, line, err, tc.want)
			}
		})
	}
}

// flood asks for far more than the socket buffers hold, until a write fails.
func flood(c io.Writer) {
	for range 64 {
		if _, err := fmt.Fprintln(c, tt.Request(`"h"`, "huge", `{"bytes":1000000}`)); err != nil {
			return
		}
	}
}

// With MaxConnections open, the next connection is closed at accept; the open ones keep working.
func TestMaxConnectionsClosesTheNextOne(t *testing.T) {
	t.Parallel()
	echo := bridge.HandlerFunc(func(_ context.Context, msg []byte, _ bridge.Transport) bridge.Reply {
		return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)}
	})
	path, _ := start(t, echo, unixsock.Options{MaxConnections: 1})
	ask := func(c net.Conn, sc *bufio.Scanner) bool {
		if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":"x","method":"m","params":{}}` + "\n")); err != nil {
			return false
		}
		return sc.Scan() && strings.Contains(sc.Text(), `"result"`)
	}
	first, firstSc := connect(t, path)
	if !ask(first, firstSc) { // served, so counted before the second is accepted
		t.Fatal("the first connection was not answered")
	}
	second, secondSc := connect(t, path)
	if ask(second, secondSc) {
		t.Fatal("the connection over MaxConnections was answered")
	}
	if !ask(first, firstSc) {
		t.Fatal("the first connection stopped working")
	}
}

// A connection on which nothing arrives for IdleTimeout is closed by the server.
func TestIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	echo := bridge.HandlerFunc(func(_ context.Context, msg []byte, _ bridge.Transport) bridge.Reply {
		return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)}
	})
	path, _ := start(t, echo, unixsock.Options{IdleTimeout: 200 * time.Millisecond})
	c, sc := connect(t, path)
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":"x","method":"m","params":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if !sc.Scan() {
		t.Fatalf("no answer: %v", sc.Err())
	}
	if sc.Scan() || sc.Err() != nil { // EOF, not the client's own deadline
		t.Fatalf("idle connection: Scan = %q, %v; want the server to close it", sc.Text(), sc.Err())
	}
}
