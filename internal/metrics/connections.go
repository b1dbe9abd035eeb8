package metrics

import "github.com/prometheus/client_golang/prometheus"

// The reasons a connection is refused, as ConnectionRefused's argument and the reason label.
const (
	// ConnectionsTotalCap: the server had its maximum of open connections.
	ConnectionsTotalCap = "total"
	// ConnectionsPerAddressCap: the client's IP address had its maximum of open connections.
	ConnectionsPerAddressCap = "per_address"
)

func (m *Metrics) initConnections(f factory) {
	m.connsOpen = f.gauge("ahp_http_connections", "HTTP connections open.")
	refused := f.counterVec("ahp_http_connections_refused_total", "HTTP connections closed at accept because a connection cap was reached, by cap.", "reason")
	m.connsRefused = map[string]prometheus.Counter{
		ConnectionsTotalCap:      refused.WithLabelValues(ConnectionsTotalCap),
		ConnectionsPerAddressCap: refused.WithLabelValues(ConnectionsPerAddressCap),
	}
}

// ConnectionOpened counts an accepted HTTP connection.
func (m *Metrics) ConnectionOpened() {
	if m != nil {
		m.connsOpen.Inc()
	}
}

// ConnectionClosed counts the end of an accepted HTTP connection.
func (m *Metrics) ConnectionClosed() {
	if m != nil {
		m.connsOpen.Dec()
	}
}

// ConnectionRefused counts a connection closed at accept; reason is ConnectionsTotalCap or
// ConnectionsPerAddressCap.
func (m *Metrics) ConnectionRefused(reason string) {
	if m == nil {
		return
	}
	if c, ok := m.connsRefused[reason]; ok {
		c.Inc()
	}
}
