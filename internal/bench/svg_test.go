package bench

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

// svgElements parses an SVG document as XML and returns its path elements' d attributes and
// every text.
func svgElements(t *testing.T, doc []byte) (paths []string, texts []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	root := true
	var inText bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root {
				if el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg in the SVG namespace", el.Name)
				}
				root = false
			}
			inText = el.Name.Local == "text"
			if el.Name.Local == "path" {
				for _, a := range el.Attr {
					if a.Name.Local == "d" {
						paths = append(paths, a.Value)
					}
				}
			}
		case xml.CharData:
			if inText {
				texts = append(texts, string(el))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return paths, texts
}

func histogramOf(base time.Duration, n int) *Histogram {
	h := &Histogram{}
	for i := range n {
		h.Record(base + time.Duration(i%97)*base/10)
	}
	h.Record(50 * base) // a tail
	return h
}

func TestPercentileSVG(t *testing.T) {
	t.Parallel()
	series := []SVGSeries{
		{Label: "opa <peer>", Latency: histogramOf(300*time.Microsecond, 20000), Dashed: true},
		{Label: "intercept", Latency: histogramOf(200*time.Microsecond, 30000)},
		{Label: "bridge-http & co", Latency: histogramOf(250*time.Microsecond, 5000)},
		{Label: "empty", Latency: &Histogram{}},
	}
	var b bytes.Buffer
	if err := WritePercentileSVG(&b, "title", "machine & load", series); err != nil {
		t.Fatal(err)
	}
	paths, texts := svgElements(t, b.Bytes())
	if len(paths) != 3 {
		t.Fatalf("%d paths, want one per non-empty series (3)", len(paths))
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"opa <peer>", "intercept", "bridge-http & co", "no data", "99.9%", "99.99%", "machine & load"} {
		if !strings.Contains(all, want) {
			t.Errorf("texts lack %q: %s", want, all)
		}
	}
	for i, d := range paths {
		if !strings.HasPrefix(d, "M") || strings.Count(d, "L") < 100 {
			t.Errorf("path %d has too few points: %.80s…", i, d)
		}
	}
	if !strings.Contains(b.String(), `stroke-dasharray`) {
		t.Error("the peer is not drawn dashed")
	}
	if err := WritePercentileSVG(&b, "t", "", []SVGSeries{{Label: "x", Latency: &Histogram{}}}); err == nil {
		t.Error("a picture of nothing was drawn")
	}
}

func TestPercentileLabels(t *testing.T) {
	t.Parallel()
	for d, want := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		if got := percentileLabel(d); got != want {
			t.Errorf("percentileLabel(%d) = %q, want %q", d, got, want)
		}
	}
	for v, want := range map[float64]string{12: "12 µs", 250: "250 µs", 1000: "1 ms", 1500: "1.5 ms", 2e6: "2 s"} {
		if got := latencyLabel(v); got != want {
			t.Errorf("latencyLabel(%v) = %q, want %q", v, got, want)
		}
	}
}
