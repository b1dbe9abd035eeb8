// Package auditstream publishes a replica's audit records to a replicated NATS JetStream stream
// (config `audit.nats: true`), beside the replica's own audit log. Each replica publishes on its
// own subject (<prefix>.audit.<replica>) as a hash chain of its own (audit.Chain, the log's line
// format), continued across restarts from the last record the stream holds for it; each message
// carries the id <replica>-<seq>, so a publish retried after a lost acknowledgement is stored
// once (the stream's duplicate window). `ahp-server audit export` reads the stream back to one
// file per replica, which `audit verify` checks.
//
// With the audit log required, Publish waits for the stream's acknowledgement (bounded by
// AckTimeout) and fails when it does not come, so the decision fails closed; otherwise it
// returns once the record is handed to the connection, and failed acknowledgements are counted.
package auditstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamName is the stream's name without the installation prefix; SubjectPrefix the subjects'.
const (
	StreamName    = "audit"
	SubjectPrefix = "audit"
)

// Options configure the publisher.
type Options struct {
	// Redactor masks records as the audit log does (nil: defaults).
	Redactor *redact.Redactor
	// Required waits for each acknowledgement.
	Required bool
	// AckTimeout bounds the wait for an acknowledgement (default 2s).
	AckTimeout time.Duration
	// MaxBytes bounds the stream (default 1 GiB; the oldest records go first); MaxAge too
	// (default 30 days).
	MaxBytes int64
	MaxAge   time.Duration
}

// Publisher publishes one replica's records.
type Publisher struct {
	conn    *cluster.Conn
	js      jetstream.JetStream
	subject string
	opts    Options

	mu    sync.Mutex    // orders Seal and publish, so the stream holds the chain in order
	chain *audit.Chain  // nil until the stream is open
	ready chan struct{} // closed when chain is set

	published, failed atomic.Uint64
}

// Open creates or updates the stream and continues this replica's chain from its last record.
// With on_start_unavailable degrade and the stream not available (NATS not reachable yet), it
// returns at once a publisher whose records fail (counted; they are in the replica's own audit
// log) and opens the stream in the background when NATS comes; the chain continues from the
// stream's last record then.
func Open(ctx context.Context, conn *cluster.Conn, opts Options) (*Publisher, error) {
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = 2 * time.Second
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 30
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 30 * 24 * time.Hour
	}
	p := &Publisher{conn: conn, js: conn.JetStream(), subject: conn.Subject(SubjectPrefix + "." + conn.Name()), opts: opts,
		ready: make(chan struct{})}
	what := "audit stream " + conn.Bucket(StreamName)
	if conn.DegradeAtStart() && !conn.NATS().IsConnected() {
		conn.Attach(nil, what, cluster.ErrNotConnected, p.attach)
		return p, nil
	}
	if err := p.attach(ctx); err != nil {
		if !conn.DegradeAtStart() {
			return nil, err
		}
		conn.Attach(nil, what, err, p.attach)
	}
	return p, nil
}

// attach creates or updates the stream and continues the chain from its last record.
func (p *Publisher) attach(ctx context.Context) error {
	conn, opts := p.conn, p.opts
	st, err := conn.Stream(ctx, jetstream.StreamConfig{
		Name:        conn.Bucket(StreamName),
		Description: "ahp-server: every replica's audit records, one hash chain per replica",
		Subjects:    []string{conn.Subject(SubjectPrefix + ".*")},
		Storage:     jetstream.FileStorage,
		Replicas:    conn.Config().Replicas,
		MaxBytes:    opts.MaxBytes,
		MaxAge:      opts.MaxAge,
		Discard:     jetstream.DiscardOld,
		Duplicates:  2 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("cluster: audit stream %s: %w", conn.Bucket(StreamName), err)
	}
	head := audit.Head{}
	last, err := st.GetLastMsgForSubject(ctx, p.subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
	case err != nil:
		return fmt.Errorf("cluster: reading this replica's last audit record: %w", err)
	default:
		if head, err = audit.HeadOf(last.Data); err != nil {
			return fmt.Errorf("cluster: this replica's last audit record in the stream: %w", err)
		}
	}
	chain, err := audit.NewChain(head, opts.Redactor)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.chain = chain
	close(p.ready)
	p.mu.Unlock()
	return nil
}

// Ready is closed once the stream is open: at Open, or later after a start degraded.
func (p *Publisher) Ready() <-chan struct{} { return p.ready }

// Attached reports whether the stream is open (records are published).
func (p *Publisher) Attached() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chain != nil
}

// Publish seals rec into the replica's chain and publishes it. With Required it returns only
// once the stream acknowledged the record.
func (p *Publisher) Publish(rec audit.Record) error {
	p.mu.Lock()
	if p.chain == nil {
		p.mu.Unlock()
		p.failed.Add(1)
		p.conn.Failed(cluster.ErrNotAttached)
		return fmt.Errorf("audit stream: %w", cluster.ErrNotAttached)
	}
	line, head, err := p.chain.Seal(rec)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	data := append([]byte(nil), line...)
	id := fmt.Sprintf("%s-%d", p.conn.Name(), head.Seq)
	// Async under the lock: publishes leave in chain order; the wait for the ack is outside it.
	ack, err := p.js.PublishAsync(p.subject, data, jetstream.WithMsgID(id))
	p.mu.Unlock()
	if err != nil {
		p.failed.Add(1)
		p.conn.Failed(err)
		return fmt.Errorf("audit stream: %w", err)
	}
	if !p.opts.Required {
		p.published.Add(1)
		return nil
	}
	start := time.Now()
	timer := time.NewTimer(p.opts.AckTimeout)
	defer timer.Stop()
	select {
	case <-ack.Ok():
		p.conn.Took("audit", "publish", start)
		p.published.Add(1)
		p.conn.Succeeded()
		return nil
	case err := <-ack.Err():
		return p.retry(data, id, err)
	case <-timer.C:
		return p.retry(data, id, errors.New("no acknowledgement within the timeout"))
	}
}

// retry publishes a record whose acknowledgement failed once more, synchronously (the message id
// makes a copy that did arrive harmless).
func (p *Publisher) retry(data []byte, id string, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.AckTimeout)
	defer cancel()
	if _, err := p.js.Publish(ctx, p.subject, data, jetstream.WithMsgID(id)); err != nil {
		p.failed.Add(1)
		p.conn.Failed(err)
		return fmt.Errorf("audit stream did not acknowledge the record: %w (first try: %v)", err, cause)
	}
	p.published.Add(1)
	return nil
}

// Stats are counters for metrics.
type Stats struct {
	// Published counts records handed to (or, when required, acknowledged by) the stream; Failed
	// those that were not.
	Published, Failed uint64
}

// Stats returns the counters.
func (p *Publisher) Stats() Stats {
	return Stats{Published: p.published.Load(), Failed: p.failed.Load()}
}
