package cli

import (
	"io"
	"log/slog"
)

// NewLogger returns the logger of a command that writes its logs to w: level is one of debug,
// info, warn or error (slog's names, with an optional offset such as warn+2), format text or json.
// A bad value is a *ValueError about the -log-level or -log-format flag.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, BadValue("log-level", "-log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, BadValue("log-format", "-log-format: want text or json, got %q", format)
}
