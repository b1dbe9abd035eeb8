// Package config reads ahp-server's optional configuration file: authentication, the audit log,
// redaction, metrics and tracing. Flags cover the common settings; the file holds what does not
// fit on a command line. Decoding is strict: an unknown key is an error naming it, and a literal
// secret is refused (tokens come from environment variables or files, never from this file).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/notify"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/tracing"
	"go.yaml.in/yaml/v3"
)

// File is the configuration file.
//
//	auth:       credentials and scopes (docs/auth.md)
//	audit:      the tamper-evident audit log (docs/audit.md)
//	redaction:  what is masked before anything is written or streamed
//	metrics:    Prometheus listener
//	tracing:    OpenTelemetry (docs/observability.md)
//	approvals:  notifiers for human approvals (docs/approvals.md)
//	cluster:    NATS JetStream shared state for replicas (docs/cluster.md)
type File struct {
	// Auth configures credentials; empty means no authentication (loopback use).
	Auth auth.Config `yaml:"auth"`
	// Audit configures the audit log.
	Audit Audit `yaml:"audit"`
	// Redaction configures secret masking for the audit log and Watch.
	Redaction Redaction `yaml:"redaction"`
	// Metrics configures the Prometheus endpoint.
	Metrics Metrics `yaml:"metrics"`
	// Tracing configures OpenTelemetry.
	Tracing tracing.Config `yaml:"tracing"`
	// Approvals configures who is told about new approvals (docs/approvals.md).
	Approvals Approvals `yaml:"approvals"`
	// Cluster shares state between replicas through NATS JetStream (docs/cluster.md).
	Cluster cluster.Config `yaml:"cluster"`
}

// Approvals configures approval notifications.
type Approvals struct {
	// Notifiers are the webhooks policies' approval blocks name.
	Notifiers []notify.Config `yaml:"notifiers"`
}

// Audit configures the audit log.
type Audit struct {
	// Enabled turns the audit log on (default true when the file has an audit section with a path
	// or dir; the -audit flag also turns it on).
	Enabled *bool `yaml:"enabled"`
	// Path is the active log file; Dir/audit.jsonl when empty.
	Path string `yaml:"path"`
	// Dir holds the log when Path is empty (default under the user's state directory).
	Dir string `yaml:"dir"`
	// MaxBytes rotates the file at this size (default 64 MiB).
	MaxBytes int64 `yaml:"max_bytes"`
	// Fsync is always, interval (default) or never.
	Fsync string `yaml:"fsync"`
	// FsyncInterval is the period for fsync: interval (default 1s).
	FsyncInterval time.Duration `yaml:"fsync_interval"`
	// Required makes decisions fail closed when the log cannot be written.
	Required bool `yaml:"required"`
	// IncludeEvent adds the redacted event to each record.
	IncludeEvent bool `yaml:"include_event"`
	// NATS also publishes every record to the cluster's replicated audit stream (cluster mode;
	// docs/cluster.md). With Required, the stream's acknowledgement comes before the answer.
	NATS bool `yaml:"nats"`
}

// Redaction configures secret masking.
type Redaction struct {
	// Paths are JSON paths always masked (e.g. tool.input.password, native.payload.headers.*).
	Paths []string `yaml:"paths"`
	// SecretKeys are extra key names treated as secret.
	SecretKeys []string `yaml:"secret_keys"`
	// MaxFieldBytes caps each string (default 8 KiB; negative disables).
	MaxFieldBytes int `yaml:"max_field_bytes"`
	// Disable turns off built-in detectors by name.
	Disable []string `yaml:"disable"`
}

// Metrics configures the Prometheus endpoint.
type Metrics struct {
	// Addr is the listen address of GET /metrics (empty: off).
	Addr string `yaml:"addr"`
}

// Load reads and strictly decodes a configuration file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse strictly decodes a configuration document.
func Parse(data []byte) (*File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if _, err := f.FsyncMode(); err != nil {
		return nil, fmt.Errorf("audit.fsync: %w", err)
	}
	if _, err := f.Redactor(); err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	if err := f.Cluster.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// FsyncMode parses audit.fsync (default interval).
func (f *File) FsyncMode() (audit.FsyncMode, error) {
	if f.Audit.Fsync == "" {
		return audit.FsyncInterval, nil
	}
	return audit.ParseFsyncMode(f.Audit.Fsync)
}

// Redactor builds the redactor the redaction section describes.
func (f *File) Redactor() (*redact.Redactor, error) {
	return redact.New(redact.Config{
		Paths:         f.Redaction.Paths,
		SecretKeys:    f.Redaction.SecretKeys,
		MaxFieldBytes: f.Redaction.MaxFieldBytes,
		Disable:       f.Redaction.Disable,
	})
}

// AuditEnabled reports whether the file asks for an audit log.
func (f *File) AuditEnabled() bool {
	if f.Audit.Enabled != nil {
		return *f.Audit.Enabled
	}
	return f.Audit.Path != "" || f.Audit.Dir != ""
}
