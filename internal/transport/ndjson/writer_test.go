package ndjson_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
)

func TestWriterLinesNeverInterleave(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := ndjson.NewWriter(&out)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			msg := fmt.Sprintf(`{"id":%d,"pad":"%s"}`, i, strings.Repeat("p", i*997))
			if err := w.WriteMessage([]byte(msg)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		var id int
		if _, err := fmt.Sscanf(sc.Text(), `{"id":%d,`, &id); err != nil {
			t.Fatalf("line %.40q: %v", sc.Text(), err)
		}
		if want := fmt.Sprintf(`{"id":%d,"pad":"%s"}`, id, strings.Repeat("p", id*997)); sc.Text() != want {
			t.Fatalf("line for id %d is mangled", id)
		}
		seen[sc.Text()] = true
	}
	if len(seen) != 50 {
		t.Fatalf("%d distinct lines, want 50", len(seen))
	}
}

func TestWriterCompactsMultiLineJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := ndjson.NewWriter(&out)
	// The escaped \n inside the string stays; the raw CR/LF between tokens goes.
	if err := w.WriteMessage([]byte("{\n  \"id\": 1,\r\n  \"text\": \"a\\nb\"\n}")); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{"id":1,"text":"a\nb"}`+"\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWriterRefusesMalformedReplies(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := ndjson.NewWriter(&out)
	for _, msg := range []string{"not\njson", "", "{\"a\":\n"} {
		if err := w.WriteMessage([]byte(msg)); !errors.Is(err, ndjson.ErrMalformedReply) {
			t.Errorf("%q: got %v, want ErrMalformedReply", msg, err)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %q", out.String())
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriterErrorsAreSticky(t *testing.T) {
	t.Parallel()
	boom := errors.New("broken pipe")
	w := ndjson.NewWriter(failingWriter{boom})
	for range 2 {
		if err := w.WriteMessage([]byte(`{}`)); !errors.Is(err, boom) {
			t.Fatalf("got %v, want %v", err, boom)
		}
	}
}
