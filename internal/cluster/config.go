// Package cluster connects ahp-server replicas to NATS JetStream, the engine through which they
// share idempotency, session memory, Watch fan-out, the policy and the audit stream. It holds the
// connection, its settings and its health; each shared store lives in its own package beside it
// (cluster/idemkv, cluster/sessionkv, cluster/fanout, ...), behind the interface the decision core
// already uses. Without a cluster configured nothing here runs: the in-memory stores are the
// default.
package cluster

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// Config is the `cluster:` block of the configuration file; the -nats flag sets Servers.
//
// Secrets never appear here: credentials come from a creds or nkey seed file, or a token read
// from the environment variable TokenEnv names.
type Config struct {
	// Servers are NATS URLs (nats://host:4222, tls://host:4222); empty: no cluster mode.
	Servers []string `yaml:"servers"`
	// CredsFile is a NATS user credentials file (JWT and nkey seed).
	CredsFile string `yaml:"creds_file"`
	// NKeyFile is a file holding an nkey user seed.
	NKeyFile string `yaml:"nkey_file"`
	// TokenEnv names the environment variable that holds a NATS token.
	TokenEnv string `yaml:"token_env"`
	// TLS verifies the servers and, with a client certificate, authenticates to them.
	TLS TLS `yaml:"tls"`
	// Prefix starts every bucket, stream and subject name, so several installations can share one
	// NATS (default "ahp"; letters, digits, '-' and '_').
	Prefix string `yaml:"prefix"`
	// Replicas is how many NATS servers hold each bucket and stream (default 1; 3 on a 3-node
	// cluster).
	Replicas int `yaml:"replicas"`
	// Name identifies this replica in logs, fan-out and the audit stream (default: the host name).
	Name string `yaml:"name"`
	// OnUnavailable is what decisions do while NATS cannot be reached: "degrade" (default: decide
	// with local stores) or "fail-closed" (labelled synthetic denials).
	OnUnavailable string `yaml:"on_unavailable"`
	// OnStartUnavailable is what the server does when NATS cannot be reached at start: "refuse"
	// (default: exit with an error) or "degrade" (start, and connect when NATS comes).
	OnStartUnavailable string `yaml:"on_start_unavailable"`
	// LookupBudget bounds each store operation of a decision (default 10ms): a slower NATS counts
	// as unavailable for that call.
	LookupBudget time.Duration `yaml:"lookup_budget"`
	// ConnectTimeout bounds the first connection attempt (default 5s).
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// PingInterval is how often the client pings its NATS server when nothing else tells it the
	// link is alive (default 5s, between 100ms and 10m). Two pings may go unanswered: a link gone
	// silent without a reset (a partition) is dropped, and another server tried, within three
	// intervals. A store operation that fails or runs out of its budget finds such a link sooner
	// (a ping of its own, answered within a second or the link is dropped).
	PingInterval time.Duration `yaml:"ping_interval"`
	// SessionWrites is how session memory reaches the bucket: "async" (default: queued and
	// written by background writers, off the decision path; views read a local copy the bucket's
	// watch keeps current) or "sync" (each change written before the answer).
	SessionWrites string `yaml:"session_writes"`
	// SessionWriteDelay is how long a queued session change waits for more changes to the same
	// session, to be written together (default 0: written as soon as a writer is free). Larger
	// means fewer writes under load, and other replicas seeing a change that much later.
	SessionWriteDelay time.Duration `yaml:"session_write_delay"`
	// SessionFormat is the form session records are written in: "binary" (default: compact
	// protobuf wire format) or "json" (the form versions before it wrote and can read, for a
	// rolling upgrade from one: set it until no replica of such a version runs, then drop it).
	// Records in either form are always read.
	SessionFormat string `yaml:"session_format"`
	// IdempotencyStorage is the idempotency bucket's JetStream storage: "file" (default:
	// survives a restart of every NATS node) or "memory" (faster writes; with replicas > 1 still
	// held by several nodes, but lost when all of them restart at once). Changing it for an
	// existing bucket needs the bucket deleted first (nats kv del <prefix>_idempotency).
	IdempotencyStorage string `yaml:"idempotency_storage"`
	// SetupTimeout bounds creating or checking the buckets and streams at start (default 30s:
	// a replicated stream needs its RAFT group elected). With OnStartUnavailable "degrade" and
	// NATS not reachable nothing waits for it: the stores start on their local fallbacks and
	// attach in the background.
	SetupTimeout time.Duration `yaml:"setup_timeout"`
}

// TLS configures TLS to NATS.
type TLS struct {
	// CAFile holds the CAs that sign the NATS servers' certificates.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the client certificate and key (mutual TLS).
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Session write modes and storage kinds.
const (
	Async  = "async"
	Sync   = "sync"
	File   = "file"
	Memory = "memory"
	Binary = "binary"
	JSON   = "json"
)

// Unavailable modes.
const (
	Degrade    = "degrade"
	FailClosed = "fail-closed"
	Refuse     = "refuse"
)

// The bounds of PingInterval.
const (
	MinPingInterval = 100 * time.Millisecond
	MaxPingInterval = 10 * time.Minute
)

// Enabled reports whether cluster mode is configured.
func (c Config) Enabled() bool { return len(c.Servers) > 0 }

var (
	prefixPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	namePattern   = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// WithDefaults fills in the documented defaults.
func (c Config) WithDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = "ahp"
	}
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.Name == "" {
		host, _ := os.Hostname()
		c.Name = strings.Trim(namePattern.ReplaceAllString(host, "-"), "-")
		if len(c.Name) > 64 {
			c.Name = c.Name[:64]
		}
		if c.Name == "" {
			c.Name = "ahp-server"
		}
	}
	if c.OnUnavailable == "" {
		c.OnUnavailable = Degrade
	}
	if c.OnStartUnavailable == "" {
		c.OnStartUnavailable = Refuse
	}
	if c.SessionWrites == "" {
		c.SessionWrites = Async
	}
	if c.IdempotencyStorage == "" {
		c.IdempotencyStorage = File
	}
	if c.SessionFormat == "" {
		c.SessionFormat = Binary
	}
	if c.LookupBudget <= 0 {
		c.LookupBudget = 10 * time.Millisecond
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.PingInterval == 0 {
		c.PingInterval = 5 * time.Second
	}
	if c.SetupTimeout <= 0 {
		c.SetupTimeout = 30 * time.Second
	}
	return c
}

// Validate checks the settings, naming the field at fault (never its value when it may be a
// secret).
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("cluster.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	for i, s := range c.Servers {
		if strings.TrimSpace(s) == "" {
			bad(fmt.Sprintf("servers[%d]", i), "empty URL")
		} else if strings.Contains(s, "@") {
			bad(fmt.Sprintf("servers[%d]", i), "must not carry credentials (user:password@); use creds_file, nkey_file or token_env")
		}
	}
	n := 0
	for _, set := range []bool{c.CredsFile != "", c.NKeyFile != "", c.TokenEnv != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		bad("creds_file", "set at most one of creds_file, nkey_file and token_env")
	}
	if c.TokenEnv != "" && !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(c.TokenEnv) {
		bad("token_env", "must name an environment variable (letters, digits, '_'), not hold the token itself")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls", "cert_file and key_file go together")
	}
	if c.Prefix != "" && !prefixPattern.MatchString(c.Prefix) {
		bad("prefix", "must be 1-32 letters, digits, '-' or '_', starting with a letter or digit")
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		bad("replicas", "must be between 1 and 5")
	}
	if c.Name != "" && !regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`).MatchString(c.Name) {
		bad("name", "must be 1-64 letters, digits, '-' or '_' (it is part of NATS subjects)")
	}
	switch c.OnUnavailable {
	case "", Degrade, FailClosed:
	default:
		bad("on_unavailable", "must be %q or %q", Degrade, FailClosed)
	}
	switch c.OnStartUnavailable {
	case "", Refuse, Degrade:
	default:
		bad("on_start_unavailable", "must be %q or %q", Refuse, Degrade)
	}
	switch c.SessionWrites {
	case "", Async, Sync:
	default:
		bad("session_writes", "must be %q or %q", Async, Sync)
	}
	switch c.IdempotencyStorage {
	case "", File, Memory:
	default:
		bad("idempotency_storage", "must be %q or %q", File, Memory)
	}
	switch c.SessionFormat {
	case "", Binary, JSON:
	default:
		bad("session_format", "must be %q or %q", Binary, JSON)
	}
	if c.SessionWriteDelay < 0 || c.SessionWriteDelay > time.Second {
		bad("session_write_delay", "must be between 0 and 1s")
	}
	if c.LookupBudget < 0 {
		bad("lookup_budget", "must not be negative")
	}
	if c.PingInterval != 0 && (c.PingInterval < MinPingInterval || c.PingInterval > MaxPingInterval) {
		bad("ping_interval", "must be between %v and %v (a silent link to NATS is found within three intervals)", MinPingInterval, MaxPingInterval)
	}
	return errors.Join(errs...)
}

// ParseServers splits a comma-separated -nats value.
func ParseServers(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
