// Package natstest runs real nats-server processes for tests: one node with JetStream, or a
// cluster of nodes with routes, on loopback ports with their storage in a temporary directory.
// The server is built from tools/natsserver.mod (go tool -n, cached after the first build); when
// it cannot be built the test is skipped, unless AHP_NATS_OPTIONAL=0 (CI), where it fails.
package natstest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of a nats-server binary: $NATS_SERVER, or one built from
// tools/natsserver.mod. It skips t when neither is possible, or fails it with AHP_NATS_OPTIONAL=0.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("NATS_SERVER"); p != "" {
			binPath = p
			return
		}
		root, err := repoRoot()
		if err != nil {
			buildErr = err
			return
		}
		out, err := exec.Command("go", "-C", root, "tool", "-modfile="+filepath.Join(root, "tools", "natsserver.mod"), "-n", "nats-server").Output()
		if err != nil {
			buildErr = fmt.Errorf("building nats-server from tools/natsserver.mod: %w", err)
			return
		}
		binPath = strings.TrimSpace(string(out))
	})
	if buildErr != nil || binPath == "" {
		if os.Getenv("AHP_NATS_OPTIONAL") == "0" {
			t.Fatalf("nats-server unavailable and AHP_NATS_OPTIONAL=0: %v", buildErr)
		}
		t.Skipf("skipping: nats-server unavailable (%v); run `go mod download -modfile=tools/natsserver.mod` or set NATS_SERVER", buildErr)
	}
	return binPath
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "natsserver.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("tools/natsserver.mod not found above the test's directory")
		}
		dir = parent
	}
}

// Server is one running nats-server node.
type Server struct {
	t         testing.TB
	name      string
	port      int
	args      []string
	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	logs      *strings.Builder
	logsMu    *sync.Mutex
	stoppedAt bool
}

// URL is the node's client URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Start runs one JetStream node.
func Start(t testing.TB) *Server {
	t.Helper()
	port := freePort(t)
	s := &Server{t: t, name: "n1", port: port, args: []string{
		"-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", t.TempDir(), "-n", "n1",
	}}
	s.start()
	t.Cleanup(s.Stop)
	WaitJetStream(t, s.URL())
	return s
}

// Later returns a JetStream node that is not running yet: its URL is known at once, Run starts
// it. For tests of a client that starts before NATS does.
func Later(t testing.TB) *Server {
	t.Helper()
	port := freePort(t)
	s := &Server{t: t, name: "n1", port: port, args: []string{
		"-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", t.TempDir(), "-n", "n1",
	}}
	t.Cleanup(s.Stop)
	return s
}

// Run starts a node made by Later (or stopped) and waits until JetStream answers.
func (s *Server) Run() {
	s.t.Helper()
	s.start()
	WaitJetStream(s.t, s.URL())
}

// Cluster runs n JetStream nodes joined by routes and waits until JetStream has a meta leader.
func Cluster(t testing.TB, n int) []*Server {
	t.Helper()
	clientPorts := make([]int, n)
	routePorts := make([]int, n)
	for i := range n {
		clientPorts[i], routePorts[i] = freePort(t), freePort(t)
	}
	var routes []string
	for _, p := range routePorts {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	servers := make([]*Server, n)
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		servers[i] = &Server{t: t, name: name, port: clientPorts[i], args: []string{
			"-a", "127.0.0.1", "-p", fmt.Sprint(clientPorts[i]), "-js", "-sd", t.TempDir(), "-n", name,
			"--cluster_name", "ahptest", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]),
			"--routes", strings.Join(routes, ","),
		}}
		servers[i].start()
		t.Cleanup(servers[i].Stop)
	}
	for _, s := range servers {
		WaitJetStream(t, s.URL())
	}
	return servers
}

// URLs joins the client URLs of servers with commas, as -nats takes them.
func URLs(servers []*Server) string {
	var out []string
	for _, s := range servers {
		out = append(out, s.URL())
	}
	return strings.Join(out, ",")
}

func (s *Server) start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(Binary(s.t), s.args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting nats-server %s: %v", s.name, err)
	}
	s.cmd, s.exited, s.stoppedAt = cmd, make(chan struct{}), false
	if s.logs == nil {
		s.logs, s.logsMu = new(strings.Builder), new(sync.Mutex)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			s.logsMu.Lock()
			if s.logs.Len() < 1<<20 {
				s.logs.WriteString(line + "\n")
			}
			s.logsMu.Unlock()
			if strings.Contains(line, "Server is ready") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	exited := s.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-ready:
	case <-exited:
		s.t.Fatalf("nats-server %s exited before it was ready:\n%s", s.name, s.Logs())
	case <-time.After(30 * time.Second):
		s.t.Fatalf("nats-server %s not ready within 30s:\n%s", s.name, s.Logs())
	}
}

// Logs returns what the node wrote (its first MiB).
func (s *Server) Logs() string {
	s.logsMu.Lock()
	defer s.logsMu.Unlock()
	return s.logs.String()
}

// Stop ends the node and waits for it; it is safe to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.stoppedAt {
		return
	}
	s.stoppedAt = true
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Restart starts a stopped node again on the same port and storage.
func (s *Server) Restart() {
	s.t.Helper()
	s.start()
}

// WaitJetStream waits (up to jetStreamWait) until JetStream answers on url.
func WaitJetStream(t testing.TB, url string) {
	t.Helper()
	nc, err := nats.Connect(url, nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(jetStreamWait)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, last = js.AccountInfo(ctx)
		if last == nil {
			cancel()
			return
		}
		<-ctx.Done() // the next try comes when this one's second is up (an answer came early: an error)
		cancel()
	}
	t.Fatalf("JetStream on %s not ready within %v: %v", url, jetStreamWait, last)
}

// jetStreamWait bounds the wait for JetStream: a cluster elects its meta leader first, which on a
// loaded two-core machine has taken more than 30 s. A bound against a hang, not a speed claim.
const jetStreamWait = 90 * time.Second

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
