package natstest

import (
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
)

// Name is the node's server name (n1, n2, ...), as JetStream names stream leaders.
func (s *Server) Name() string { return s.name }

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
