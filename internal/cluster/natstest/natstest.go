// Package natstest runs real nats-server processes for tests: one node with JetStream, or a
// cluster of nodes with routes, on loopback ports with their storage in a temporary directory.
// The server is built from tools/natsserver.mod (go tool -n, cached after the first build); when
// it cannot be built the test is skipped, unless AHP_NATS_OPTIONAL=0 (CI), where it fails.
package natstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
	monitor   int  // HTTP monitoring port (StartMonitored), or 0
	routed    bool // a cluster node: it listens for routes too (after "Server is ready")
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
	s := startFresh(t, 1, func(ports []int) *Server {
		return &Server{t: t, name: "n1", port: ports[0], args: []string{
			"-a", "127.0.0.1", "-p", fmt.Sprint(ports[0]), "-js", "-sd", t.TempDir(), "-n", "n1",
		}}
	})
	t.Cleanup(s.Stop)
	WaitJetStream(t, s.URL())
	return s
}

// startFresh starts the node made for n free ports, on other free ports when one of them was
// taken before nats-server could listen on it: freePorts can only find ports that are free at
// that moment, and a parallel test's listener or outgoing connection may take one meanwhile.
func startFresh(t testing.TB, n int, node func(ports []int) *Server) *Server {
	t.Helper()
	var s *Server
	onFreshPorts(t, func() error {
		s = node(freePorts(t, n))
		return s.launch()
	})
	return s
}

// onFreshPorts calls start until it succeeds, again (with the other ports it picks) after a
// *portTakenError, at most portAttempts times; any other error fails t.
func onFreshPorts(t testing.TB, start func() error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := start()
		if err == nil {
			return
		}
		taken, ok := errors.AsType[*portTakenError](err)
		if !ok || attempt == portAttempts {
			t.Fatal(err)
		}
		t.Logf("nats-server %s: %s; starting again on other ports", taken.name, taken.line)
	}
}

// portAttempts bounds the starts of a node whose ports were taken each time.
const portAttempts = 5

// Later returns a JetStream node that is not running yet: its URL is known at once, Run starts
// it. For tests of a client that starts before NATS does. (Its port cannot change once the URL
// is given out, so a port taken before Run fails the test.)
func Later(t testing.TB) *Server {
	t.Helper()
	port := freePorts(t, 1)[0]
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
// Every node's routes name every node's route port, so when a port was taken before its node
// could listen on it, the whole cluster starts again on other ports (onFreshPorts).
func Cluster(t testing.TB, n int) []*Server {
	t.Helper()
	var servers []*Server
	onFreshPorts(t, func() (err error) {
		servers, err = launchCluster(t, freePorts(t, 2*n))
		return err
	})
	for _, s := range servers {
		t.Cleanup(s.Stop)
	}
	for _, s := range servers {
		WaitJetStream(t, s.URL())
	}
	return servers
}

// launchCluster starts len(ports)/2 nodes: the client ports, then the route ports. When one fails
// to start it stops those started before it.
func launchCluster(t testing.TB, ports []int) ([]*Server, error) {
	n := len(ports) / 2
	var routes []string
	for _, p := range ports[n:] {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	servers := make([]*Server, n)
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		servers[i] = &Server{t: t, name: name, port: ports[i], routed: true, args: []string{
			"-a", "127.0.0.1", "-p", fmt.Sprint(ports[i]), "-js", "-sd", t.TempDir(), "-n", name,
			"--cluster_name", "ahptest", "--cluster", routes[i],
			"--routes", strings.Join(routes, ","),
		}}
		if err := servers[i].launch(); err != nil {
			for _, s := range servers[:i] {
				s.Stop()
			}
			return nil, err
		}
	}
	return servers, nil
}

// URLs joins the client URLs of servers with commas, as -nats takes them.
func URLs(servers []*Server) string {
	var out []string
	for _, s := range servers {
		out = append(out, s.URL())
	}
	return strings.Join(out, ",")
}

// start launches the node on its ports, failing the test when it does not get ready.
func (s *Server) start() {
	s.t.Helper()
	if err := s.launch(); err != nil {
		s.t.Fatal(err)
	}
}

// portTakenError is a node's exit because a port it was given was in use; line is the log line
// that says so.
type portTakenError struct{ name, line, logs string }

func (e *portTakenError) Error() string {
	return fmt.Sprintf("nats-server %s exited before it was ready: %s:\n%s", e.name, e.line, e.logs)
}

// launch runs nats-server and waits until it is ready; an exit because a port was in use is a
// *portTakenError.
func (s *Server) launch() error {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(Binary(s.t), s.args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting nats-server %s: %w", s.name, err)
	}
	s.cmd, s.exited, s.stoppedAt = cmd, make(chan struct{}), false
	if s.logs == nil {
		s.logs, s.logsMu = new(strings.Builder), new(sync.Mutex)
	}
	// A cluster node is ready once its route listener is: nats-server opens it after it says
	// "Server is ready", and exits if the port is taken.
	readyLine := "Server is ready"
	if s.routed {
		readyLine = "Listening for route connections"
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
			if strings.Contains(line, readyLine) {
				once.Do(func() { close(ready) })
			}
		}
	}()
	exited := s.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-ready:
		return nil
	case <-exited:
		s.stoppedAt = true
		logs := s.Logs()
		if _, line, ok := strings.Cut(logs, "[FTL] "); ok && strings.Contains(line, "address already in use") {
			line, _, _ = strings.Cut(line, "\n")
			return &portTakenError{name: s.name, line: line, logs: logs}
		}
		return fmt.Errorf("nats-server %s exited before it was ready:\n%s", s.name, logs)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		s.stoppedAt = true
		return fmt.Errorf("nats-server %s not ready within 30s:\n%s", s.name, s.Logs())
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

// freePorts returns n distinct loopback ports that were free a moment ago: all n are held open
// until the last is found, so none is returned twice.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// StartMonitored is Start with nats-server's HTTP monitoring endpoint on a loopback port, so a
// test can ask the server what it delivered (Connections).
func StartMonitored(t testing.TB) *Server {
	t.Helper()
	s := startFresh(t, 2, func(ports []int) *Server {
		return &Server{t: t, name: "n1", port: ports[0], monitor: ports[1], args: []string{
			"-a", "127.0.0.1", "-p", fmt.Sprint(ports[0]), "-m", fmt.Sprint(ports[1]), "-js", "-sd", t.TempDir(), "-n", "n1",
		}}
	})
	t.Cleanup(s.Stop)
	WaitJetStream(t, s.URL())
	return s
}

// Connection is a client connection as the server's /connz reports it.
type Connection struct {
	Name string `json:"name"`
	// OutMsgs counts the messages the server sent the client (including replies).
	OutMsgs uint64 `json:"out_msgs"`
	// Subscriptions are the client's subscriptions, each with the messages delivered to it.
	Subscriptions []struct {
		Subject string `json:"subject"`
		Msgs    uint64 `json:"msgs"`
	} `json:"subscriptions_list_detail"`
}

// Connections returns the server's client connections with their subscriptions (/connz?subs=detail);
// the server must have been started by StartMonitored.
func (s *Server) Connections(t testing.TB) []Connection {
	t.Helper()
	if s.monitor == 0 {
		t.Fatal("natstest: Connections needs a server started by StartMonitored")
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/connz?subs=detail&limit=1024", s.monitor))
	if err != nil {
		t.Fatalf("natstest: /connz: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		Connections []Connection `json:"connections"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&out); err != nil {
		t.Fatalf("natstest: /connz: %v", err)
	}
	return out.Connections
}
