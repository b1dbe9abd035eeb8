package bench

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// SVGSeries is one latency distribution of a picture.
type SVGSeries struct {
	// Label names the line in the legend.
	Label string
	// Latency is the distribution.
	Latency *Histogram
	// Dashed draws the line dashed: the baseline or the peer the others are compared with.
	Dashed bool
}

// The picture's geometry, in SVG user units.
const (
	svgWidth, svgHeight      = 960, 560
	svgLeft, svgRight        = 80, 250 // the legend sits in the right margin
	svgTop, svgBottom        = 56, 72
	svgPoints                = 240 // points per curve
	svgMaxDecades            = 6   // up to the 99.9999th percentile
	svgMinDecades            = 2
	svgMinLatencyMicrosecond = 1
)

// svgColours are the line colours, in turn (distinguishable in colour and in grey).
var svgColours = [...]string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// WritePercentileSVG draws the series as percentile curves: latency against percentile, both on
// log scales (the x axis is 1/(1-q), so 90, 99, 99.9 … % are equally spaced, as HdrHistogram
// plots them), one <path> per non-empty series, a legend with each series' p50/p99/p99.9/max.
// It needs nothing but the standard library.
func WritePercentileSVG(w io.Writer, title, subtitle string, series []SVGSeries) error {
	if len(series) == 0 {
		return errors.New("no series to draw")
	}
	var maxCount uint64
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		if s.Latency == nil || s.Latency.Count() == 0 {
			continue
		}
		maxCount = max(maxCount, s.Latency.Count())
		lo = math.Min(lo, math.Max(us(s.Latency.Min()), svgMinLatencyMicrosecond))
		hi = math.Max(hi, math.Max(us(s.Latency.Max()), svgMinLatencyMicrosecond))
	}
	if maxCount == 0 {
		return errors.New("every series is empty")
	}
	decades := int(math.Ceil(math.Log10(float64(maxCount))))
	decades = min(max(decades, svgMinDecades), svgMaxDecades)
	yLo := math.Floor(math.Log10(lo))
	yHi := math.Max(math.Ceil(math.Log10(hi)), yLo+1)
	plotW := float64(svgWidth - svgLeft - svgRight)
	plotH := float64(svgHeight - svgTop - svgBottom)
	px := func(decade float64) float64 { return svgLeft + decade/float64(decades)*plotW }
	py := func(micros float64) float64 {
		v := math.Log10(math.Max(micros, math.Pow(10, yLo)))
		return svgTop + (yHi-v)/(yHi-yLo)*plotH
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", svgLeft, esc(title))
	if subtitle != "" {
		fmt.Fprintf(&b, `<text x="%d" y="42" fill="#555555">%s</text>`+"\n", svgLeft, esc(subtitle))
	}
	// Grid and axes: vertical lines at 0, 90, 99, … %, horizontal ones at each decade of latency.
	b.WriteString(`<g stroke="#dddddd" stroke-width="1">` + "\n")
	for d := 0; d <= decades; d++ {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", px(float64(d)), svgTop, px(float64(d)), svgHeight-svgBottom)
	}
	for e := yLo; e <= yHi; e++ {
		y := py(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", svgLeft, y, svgWidth-svgRight, y)
	}
	b.WriteString("</g>\n")
	for d := 0; d <= decades; d++ {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(float64(d)), svgHeight-svgBottom+18, percentileLabel(d))
	}
	for e := yLo; e <= yHi; e++ {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", svgLeft-6, py(math.Pow(10, e)), latencyLabel(math.Pow(10, e)))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">percentile (log scale of 1/(1−q))</text>`+"\n", px(float64(decades)/2), svgHeight-svgBottom+44)
	fmt.Fprintf(&b, `<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">latency (log scale)</text>`+"\n", svgTop+plotH/2, svgTop+plotH/2)

	// One path per series.
	for i, s := range series {
		if s.Latency == nil || s.Latency.Count() == 0 {
			continue
		}
		colour := svgColours[i%len(svgColours)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="8 5"`
		}
		fmt.Fprintf(&b, `<path fill="none" stroke="%s" stroke-width="2"%s d="`, colour, dash)
		n := float64(s.Latency.Count())
		last := math.Log10(n) // beyond q = 1-1/n there is only the maximum
		for k := 0; k <= svgPoints; k++ {
			d := float64(k) / svgPoints * float64(decades)
			var v float64
			if d >= last {
				v = us(s.Latency.Max())
				d = math.Min(d, last)
			} else {
				v = us(s.Latency.Quantile(1 - math.Pow(10, -d)))
			}
			cmd := "L"
			if k == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&b, "%s%.1f,%.1f ", cmd, px(d), py(v))
			if d == last {
				break
			}
		}
		b.WriteString("\"/>\n")
	}
	// Legend.
	lx := float64(svgWidth - svgRight + 16)
	for i, s := range series {
		y := float64(svgTop + 10 + i*58)
		colour := svgColours[i%len(svgColours)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="8 5"`
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", lx, y, lx+28, y, colour, dash)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", lx+36, y, esc(s.Label))
		if s.Latency == nil || s.Latency.Count() == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555555">no data</text>`+"\n", lx+36, y+16)
			continue
		}
		h := s.Latency
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555555">p50 %s · p99 %s</text>`+"\n", lx+36, y+16,
			latencyLabel(us(h.Quantile(0.5))), latencyLabel(us(h.Quantile(0.99))))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555555">p99.9 %s · max %s</text>`+"\n", lx+36, y+30,
			latencyLabel(us(h.Quantile(0.999))), latencyLabel(us(h.Max())))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// percentileLabel names the d-th decade of the x axis: 0 %, 90 %, 99 %, 99.9 % …
func percentileLabel(d int) string {
	if d == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.*f", max(d-2, 0), 100-100*math.Pow(10, -float64(d))) + "%"
}

// latencyLabel formats a latency in µs with a unit that keeps it short.
func latencyLabel(micros float64) string {
	switch {
	case micros >= 1e6:
		return trimFloat(micros/1e6) + " s"
	case micros >= 1e3:
		return trimFloat(micros/1e3) + " ms"
	}
	return trimFloat(micros) + " µs"
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	if v >= 100 {
		s = fmt.Sprintf("%.0f", v)
	} else if v >= 10 {
		s = fmt.Sprintf("%.1f", v)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// WriteSVG draws the latency of every target, OPA dashed as the peer.
func (r *CompareReport) WriteSVG(w io.Writer) error {
	if len(r.hists) != len(r.Results) {
		return errors.New("the report holds no latency distributions (it was not made by Compare)")
	}
	var series []SVGSeries
	for i, res := range r.Results {
		series = append(series, SVGSeries{Label: res.Target, Latency: r.hists[i], Dashed: res.Target == TargetOPA})
	}
	return WritePercentileSVG(w, "ahp-server vs OPA: latency by percentile", r.describeLoad(), series)
}

func (r *CompareReport) describeLoad() string {
	if len(r.Results) == 0 {
		return ""
	}
	res := r.Results[0]
	load := fmt.Sprintf("closed loop, %d connections", res.Concurrency)
	if res.Rate > 0 {
		load = fmt.Sprintf("open loop %g req/s, %d workers", res.Rate, res.Concurrency)
	}
	return fmt.Sprintf("%d rules, %s, %.0f s per target, %d round(s); %d CPUs, load average %s → %s",
		r.Rules, load, res.ElapsedSeconds, r.Rounds, r.Machine.NumCPU, r.Machine.LoadBefore, r.Machine.LoadAfter)
}

// WriteSVG draws the run's latency and, dashed beside it, the baseline's.
func (r *Report) WriteSVG(w io.Writer) error {
	if len(r.hists) == 0 {
		return errors.New("the report holds no latency distribution (it was not made by Run)")
	}
	series := []SVGSeries{{Label: r.Run.Mode, Latency: r.hists[0]}}
	if r.Baseline != nil && len(r.hists) > 1 {
		series = append(series, SVGSeries{Label: r.Baseline.Mode, Latency: r.hists[1], Dashed: true})
	}
	load := fmt.Sprintf("closed loop, concurrency %d", r.Run.Concurrency)
	if r.Run.Rate > 0 {
		load = fmt.Sprintf("open loop %g req/s, concurrency %d", r.Run.Rate, r.Run.Concurrency)
	}
	return WritePercentileSVG(w, "ahp-bench: latency by percentile", fmt.Sprintf("%s, %d round(s); %d CPUs, load average %s → %s",
		load, r.Rounds, r.Machine.NumCPU, r.Machine.LoadBefore, r.Machine.LoadAfter), series)
}
