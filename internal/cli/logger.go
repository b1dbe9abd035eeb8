package cli

import (
	"io"
	"log/slog"

	"github.com/ahp-gateway/ahp/internal/loglimit"
)

// NewLogger returns the logger of a command that writes its logs to w: level is one of debug,
// info, warn or error (slog's names, with an optional offset such as warn+2), format text or json.
// Repeated lines are rate-limited (loglimit's defaults: 10 lines of one message and level per
// second, then one line saying how many were dropped), so one noisy client or a failing disk
// cannot flood the log. A bad value is a *ValueError about the -log-level or -log-format flag.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, BadValue("log-level", "-log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, BadValue("log-format", "-log-format: want text or json, got %q", format)
	}
	return slog.New(loglimit.New(h, loglimit.Options{})), nil
}
