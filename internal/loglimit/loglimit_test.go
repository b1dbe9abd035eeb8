package loglimit_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/loglimit"
)

// clock is a fake time source that moves only when told.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *clock                   { return &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func lines(b *bytes.Buffer) []string {
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}
func textHandler(b *bytes.Buffer) slog.Handler {
	return slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
}

func newLogger(b *bytes.Buffer, c *clock) *slog.Logger {
	return slog.New(loglimit.New(textHandler(b), loglimit.Options{Burst: 3, Interval: time.Second, Now: c.Now}))
}

func TestRepeatedLinesAreSuppressedAndCounted(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := newClock()
	log := newLogger(&out, c)
	for i := range 1000 {
		// Values differ per caller; the line is the same.
		log.Info("call refused", "client", i, "reason", "unauthenticated")
	}
	got := lines(&out)
	if len(got) != 3 {
		t.Fatalf("%d lines in the first second, want 3:\n%s", len(got), out.String())
	}
	c.advance(time.Second)
	out.Reset()
	log.Info("call refused", "client", 1000)
	got = lines(&out)
	want := []string{
		`level=INFO msg="repeated log lines suppressed" message="call refused" suppressed=997 interval=1s`,
		`level=INFO msg="call refused" client=1000`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the interval:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLevelsAndMessagesCountApart(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := newLogger(&out, newClock())
	for range 10 {
		log.Info("a")
		log.Error("a")
		log.Info("b")
	}
	if n := len(lines(&out)); n != 9 {
		t.Fatalf("%d lines, want 3 per (message, level):\n%s", n, out.String())
	}
}

func TestSummaryOfAFloodThatStoppedComesWithTheNextLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := newClock()
	log := newLogger(&out, c)
	for range 5 {
		log.Error("audit write failed", "error", "no space left on device")
	}
	c.advance(2 * time.Second)
	out.Reset()
	// The flood stopped; the next line, of another message, brings its summary.
	log.Info("audit log recovered")
	want := []string{
		`level=ERROR msg="repeated log lines suppressed" message="audit write failed" suppressed=2 interval=1s`,
		`level=INFO msg="audit log recovered"`,
	}
	if got := lines(&out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	// Reported once.
	out.Reset()
	c.advance(2 * time.Second)
	log.Info("audit log recovered")
	if got := lines(&out); len(got) != 1 {
		t.Fatalf("summary repeated:\n%s", out.String())
	}
}

func TestDerivedLoggersShareCounts(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := newLogger(&out, newClock())
	for i := range 10 {
		log.With("request", i).WithGroup("g").Warn("slow")
	}
	if n := len(lines(&out)); n != 3 {
		t.Fatalf("%d lines, want 3:\n%s", n, out.String())
	}
}

func TestEnabledFollowsTheWrappedHandler(t *testing.T) {
	t.Parallel()
	h := loglimit.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}), loglimit.Options{})
	if h.Enabled(t.Context(), slog.LevelInfo) || !h.Enabled(t.Context(), slog.LevelError) {
		t.Fatal("Enabled does not follow the wrapped handler's level")
	}
}
