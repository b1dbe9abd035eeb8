package audit

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/ahp-gateway/ahp/internal/redact"
)

// Chain seals records into a hash chain of their own, outside a Log, in the same line format
// (so Verify checks it): cluster mode publishes each replica's records to a NATS stream as one
// such chain per replica, which `audit export` writes back to files. Records are redacted as a
// Log redacts them (the event itself is never included). A Chain is not safe for concurrent use:
// its caller orders the records.
type Chain struct {
	seq      uint64
	prev     string
	h        hash.Hash
	redactor *redact.Redactor
	line     []byte
}

// NewChain continues the chain at head (a zero Head starts a new chain with a random genesis).
func NewChain(head Head, r *redact.Redactor) (*Chain, error) {
	if r == nil {
		var err error
		if r, err = redact.New(redact.Config{}); err != nil {
			return nil, err
		}
	}
	if head.Hash == "" {
		if head.Seq != 0 {
			return nil, errors.New("audit: a chain head with a seq needs its hash")
		}
		head.Hash = newGenesis()
	}
	return &Chain{seq: head.Seq, prev: head.Hash, h: sha256.New(), redactor: r}, nil
}

// Seal returns the sealed line of rec (with its newline; valid until the next Seal) and its
// place in the chain.
func (c *Chain) Seal(rec Record) (line []byte, head Head, err error) {
	if rec.Kind == "" {
		return nil, Head{}, errors.New("audit: record has no kind")
	}
	rec.Seq, rec.Prev, rec.Hash, rec.Event = 0, "", "", nil
	if rec.Time == "" {
		rec.Time = FormatTime(time.Now())
	}
	if rep := redactRecord(c.redactor, &rec); !rep.Empty() {
		ext := make(map[string]any, len(rec.Extensions)+1)
		for k, v := range rec.Extensions {
			ext[k] = v
		}
		ext[RedactionExtension] = rep
		rec.Extensions = ext
	}
	body, err := appendBody(make([]byte, 0, 512), &rec)
	if err != nil {
		return nil, Head{}, fmt.Errorf("audit: encoding the record: %w", err)
	}
	var h string
	c.line, h = appendLine(c.line[:0], c.h, c.seq+1, body, c.prev)
	c.seq, c.prev = c.seq+1, h
	return c.line, Head{Seq: c.seq, Hash: h}, nil
}

// HeadOf checks one sealed line (with or without its newline) and returns its place in its chain,
// for a chain to continue after it.
func HeadOf(line []byte) (Head, error) {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	info, p := parseLine(line)
	if p != nil {
		return Head{}, errors.New("audit: " + p.detail)
	}
	return Head{Seq: info.Seq, Hash: info.Hash}, nil
}
