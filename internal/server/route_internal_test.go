package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The short way to a service answers every request as the mux does.
func TestRouteServicesLikeMux(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(name + " " + r.URL.Path)) })
	}
	mux.Handle("/ahp.v1.InterceptService/", named("intercept"))
	mux.Handle("/ahp.v1.ObservationService/", named("observation"))
	mux.Handle("/", named("root"))
	routed := routeServices(mux, []string{"ahp.v1.InterceptService", "ahp.v1.ObservationService", "not.Registered"})
	if len(routed.prefixes) != 2 {
		t.Fatalf("routes %d service prefixes, want 2", len(routed.prefixes))
	}
	for _, target := range []string{
		"/ahp.v1.InterceptService/Intercept",
		"/ahp.v1.InterceptService/",
		"/ahp.v1.InterceptService/Intercept/",
		"/ahp.v1.InterceptService/a/b",
		"/ahp.v1.InterceptService//Intercept",
		"/ahp.v1.InterceptService/./Intercept",
		"/ahp.v1.InterceptService/../ahp.v1.ObservationService/Watch",
		"/ahp.v1.InterceptService/Inter%63ept",
		"/ahp.v1.InterceptService/Inter%2Fcept",
		"/ahp.v1.ObservationService/Watch",
		"/ahp.v1.InterceptServiceX/Intercept",
		"/not.Registered/M",
		"/",
		"/ui/",
	} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodPut, http.MethodOptions} {
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			mux.ServeHTTP(want, httptest.NewRequest(method, target, nil))
			routed.ServeHTTP(got, httptest.NewRequest(method, target, nil))
			if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Header().Get("Location") != want.Header().Get("Location") {
				t.Errorf("%s %s: routed %d %q, mux %d %q", method, target, got.Code, got.Body, want.Code, want.Body)
			}
		}
	}
}
