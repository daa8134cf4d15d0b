// Package browsertest holds the browser test of planner serve's web page:
// headless Chromium, driven by chromedp, starts a scripted ReAct run from
// the page, watches its node light up and its Thought stream in, approves
// the tool call it waits for and sees the answer. It has no code besides
// its tests.
//
// The tests that drive Chromium are integration tests, built only with the
// build tag integration (go test -tags integration; make test sets it):
// they fail without a browser ($PLANNER_CHROMIUM, or chromium on PATH:
// apt-get install chromium). TestPageServed, which needs none, runs in
// every build.
package browsertest
