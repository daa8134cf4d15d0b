// Package nodekind is the contract of a node kind: the Node interface a
// graph node implements, the Spec it is declared with, the Env it is built
// in (its model, tools, base folder and templates), the Constructor a kind
// registers, the Registry that maps a `type:` to it, the prompt templates
// every kind renders, and the one function that runs a tool call for any
// node (ToolCall).
package nodekind
