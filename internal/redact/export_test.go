package redact

import "regexp"

// WithPanickingDetector returns a copy of r with one more detector that panics whenever it sees
// anchor, to exercise the fail-closed path.
func WithPanickingDetector(r *Redactor, anchor string) *Redactor {
	c := *r
	d := &detector{
		name:    "panics",
		anchors: []string{anchor},
		re:      regexp.MustCompile(`\A` + regexp.QuoteMeta(anchor)),
		valid:   func(string, int, int, int) bool { panic("detector bug") },
	}
	c.detectors = append(append([]*detector(nil), r.detectors...), d)
	c.placeholders = append(append([]string(nil), r.placeholders...), Placeholder(d.name))
	c.index()
	return &c
}
