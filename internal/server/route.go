package server

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// services routes a call to one of the Connect services straight to its handler, and everything
// else through the mux. http.ServeMux's matching took five allocations per call (issue 18) to
// find what a map of the few service paths finds in none. Only a request the mux would hand to
// the same handler unchanged takes the short way: a POST or GET whose path is clean (the mux
// would redirect it otherwise), unescaped, and under a service's "/package.Service/" prefix.
type services struct {
	mux      *http.ServeMux
	prefixes map[string]http.Handler // "/package.Service/" → the handler the mux has for it
}

// routeServices asks mux, once, for the handler of each service name's prefix.
func routeServices(mux *http.ServeMux, names []string) *services {
	s := &services{mux: mux, prefixes: map[string]http.Handler{}}
	for _, name := range names {
		prefix := "/" + name + "/"
		h, pattern := mux.Handler(&http.Request{Method: http.MethodPost, URL: &url.URL{Path: prefix}})
		if pattern == prefix {
			s.prefixes[prefix] = h
		}
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *services) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost || r.Method == http.MethodGet {
		p := r.URL.Path
		if i := strings.LastIndexByte(p, '/'); i > 0 && r.URL.RawPath == "" {
			if h, ok := s.prefixes[p[:i+1]]; ok && path.Clean(p) == p {
				growStack() // one growth here instead of several deep in the call
				h.ServeHTTP(w, r)
				return
			}
		}
	}
	s.mux.ServeHTTP(w, r)
}
