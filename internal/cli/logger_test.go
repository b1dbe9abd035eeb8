package cli_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli"
)

func TestNewLogger(t *testing.T) {
	t.Parallel()
	cases := []struct {
		level, format string
		want          string // what an info line looks like; "" when info is below the level
	}{
		{"info", "text", "level=INFO msg=hello"},
		{"debug", "json", `"level":"INFO","msg":"hello"`},
		{"warn", "text", ""},
		{"INFO", "text", "level=INFO msg=hello"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		log, err := cli.NewLogger(&out, c.level, c.format)
		if err != nil {
			t.Errorf("%s %s: %v", c.level, c.format, err)
			continue
		}
		log.Info("hello")
		if c.want == "" && out.Len() != 0 {
			t.Errorf("%s %s: logged %q", c.level, c.format, out.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%s %s: logged %q, want %q", c.level, c.format, out.String(), c.want)
		}
	}
}

func TestNewLoggerRefusesBadValuesNamingTheFlag(t *testing.T) {
	t.Parallel()
	cases := []struct {
		level, format string
		flag, text    string
	}{
		{"loud", "text", "log-level", `-log-level: slog: level string "loud": unknown name`},
		{"", "text", "log-level", `-log-level: slog: level string "": unknown name`},
		{"info", "xml", "log-format", `-log-format: want text or json, got "xml"`},
	}
	for _, c := range cases {
		_, err := cli.NewLogger(&bytes.Buffer{}, c.level, c.format)
		var ve *cli.ValueError
		if !errors.As(err, &ve) {
			t.Errorf("%q %q: error %v is not a *cli.ValueError", c.level, c.format, err)
			continue
		}
		if ve.Flag != c.flag {
			t.Errorf("%q %q: flag %q, want %q", c.level, c.format, ve.Flag, c.flag)
		}
		if err.Error() != c.text {
			t.Errorf("%q %q: %q, want %q", c.level, c.format, err.Error(), c.text)
		}
	}
}

func TestNewLoggerRateLimitsRepeatedLines(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		log, err := cli.NewLogger(&out, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 1000 {
			log.Info("call refused", "client", i)
		}
		// Within one interval only the first lines pass (however slow the machine, 1000 lines
		// do not span a hundred intervals).
		if n := strings.Count(out.String(), "\n"); n >= 100 {
			t.Errorf("%s: %d of 1000 identical lines logged", format, n)
		}
	}
}
