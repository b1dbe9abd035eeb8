package ndjson_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
)

// readAll drains r, rendering each oversize line as "<oversize head>".
func readAll(t *testing.T, r *ndjson.Reader) []string {
	t.Helper()
	var got []string
	for range 1000 {
		line, err := r.Next()
		var oe *ndjson.OversizeError
		switch {
		case errors.Is(err, io.EOF):
			return got
		case errors.As(err, &oe):
			got = append(got, "<oversize "+string(oe.Head)+">")
		case err != nil:
			t.Fatalf("Next: %v", err)
		default:
			got = append(got, string(line))
		}
	}
	t.Fatal("Next never returned io.EOF")
	return nil
}

func TestReaderFraming(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"lines", "a\nb\n", 0, []string{"a", "b"}},
		{"CR before LF is the Handler's business", "a\r\nb\r\n", 0, []string{"a\r", "b\r"}},
		{"blank lines skipped", "\n\n  \t\r\na\n \n\r\nb\n\n", 0, []string{"a", "b"}},
		{"unterminated last line", "a\nb", 0, []string{"a", "b"}},
		{"unterminated last line with CR", "a\r", 0, []string{"a\r"}},
		{"only blank", " \n\r\n\t", 0, nil},
		{"empty", "", 0, nil},
		{"inner CR kept", "a\rb\n", 0, []string{"a\rb"}},
		{"invalid UTF-8 passed on", "\xff\xfe{\n", 0, []string{"\xff\xfe{"}},
		{"exactly the limit", "12345\n", 5, []string{"12345"}},
		{"CR counts towards the limit", "1234\r\n12345\r\n", 5, []string{"1234\r", "<oversize 12345>"}},
		{"one over the limit", "123456\nok\n", 5, []string{"<oversize 12345>", "ok"}},
		{"over the limit at EOF", "ok\n123456", 5, []string{"ok", "<oversize 12345>"}},
		{"far over the limit, then a good line", strings.Repeat("x", 200_000) + "\n{}\n", 10, []string{"<oversize xxxxxxxxxx>", "{}"}},
	}
	for _, tc := range cases {
		got := readAll(t, ndjson.NewReader(strings.NewReader(tc.in), tc.limit))
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReaderLongLinesAcrossBuffers(t *testing.T) {
	t.Parallel()
	// Lines longer than the internal buffer, delivered a byte at a time and in big pieces.
	long := `{"id":"1","p":"` + strings.Repeat("y", 300_000) + `"}`
	in := long + "\n" + strings.Repeat("z", 700_000) + "\r\n" + long
	for _, src := range []io.Reader{strings.NewReader(in), iotest.HalfReader(strings.NewReader(in))} {
		got := readAll(t, ndjson.NewReader(src, 500_000))
		if len(got) != 3 || got[0] != long || got[2] != long || !strings.HasPrefix(got[1], `<oversize zzz`) || len(got[1]) != 500_000+len("<oversize >") {
			t.Fatalf("got %d lines, lengths %v", len(got), lens(got))
		}
	}
}

func lens(s []string) []int {
	var n []int
	for _, x := range s {
		n = append(n, len(x))
	}
	return n
}

func TestReaderResultsAreNotReused(t *testing.T) {
	t.Parallel()
	r := ndjson.NewReader(strings.NewReader("first\nsecond\n"), 0)
	a, _ := r.Next()
	b, _ := r.Next()
	if string(a) != "first" || string(b) != "second" {
		t.Fatalf("got %q, %q", a, b)
	}
}

func TestReaderReportsReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := ndjson.NewReader(io.MultiReader(strings.NewReader("ok\npartial"), iotest.ErrReader(boom)), 0)
	if line, err := r.Next(); err != nil || string(line) != "ok" {
		t.Fatalf("got %q, %v", line, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("a\r\n\nb\n"), 3)
	f.Add([]byte("{\"id\":1}\n\xff\n"), 0)
	f.Add([]byte(strings.Repeat("x", 70_000)+"\nok"), 100)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		limit = limit%1000 + 1
		if limit <= 0 {
			limit += 1000
		}
		r := ndjson.NewReader(bytes.NewReader(in), limit)
		for range len(in) + 1 {
			line, err := r.Next()
			var oe *ndjson.OversizeError
			switch {
			case errors.Is(err, io.EOF):
				return
			case errors.As(err, &oe):
				if len(oe.Head) != limit {
					t.Fatalf("oversize head of %d bytes, limit %d", len(oe.Head), limit)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if len(line) == 0 || len(line) > limit || bytes.IndexByte(line, '\n') >= 0 || len(bytes.Trim(line, " \t\r")) == 0 {
					t.Fatalf("bad line %q (limit %d)", line, limit)
				}
				if !bytes.Contains(in, line) {
					t.Fatalf("line %q is not from the input", line)
				}
			}
		}
		t.Fatal("no io.EOF")
	})
}
