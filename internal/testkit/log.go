package testkit

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitTimeout bounds every wait of the kit; a wait that runs out fails the test. It is a bound
// against a hang, never a speed claim: generous, because the race detector on a loaded two-core
// machine has made whole bridge runs take over 10 s. It stays under the 30 s grace periods that
// some tests tell apart from it (drain_test.go).
const WaitTimeout = 25 * time.Second

// LogBuffer is a log sink safe for concurrent writers. A test reads what was written with String
// or blocks with WaitFor until a line it expects has been written: the log is its signal.
type LogBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

var _ io.Writer = (*LogBuffer)(nil)

// Write implements io.Writer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger returns a text logger at debug level that writes to b.
func (b *LogBuffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// WaitFor blocks until text occurs at least n times in what was written, and fails the test
// after WaitTimeout.
func (b *LogBuffer) WaitFor(t testing.TB, text string, n int) {
	t.Helper()
	timeout := time.NewTimer(WaitTimeout)
	defer timeout.Stop()
	for {
		b.mu.Lock()
		seen := strings.Count(b.buf.String(), text)
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		if seen >= n {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("log has %q %d times after %v, want %d; log:\n%s", text, seen, WaitTimeout, n, b.String())
		}
	}
}

// Discard returns a logger that drops everything.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// LockedWriter returns a writer that passes each Write to w under a lock, for sinks such as a
// bytes.Buffer that concurrent loggers share.
func LockedWriter(w io.Writer) io.Writer { return &lockedWriter{w: w} }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
