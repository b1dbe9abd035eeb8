// Package natstest runs real nats-server processes for tests: one node with JetStream, or a
// cluster of nodes with routes, on loopback ports with their storage in a temporary directory;
// and a TCP Proxy in front of a node whose link can go silent (half-open) and come back.
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

// Name is the node's server name (n1, n2, ...), as JetStream names stream leaders.
func (s *Server) Name() string { return s.name }

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

// Signal sends sig to the running node: syscall.SIGTERM shuts it down, syscall.SIGUSR2 puts it in
// lame duck mode (leaders handed to other nodes, clients told to move, closed over two minutes).
// Stop still ends it.
func (s *Server) Signal(sig os.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.stoppedAt {
		return fmt.Errorf("nats-server %s is not running", s.name)
	}
	return s.cmd.Process.Signal(sig)
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

// Proxy forwards TCP connections from a loopback port to a node. Silence stops it forwarding
// (and reading) in both directions without closing either side: the client's link stays open
// and carries nothing, a half-open link as a network partition or a node dead behind a load
// balancer makes; connections made while silent are accepted and get nothing either. Resume
// forwards again, what was held included.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	open   chan struct{} // closed while forwarding
	conns  []net.Conn
	done   chan struct{}
}

// NewProxy starts a proxy to the node s; it ends with the test.
func NewProxy(t testing.TB, s *Server) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: fmt.Sprintf("127.0.0.1:%d", s.port), open: make(chan struct{}), done: make(chan struct{})}
	close(p.open)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// URL is the proxy's client URL.
func (p *Proxy) URL() string { return "nats://" + p.ln.Addr().String() }

// Silence stops forwarding; the connections stay open.
func (p *Proxy) Silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default:
	}
}

// Resume forwards again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.copy(up, c)
		go p.copy(c, up)
	}
}

// wait blocks while the proxy is silent; false once it is closed.
func (p *Proxy) wait() bool {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	select {
	case <-open:
		return true
	case <-p.done:
		return false
	}
}

func (p *Proxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for p.wait() {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	for _, c := range p.conns {
		_ = c.Close()
	}
}
