// Package browsertest holds the browser test of planner serve's web page:
// headless Chromium, driven by chromedp, starts a scripted ReAct run from
// the page, watches its node light up and its Thought stream in, approves
// the tool call it waits for and sees the answer. It has no code besides
// its tests.
package browsertest
