package transport

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
)

// BodyRules say how ReadBody checks an HTTP request whose body is one JSON document.
type BodyRules struct {
	// Limit is the size limit of a body in bytes.
	Limit int
	// Usage completes the 405 text "method not allowed: …" ("use POST").
	Usage string
	// AcceptType reports whether a Content-Type header value (possibly empty) is acceptable.
	AcceptType func(contentType string) bool
	// TooLarge is the warning logged, with the limit, for a body over it.
	TooLarge string
	// Logger receives that warning and, at debug level, why a body could not be read.
	Logger *slog.Logger
}

// ReadBody reads the body of r after the checks every POST of one JSON document meets, in this
// order, answering w itself and returning ok == false when one fails:
//
//	405  a method other than POST (with "Allow: POST")
//	415  any Content-Encoding (bodies are never decompressed), or a Content-Type rules refuse
//	413  a body over rules.Limit bytes (by Content-Length, or while reading)
//	400  a body that could not be read
func ReadBody(w http.ResponseWriter, r *http.Request, rules BodyRules) (body []byte, ok bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: "+rules.Usage, http.StatusMethodNotAllowed)
		return nil, false
	}
	if r.Header.Get("Content-Encoding") != "" {
		http.Error(w, "unsupported Content-Encoding: send the body uncompressed", http.StatusUnsupportedMediaType)
		return nil, false
	}
	if !rules.AcceptType(r.Header.Get("Content-Type")) {
		http.Error(w, "unsupported media type: want Content-Type: application/json", http.StatusUnsupportedMediaType)
		return nil, false
	}
	limit := int64(rules.Limit)
	if r.ContentLength > limit {
		rules.tooLarge(w)
		return nil, false
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			rules.tooLarge(w)
			return nil, false
		}
		rules.Logger.Debug("request body unreadable", "error", err)
		http.Error(w, "request body could not be read", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

var (
	jsonContentType = []string{"application/json"}
	noSniff         = []string{"nosniff"}
)

// WriteJSON answers with status and body, a JSON document, and headers that keep a browser from
// reading it as anything else.
func WriteJSON(w http.ResponseWriter, status int, body []byte, log *slog.Logger) {
	h := w.Header()
	// The constant values are shared slices, assigned under the canonical keys as Set would
	// store them; net/http only reads them, and an Add would append to a copy (cap 1).
	h["Content-Type"] = jsonContentType
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		log.Debug("writing the answer failed", "error", err)
	}
}

func (rules BodyRules) tooLarge(w http.ResponseWriter) {
	rules.Logger.Warn(rules.TooLarge, "limit", rules.Limit)
	http.Error(w, "request body is over the "+strconv.Itoa(rules.Limit)+"-byte limit", http.StatusRequestEntityTooLarge)
}

// readAll reads body to its end. With a Content-Length (already checked against the limit) the
// body is read into one buffer of exactly that size, instead of the doubling io.ReadAll does
// from 512 bytes (two or three buffers for a typical message); net/http ends such a body after
// that many bytes and reports a shorter one as io.ErrUnexpectedEOF. The final read confirms the
// end, so a body that goes on is still refused by the MaxBytesReader.
func readAll(body io.Reader, contentLength int64) ([]byte, error) {
	if contentLength <= 0 {
		return io.ReadAll(body)
	}
	buf := make([]byte, contentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	var one [1]byte
	if n, err := body.Read(one[:]); n > 0 {
		return nil, errors.New("request body longer than its Content-Length")
	} else if err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}
