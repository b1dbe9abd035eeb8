package server

import (
	"net"
	"sync"

	"github.com/ahp-gateway/ahp/internal/metrics"
)

// limitListener caps the connections open at once, in total and per client IP address. A
// connection over either cap is closed as soon as it is accepted (and counted), so that one
// client cannot take every file descriptor while other clients still get in.
type limitListener struct {
	net.Listener
	total, perAddr int
	metrics        *metrics.Metrics

	mu     sync.Mutex
	open   int
	byAddr map[string]int
}

// limitConnections wraps ln; a cap <= 0 is no cap.
func limitConnections(ln net.Listener, total, perAddr int, m *metrics.Metrics) net.Listener {
	if total <= 0 && perAddr <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, total: total, perAddr: perAddr, metrics: m, byAddr: map[string]int{}}
}

// Accept implements net.Listener: it returns the next connection within the caps.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := clientAddr(c)
		if reason := l.admit(addr); reason != "" {
			_ = c.Close()
			l.metrics.ConnectionRefused(reason)
			continue
		}
		l.metrics.ConnectionOpened()
		return &limitedConn{Conn: c, l: l, addr: addr}, nil
	}
}

// admit counts a new connection from addr, or says which cap it is over.
func (l *limitListener) admit(addr string) (refused string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total > 0 && l.open >= l.total:
		return metrics.ConnectionsTotalCap
	case l.perAddr > 0 && l.byAddr[addr] >= l.perAddr:
		return metrics.ConnectionsPerAddressCap
	}
	l.open++
	l.byAddr[addr]++
	return ""
}

func (l *limitListener) release(addr string) {
	l.mu.Lock()
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
	l.mu.Unlock()
	l.metrics.ConnectionClosed()
}

// clientAddr is the IP address of c's peer (the whole address when it has no port).
func clientAddr(c net.Conn) string {
	addr := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// limitedConn gives its place back when it is closed (once, however often Close is called).
type limitedConn struct {
	net.Conn
	l    *limitListener
	addr string
	once sync.Once
}

// Close implements net.Conn.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}
