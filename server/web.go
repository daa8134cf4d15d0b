package server

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
)

// webFiles is the web page: plain HTML, CSS and JavaScript, embedded so
// that the binary serves it with no build step and the page makes no
// outside request.
//
//go:embed web
var webFiles embed.FS

// webCSP is the page's Content-Security-Policy: its own scripts, styles
// and API only; no inline script or style, no frames, no outside origin.
const webCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// webRoot serves the page at GET / and its files at GET /assets/...; any
// other path it does not know is answered as a JSON 404, as the API's
// unknown routes are.
func (s *Server) webRoot() http.HandlerFunc {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the embedded folder exists: a build error otherwise
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic(err)
	}
	assets := http.FileServerFS(sub)
	return func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Path == "/" || r.URL.Path == "/index.html"
		asset := strings.HasPrefix(r.URL.Path, "/assets/")
		if (!page && !asset) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			s.fail(w, r, fmt.Errorf("%w: no route %s %s", ErrNotFound, r.Method, r.URL.Path))
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", webCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if page {
			s.writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", index)
			return
		}
		if _, err := fs.Stat(sub, strings.TrimPrefix(r.URL.Path, "/")); err != nil || strings.HasSuffix(r.URL.Path, "/") {
			s.fail(w, r, fmt.Errorf("%w: no file %s", ErrNotFound, r.URL.Path))
			return
		}
		assets.ServeHTTP(w, r)
	}
}
