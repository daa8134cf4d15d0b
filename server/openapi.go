package server

import (
	"net/http"
)

// obj is a JSON object of the OpenAPI document.
type obj = map[string]any

// ref points at a schema of components.schemas.
func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// str, integer, boolean and arr are schema shorthands.
func str(desc string) obj     { return obj{"type": "string", "description": desc} }
func integer(desc string) obj { return obj{"type": "integer", "description": desc} }
func boolean(desc string) obj { return obj{"type": "boolean", "description": desc} }
func arr(items obj) obj       { return obj{"type": "array", "items": items} }
func object(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// jsonBody is a JSON request or response body of schema.
func jsonBody(desc string, schema obj) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

// errResp is an error response.
func errResp(desc string) obj { return jsonBody(desc, ref("Error")) }

// op is one operation; responses get the common error responses added.
func op(id, summary string, params []obj, body obj, responses obj) obj {
	o := obj{"operationId": id, "summary": summary, "responses": responses}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if body != nil {
		o["requestBody"] = body
	}
	responses["401"] = errResp("missing or wrong bearer token (servers with a token)")
	responses["403"] = errResp("cross-origin state-changing request, or a non-loopback Host without a token")
	return o
}

func pathParam(name, desc string) obj {
	return obj{"name": name, "in": "path", "required": true, "description": desc, "schema": obj{"type": "string"}}
}

func queryParam(name, desc string, schema obj) obj {
	return obj{"name": name, "in": "query", "required": false, "description": desc, "schema": schema}
}

// openAPIDoc is the OpenAPI 3.1 document of the API.
func openAPIDoc() obj {
	accepted := obj{"202": jsonBody("the run started; follow it at events", ref("Accepted"))}
	runStarted := func() obj {
		r := obj{}
		for k, v := range accepted {
			r[k] = v
		}
		r["400"] = errResp("bad input (wrong types, unknown fields, bad model spec, bad thread name)")
		r["404"] = errResp("no such pipeline or thread")
		r["409"] = errResp("the thread exists, is running, or is not waiting")
		r["413"] = errResp("body over the server's limit")
		r["422"] = errResp("the pipeline is invalid (file:line)")
		r["429"] = errResp("too many runs at once")
		r["503"] = errResp("the server is shutting down, or cannot build the run's model (code model_unavailable: the API key's environment variable, named in the message, is not set on the server)")
		return r
	}
	schemas := obj{
		"Error": object(obj{"error": object(obj{
			"code":    obj{"type": "string", "enum": []string{"bad_request", "invalid_config", "unauthorized", "forbidden", "not_found", "conflict", "too_large", "busy", "shutting_down", "timeout", "model_unavailable", "internal"}},
			"message": str("what went wrong, scrubbed of secrets"),
			"details": obj{"description": "structured details: {\"field\": NAME} for a bad field"},
		}, "code", "message")}, "error"),
		"NodeInfo": object(obj{"id": str("node id"), "type": str("node type")}, "id", "type"),
		"PipelineInfo": object(obj{
			"name": str("the pipeline's name"), "file": str("file name in the configs folder"), "description": str("its description"),
			"paradigm": str("node types joined by +"), "nodes": arr(ref("NodeInfo")), "error": str("file:line: why it does not load"),
		}, "name", "file"),
		"Problem": object(obj{"file": str("file name"), "line": integer("1-based line"), "key": str("dotted key"), "message": str("file:line: message")}, "file", "message"),
		"ValidateResult": object(obj{
			"ok": boolean("valid"), "name": str("pipeline name"), "nodes": arr(ref("NodeInfo")),
			"cycles": arr(arr(obj{"type": "string"})), "errors": arr(ref("Problem")),
		}, "ok"),
		"ValidateRequest": object(obj{"yaml": str("the pipeline YAML"), "file": str("file name for messages (default pipeline.yaml)")}, "yaml"),
		"RunRequest": object(obj{
			"config":    str("a pipeline of the configs folder: name or file name"),
			"question":  str("the task; required unless task is given"),
			"suite":     str("suite of task: demo (default) or a file under the server's root; without task, the question is matched against its questions (a match runs as that task). The sim model plays only suite tasks with a gold solution: any other question is refused (400)"),
			"task":      str("a task id of suite"),
			"llm":       str("model spec as --llm: sim, scripted:FILE, openai:gpt-4o-mini"),
			"thread":    str("thread name (new); default generated"),
			"max_steps": integer("overrides limits.max_steps"),
			"timeout":   str("overrides limits.timeout (Go duration)"),
			"vars":      obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "the run's vars when it starts ({{.Vars.NAME}})"},
		}, "config"),
		"Accepted": object(obj{"run_id": str("the run's id"), "thread": str("its thread"), "events": str("path of its event stream"), "model": ref("ModelInfo")}, "run_id", "thread", "events", "model"),
		"ModelInfo": object(obj{"spec": str("model spec the run was started with; empty for the pipeline's own llm block"), "provider": str("provider"),
			"kind":    obj{"type": "string", "enum": []string{"real", "scripted", "replayed", "simulated"}},
			"offline": boolean("no real language model: scripted, replayed or simulated"),
			"mark":    obj{"type": "string", "enum": []string{"SIMULATED", "SCRIPTED", "REPLAYED"}, "description": "the kind in capitals, for offline models only: shown on every run"},
			"label":   str("what planner run prints after model:"),
		}, "kind", "offline", "label"),
		"ReportTable": object(obj{"banner": str("what produced the numbers"),
			"columns": arr(object(obj{"column": str("header"), "field": str("report.json field under configs[i]"), "meaning": str("what it is, with its unit")}, "column", "field", "meaning")),
			"rows":    arr(arr(obj{"type": "string"})), "notes": arr(obj{"type": "string"}),
		}, "banner", "columns", "rows", "notes"),
		"Usage":    obj{"type": "object", "description": "model calls, attempts, tokens, cost and tool calls, in total and per node (per_node)", "additionalProperties": true},
		"Approval": object(obj{"node": str("node id"), "tool": str("tool name"), "input": str("the tool's input")}, "tool", "input"),
		"RunView": object(obj{
			"id": str("run id"), "thread": str("thread"), "pipeline": str("config file"), "llm": str("model spec"), "model": ref("ModelInfo"),
			"kind":     obj{"type": "string", "enum": []string{KindStart, KindResume, KindFork, KindApprove, KindTurn}},
			"question": str("the task"),
			"status":   obj{"type": "string", "enum": []string{StatusQueued, "running", "done", "waiting", "interrupted", "failed"}},
			"created":  obj{"type": "string", "format": "date-time"}, "started": obj{"type": "string", "format": "date-time"},
			"ended": obj{"type": "string", "format": "date-time"}, "duration_ms": obj{"type": "number"},
			"answer": str("final answer"), "complete": boolean("a complete answer"), "reason": str("why incomplete"),
			"failure": str("failure kind"), "error": str("why the run failed"), "usage": ref("Usage"),
			"steps": arr(obj{"type": "string"}), "pending": ref("Approval"),
			"replayed": integer("calls answered from the journal"), "live": integer("calls made live"),
			"events": integer("events so far"), "last_seq": integer("the last event's seq"),
		}, "id", "thread", "status", "kind", "model", "created", "complete", "events", "last_seq"),
		"TraceEvent": obj{"type": "object", "description": "a trace.Event: run_id, seq, time, node, kind, text, data, usage, elapsed_ms", "properties": obj{
			"run_id": str("run id"), "seq": integer("1, 2, ... per run; the SSE id"), "time": obj{"type": "string", "format": "date-time"},
			"node": str("node id"), "kind": str("event kind (run_start, node_start, thought, action, observation, answer, ...)"),
			"text": str("text"), "data": obj{"type": "object"}, "usage": obj{"type": "object"}, "elapsed_ms": obj{"type": "number"},
		}, "required": []string{"run_id", "seq", "time", "kind"}},
		"Thread": obj{"type": "object", "description": "a thread of the journal store with its live status", "properties": obj{
			"name": str("thread name"), "pipeline": str("config path"), "status": obj{"type": "string", "enum": []string{"running", "interrupted", "waiting", "done", "failed"}},
			"pending": ref("Approval"), "error": str("why it failed or stopped"), "parent": str("forked from"), "forked_at": integer("checkpoint it was forked at"),
			"entries": integer("journal entries"), "steps": integer("node transitions"), "model_calls": integer("model calls"), "tool_calls": integer("tool calls"),
			"created": obj{"type": "string", "format": "date-time"}, "updated": obj{"type": "string", "format": "date-time"},
			"question": str("its task"), "config": str("config file"), "llm": str("model spec"), "suite": str("suite"), "task_id": str("task id"),
			"run_id": str("this server's run of it, while one runs"),
		}, "required": []string{"name", "pipeline", "status"}},
		"Checkpoint": object(obj{"n": integer("checkpoint number"), "time": obj{"type": "string", "format": "date-time"}, "kind": str("node, model, tool or approval"),
			"node": str("node"), "scope": str("scope"), "summary": str("one line, scrubbed")}, "n", "kind", "summary"),
		"TurnRequest": object(obj{"question": str("the follow-up question")}, "question"),
		"ForkRequest": object(obj{"from": integer("checkpoint to fork from (0: the start)"), "as": str("new thread's name"), "resume": boolean("run it at once (default true)")}, "from", "as"),
		"ApprovalView": object(obj{"thread": str("waiting thread"), "pipeline": str("its pipeline"), "question": str("its task"), "node": str("node"),
			"tool": str("tool"), "input": str("input"), "since": obj{"type": "string", "format": "date-time"}}, "thread", "tool", "input"),
		"DecisionRequest": object(obj{"approve": boolean("run the call (true) or deny it"), "reason": str("why denied; shown to the model"), "by": str("who decided (default api)")}, "approve"),
		"CompareRequest": object(obj{
			"suite": str("demo or a suite file under the server's root"), "configs": arr(obj{"type": "string"}), "llm": str("model spec"),
			"concurrency": integer("runs in flight, 1 to 64 (default 4)"), "limit": integer("first N tasks"), "seed": integer("seed (default 1)"), "timeout": str("per run (Go duration)"), "repeats": integer("runs of each config on each task, repeat r with seed + r, 1 to 20 (default 1)"),
		}, "suite", "configs"),
		"ConfigProgress": object(obj{"config": str("pipeline name"), "done": integer("finished runs"), "correct": integer("judged correct"), "failed": integer("failed")}, "config", "done"),
		"CompareView": object(obj{
			"id": str("comparison id"), "status": obj{"type": "string", "enum": []string{"running", "done", "failed", "interrupted"}}, "dir": str("run folder"),
			"suite": str("suite"), "configs": arr(obj{"type": "string"}), "model": str("model spec"), "seed": integer("seed"),
			"done": integer("finished runs"), "total": integer("runs in all"), "per_config": arr(ref("ConfigProgress")),
			"started": obj{"type": "string", "format": "date-time"}, "ended": obj{"type": "string", "format": "date-time"},
			"error": str("why it failed"), "report": str("report path once done"),
		}, "id", "status", "done", "total", "per_config"),
		"TaskGrid": obj{"type": "object", "description": "the per-task grid of a comparison (package eval/viewer's Data): tasks are the rows in suite order, columns one per config, " +
			"runs the results stored so far (task and column index the two lists; events left out: fetch them with runs[].trace)", "properties": obj{
			"title": str("what the grid shows"), "banner": str("what produced the numbers: SIMULATED, SCRIPTED or the model"),
			"tasks":   arr(object(obj{"id": str("task id"), "question": str("the task"), "reference": str("expected answer")}, "id", "question")),
			"columns": arr(object(obj{"config": str("pipeline name"), "model": str("model spec"), "label": str("column header")}, "config", "label")),
			"runs": arr(obj{"type": "object", "properties": obj{
				"task": integer("index into tasks"), "column": integer("index into columns"), "repeat": integer("repeat of the cell (0, 1, ...)"),
				"answer": str("final answer"), "scored": boolean("judged"), "correct": boolean("judged correct"), "failure": str("failure kind"),
				"cost_usd": obj{"type": "number"}, "latency_ms": obj{"type": "number"}, "model_calls": integer("model calls"), "tool_calls": integer("tool calls"),
				"scores": obj{"type": "object", "additionalProperties": obj{"type": "number"}},
				"trace":  str("the run's trace reference for GET /api/compares/{id}/trace (traces/<model>/<config>.jsonl:<first>-<last>); empty without traces"),
				"events": arr(ref("TraceEvent")),
			}, "required": []string{"task", "column", "repeat", "answer", "scored", "correct"}}),
		}, "required": []string{"title", "banner", "tasks", "columns", "runs"}},
		"CompareReport": obj{"type": "object", "description": "report.json as eval/compare writes it: banner, model, suite, configs[] with success_rate, em, f1, tokens, cost, latency, failures, recovered, columns", "additionalProperties": true},
	}
	id := pathParam("id", "run id")
	name := pathParam("name", "thread name")
	paths := obj{
		"/healthz": obj{"get": op("healthz", "Liveness: ok, or stopping (503)", nil, nil, obj{
			"200": jsonBody("ok", object(obj{"status": str("ok"), "runs_active": integer("runs running or queued")})),
			"503": jsonBody("stopping", object(obj{"status": str("stopping"), "runs_active": integer("runs")})),
		})},
		"/openapi.json": obj{"get": op("openapi", "This document", nil, nil, obj{"200": jsonBody("the OpenAPI 3.1 document", obj{"type": "object"})})},
		"/api/pipelines": obj{"get": op("listPipelines", "The configs of the folder", nil, nil, obj{
			"200": jsonBody("the configs, and the server's default model (absent when runs use each pipeline's own llm block)",
				object(obj{"dir": str("configs folder"), "pipelines": arr(ref("PipelineInfo")), "model": ref("ModelInfo")})),
		})},
		"/api/pipelines/validate": obj{"post": op("validatePipeline", "Validate a posted pipeline YAML (body as application/yaml, ?file= names it; or JSON {yaml, file}) "+
			"as a file of the configs folder: every file or folder it names must lie under the server's root, and its ${VAR} read only the server's allow-list",
			[]obj{queryParam("file", "file name used in messages (raw YAML bodies)", obj{"type": "string"})},
			obj{"required": true, "content": obj{"application/yaml": obj{"schema": obj{"type": "string"}}, "application/json": obj{"schema": ref("ValidateRequest")}}},
			obj{"200": jsonBody("ok, or the problems at their lines", ref("ValidateResult")), "400": errResp("no YAML, bad file name"), "413": errResp("body too large"),
				"429": errResp("too many validations at once"), "503": errResp("the server is shutting down"), "504": errResp("the validation took longer than the server's limit")})},
		"/api/pipelines/{name}/graph": obj{"get": op("pipelineGraph", "Draw a pipeline's graph",
			[]obj{pathParam("name", "pipeline name or file name"), queryParam("format", "svg (default), mermaid, dot or json", obj{"type": "string", "enum": []string{"svg", "mermaid", "dot", "json"}})}, nil,
			obj{"200": obj{"description": "the graph", "content": obj{"image/svg+xml": obj{"schema": obj{"type": "string"}}, "text/plain": obj{"schema": obj{"type": "string"}}, "application/json": obj{"schema": obj{"type": "object"}}}},
				"400": errResp("bad format or name"), "404": errResp("no such pipeline"), "422": errResp("invalid pipeline")})},
		"/api/runs": obj{
			"post": op("startRun", "Start a run (always journaled as a thread)", nil, obj{"required": true, "content": obj{"application/json": obj{"schema": ref("RunRequest")}}}, runStarted()),
			"get": op("listRuns", "The runs of this process, newest first", []obj{queryParam("status", "only runs with this status", obj{"type": "string"})}, nil,
				obj{"200": jsonBody("runs", object(obj{"runs": arr(ref("RunView"))}))}),
		},
		"/api/runs/{id}": obj{"get": op("getRun", "A run: status, answer, usage per node, steps", []obj{id}, nil,
			obj{"200": jsonBody("the run", ref("RunView")), "404": errResp("no such run")})},
		"/api/runs/{id}/events": obj{"get": op("runEvents", "The run's events as Server-Sent Events: id = seq, event = kind, data = the event; replay then live; ends with event: end (data: the run); event: gap announces events dropped from memory",
			[]obj{id, {"name": "Last-Event-ID", "in": "header", "required": false, "description": "resume after this seq", "schema": obj{"type": "string"}},
				queryParam("after", "resume after this seq (when there is no Last-Event-ID)", obj{"type": "integer", "minimum": 0})}, nil,
			obj{"200": obj{"description": "the event stream", "content": obj{"text/event-stream": obj{"schema": obj{"type": "string"}, "x-event-data": ref("TraceEvent")}}},
				"400": errResp("bad Last-Event-ID or after"), "404": errResp("no such run"), "429": errResp("too many streams")})},
		"/api/runs/{id}/cancel": obj{"post": op("cancelRun", "Cancel a run; its thread is saved as interrupted and resumes later", []obj{id}, nil,
			obj{"202": jsonBody("cancelling", ref("RunView")), "404": errResp("no such run"), "409": errResp("the run has ended")})},
		"/api/threads": obj{"get": op("listThreads", "Every thread of the store, most recently updated first", []obj{queryParam("status", "only threads with this status", obj{"type": "string"})}, nil,
			obj{"200": jsonBody("threads", object(obj{"threads": arr(ref("Thread"))}))})},
		"/api/threads/{name}": obj{"get": op("getThread", "A thread with its history", []obj{name}, nil,
			obj{"200": jsonBody("the thread", object(obj{"thread": ref("Thread"), "history": arr(ref("Checkpoint"))})), "400": errResp("bad name"), "404": errResp("no such thread")})},
		"/api/threads/{name}/resume": obj{"post": op("resumeThread", "Resume a thread (body empty or {})", []obj{name},
			obj{"required": false, "content": obj{"application/json": obj{"schema": object(obj{})}}}, runStarted())},
		"/api/threads/{name}/fork": obj{"post": op("forkThread", "Fork a thread from a checkpoint into a new one, and run it", []obj{name},
			obj{"required": true, "content": obj{"application/json": obj{"schema": ref("ForkRequest")}}},
			func() obj {
				r := runStarted()
				r["201"] = jsonBody("forked, not run (resume: false)", object(obj{"thread": ref("Thread")}))
				return r
			}())},
		"/api/threads/{name}/turns": obj{"post": op("addTurn", "Ask a follow-up on a finished thread: it runs as the conversation's next turn (thread NAME.turnN), seeing the earlier turns' questions and answers", []obj{name},
			obj{"required": true, "content": obj{"application/json": obj{"schema": ref("TurnRequest")}}}, runStarted())},
		"/api/approvals": obj{"get": op("listApprovals", "Tool calls waiting for a decision, across threads", nil, nil,
			obj{"200": jsonBody("waiting calls", object(obj{"approvals": arr(ref("ApprovalView"))}))})},
		"/api/approvals/{thread}": obj{"post": op("decide", "Approve or deny the call a thread waits for; the thread resumes in a new run", []obj{pathParam("thread", "waiting thread")},
			obj{"required": true, "content": obj{"application/json": obj{"schema": ref("DecisionRequest")}}}, runStarted())},
		"/api/compares": obj{
			"post": op("startCompare", "Start a comparison", nil, obj{"required": true, "content": obj{"application/json": obj{"schema": ref("CompareRequest")}}},
				obj{"202": jsonBody("started", object(obj{"id": str("comparison id"), "dir": str("run folder")}, "id", "dir")),
					"400": errResp("bad input"), "404": errResp("no such pipeline"), "409": errResp("a comparison runs in the same folder"),
					"413": errResp("body too large"), "429": errResp("too many comparisons")}),
			"get": op("listCompares", "The comparisons of this process", nil, nil, obj{"200": jsonBody("comparisons", object(obj{"compares": arr(ref("CompareView"))}))}),
		},
		"/api/compares/{id}": obj{"get": op("getCompare", "A comparison's progress", []obj{pathParam("id", "comparison id")}, nil,
			obj{"200": jsonBody("progress", ref("CompareView")), "404": errResp("no such comparison")})},
		"/api/compares/{id}/report": obj{"get": op("compareReport", "A finished comparison's report",
			[]obj{pathParam("id", "comparison id"), queryParam("format", "json (default), md, html, or table (report.md's table as JSON: ReportTable)", obj{"type": "string", "enum": []string{"json", "md", "html", "table"}})}, nil,
			obj{"200": obj{"description": "the report", "content": obj{"application/json": obj{"schema": obj{"oneOf": []obj{ref("CompareReport"), ref("ReportTable")}}}, "text/markdown": obj{"schema": obj{"type": "string"}}, "text/html": obj{"schema": obj{"type": "string"}}}},
				"400": errResp("bad format"), "404": errResp("no such comparison"), "409": errResp("not finished")})},
		"/api/compares/{id}/tasks": obj{"get": op("compareTasks", "A comparison's per-task grid: every task against every config, from the results stored so far (running or finished)",
			[]obj{pathParam("id", "comparison id")}, nil,
			obj{"200": jsonBody("the grid", ref("TaskGrid")), "404": errResp("no such comparison")})},
		"/api/compares/{id}/trace": obj{"get": op("compareTrace", "The events of one run of a comparison, read from its run folder's traces/ (at most 5000 lines and 16 MiB)",
			[]obj{pathParam("id", "comparison id"), {"name": "ref", "in": "query", "required": true, "description": "the run's trace reference from the grid (runs[].trace): traces/<model>/<config>.jsonl:<first>-<last>", "schema": obj{"type": "string"}}}, nil,
			obj{"200": jsonBody("the run's events", object(obj{"ref": str("the reference"), "events": arr(ref("TraceEvent"))}, "ref", "events")),
				"400": errResp("no ref, a ref outside the run folder's traces/ ('..', absolute), lines the file does not have, or a range over the limits"),
				"404": errResp("no such comparison")})},
		"/v1/models": obj{"get": op("listModels", "OpenAI-compatible: the pipelines that load, as models (id = pipeline name)", nil, nil, obj{
			"200": jsonBody("the models", object(obj{"object": str("list"), "data": arr(object(obj{"id": str("pipeline name"), "object": str("model"),
				"created": integer("the config file's modification time (Unix seconds)"), "owned_by": str("planner")}))})),
		})},
		"/v1/chat/completions": obj{"post": op("chatCompletions", "OpenAI-compatible chat completion: model names the pipeline, the last user message is the question, "+
			"earlier user and assistant turns are the thread's history (a follow-up's earlier turns); stream: true answers chat.completion.chunk Server-Sent Events ending with data: [DONE]. "+
			"Tools and functions are refused; temperature and other sampling fields are ignored. Errors are in OpenAI's shape {\"error\":{\"message\",\"type\",\"param\",\"code\"}}",
			nil, obj{"required": true, "content": obj{"application/json": obj{"schema": obj{"type": "object", "required": []string{"model", "messages"}, "additionalProperties": true,
				"properties": obj{"model": str("pipeline name"), "messages": arr(object(obj{"role": str("system, user or assistant"), "content": obj{"description": "a string or an array of text parts"}})),
					"stream": boolean("answer as Server-Sent Events"), "stream_options": object(obj{"include_usage": boolean("send a usage chunk before [DONE]")})}}}}},
			obj{"200": obj{"description": "a chat.completion object, or with stream: true a text/event-stream of chat.completion.chunk objects",
				"content": obj{"application/json": obj{"schema": obj{"type": "object", "additionalProperties": true}}, "text/event-stream": obj{"schema": obj{"type": "string"}}}},
				"400": jsonBody("bad JSON, no user message, tools requested", obj{"type": "object"}), "401": jsonBody("no or wrong bearer token", obj{"type": "object"}),
				"404": jsonBody("no such model (pipeline)", obj{"type": "object"}), "413": jsonBody("body too large", obj{"type": "object"}),
				"429": jsonBody("too many runs", obj{"type": "object"}), "500": jsonBody("the run failed", obj{"type": "object"})})},
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{"title": "planner serve", "version": "1",
			"description": "The HTTP API of planner serve: pipelines, runs with live Server-Sent Events, durable threads, approvals and comparisons. " +
				"Errors are {\"error\":{\"code\",\"message\",\"details\"}}. With a token, every /api request needs Authorization: Bearer TOKEN."},
		"servers":    []obj{{"url": "/"}},
		"paths":      paths,
		"components": obj{"schemas": schemas, "securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer"}}},
		"security":   []obj{{}, {"bearer": []string{}}},
	}
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, openAPIDoc())
}
