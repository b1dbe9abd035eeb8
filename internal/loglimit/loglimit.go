// Package loglimit holds a slog.Handler that rate-limits repeated log lines: per interval it
// passes the first lines of each message and level, drops the rest, and reports how many it
// dropped in one summary line. A client refused thousands of times a second, or a full disk
// failing every write, then costs a few lines a second instead of megabytes.
package loglimit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultBurst    = 10
	DefaultInterval = time.Second
)

// SummaryMessage is the message of the line that reports dropped lines; its attributes are
// "message" (the dropped lines' message), "suppressed" (how many) and "interval".
const SummaryMessage = "repeated log lines suppressed"

// Options configure a Handler; zero fields take the defaults.
type Options struct {
	// Burst is how many lines of one message and level pass per interval (default 10).
	Burst int
	// Interval is the length of a window (default 1 s).
	Interval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Handler passes the first Burst lines of each (message, level) per Interval to the handler it
// wraps and drops the others. Attribute values are not part of the key, so lines that differ only
// in their values (another client, another event id) count together. When lines were dropped, one
// line at the same level says how many: before the next line of that key that passes, or, once
// the window has ended, with the next line logged through the Handler. Handlers derived with
// WithAttrs and WithGroup share the counts. It is safe for concurrent use.
type Handler struct {
	inner slog.Handler
	st    *state
}

type key struct {
	level slog.Level
	msg   string
}

type window struct {
	start      time.Time
	passed     int
	suppressed int
	inner      slog.Handler // the handler of the last dropped line, for the summary
}

type state struct {
	opts Options

	mu        sync.Mutex
	windows   map[key]*window
	nextSweep time.Time
}

// New wraps inner.
func New(inner slog.Handler, opts Options) *Handler {
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Handler{inner: inner, st: &state{opts: opts, windows: make(map[key]*window)}}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs), st: h.st}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), st: h.st}
}

// summary is a due summary line.
type summary struct {
	key   key
	count int
	inner slog.Handler
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	now := h.st.opts.Now()
	pass, due := h.st.admit(key{r.Level, r.Message}, now, h.inner)
	for _, s := range due {
		sr := slog.NewRecord(now, s.key.level, SummaryMessage, 0)
		sr.AddAttrs(slog.String("message", s.key.msg), slog.Int("suppressed", s.count),
			slog.Duration("interval", h.st.opts.Interval))
		if err := s.inner.Handle(ctx, sr); err != nil {
			return err
		}
	}
	if !pass {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// admit counts one line of k and says whether it passes, and which summaries are due first:
// that of k when its window has ended, and, at most once per interval, those of every other
// key whose window has ended (windows without dropped lines are forgotten then).
func (s *state) admit(k key, now time.Time, inner slog.Handler) (pass bool, due []summary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[k]
	if w != nil && now.Sub(w.start) >= s.opts.Interval {
		if w.suppressed > 0 {
			due = append(due, summary{k, w.suppressed, w.inner})
		}
		w = nil
	}
	if w == nil {
		w = &window{start: now}
		s.windows[k] = w
	}
	if !now.Before(s.nextSweep) {
		s.nextSweep = now.Add(s.opts.Interval)
		for ok, ow := range s.windows {
			if ok == k || now.Sub(ow.start) < s.opts.Interval {
				continue
			}
			if ow.suppressed > 0 {
				due = append(due, summary{ok, ow.suppressed, ow.inner})
			}
			delete(s.windows, ok)
		}
	}
	if w.passed < s.opts.Burst {
		w.passed++
		return true, due
	}
	w.suppressed++
	w.inner = inner
	return false, due
}
