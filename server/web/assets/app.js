// planner serve's page: plain JavaScript, no framework, no outside requests.
// It talks to the JSON API under /api and follows a run's events with
// Server-Sent Events: EventSource when the server needs no token (it
// reconnects by itself, sending Last-Event-ID), else a fetch-based reader
// that sends the bearer token and Last-Event-ID itself (EventSource cannot
// set headers).
'use strict';
(() => {
  const TOKEN_KEY = 'planner-serve-token';
  // Every trace event kind (trace/trace.go), plus the stream's own.
  const KINDS = ['run_start', 'run_end', 'node_start', 'node_end', 'route', 'error', 'llm_call', 'token', 'thought',
    'action', 'observation', 'parse_error', 'guard', 'plan', 'step', 'decision', 'vote', 'reflection', 'candidate',
    'answer', 'info', 'retry', 'gap'];
  const TAGS = {thought: 'Thought', action: 'Action', observation: 'Observation', answer: 'Answer', error: 'Error',
    parse_error: 'Parse error', retry: 'Retry', guard: 'Guard', plan: 'Plan', step: 'Step', decision: 'Decision',
    vote: 'Vote', reflection: 'Reflection', candidate: 'Candidate', info: 'Info', route: 'Route', gap: 'Gap'};

  const state = {
    token: sessionStorage.getItem(TOKEN_KEY) || '',
    pipelines: [],
    selected: '',      // pipeline name whose graph is shown
    follow: null,      // {runId, thread, close()} of the run followed
    usage: {},         // node -> {calls, prompt, completion, tools, cost}
    replies: new Map(), // "call:attempt" -> {li, text, node}
    compare: null,     // id of the comparison shown
    compareTimer: 0,
    tasksDone: -1,     // finished runs when the comparison's grid was drawn
    tasks: null,       // the grid shown (GET /api/compares/{id}/tasks)
    cell: null,        // [task, column] of the cell whose runs are shown
    approvalsSig: null, // the approvals listed
    model: null,       // the server's default model (GET /api/pipelines), or null: each pipeline's own
    nodeErrors: {},    // node -> the last error the run reported on it
  };

  // --- helpers --------------------------------------------------------
  const $ = (sel, root = document) => root.querySelector(sel);
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k in e && typeof v !== 'string') e[k] = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const svgEl = (tag, attrs) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  };
  const num = (n) => (n || 0).toLocaleString('en-US');
  const cost = (c) => (c ? c.toFixed(4) : '–');
  const when = (t) => (t ? new Date(t).toLocaleString() : '');
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const baseName = (p) => (p || '').split(/[\\/]/).pop();
  const stem = (f) => baseName(f).replace(/\.ya?ml$/, '');

  function showError(msg) {
    const box = $('#error');
    if (!msg) { box.hidden = true; box.textContent = ''; return; }
    box.textContent = msg;
    box.hidden = false;
  }

  class APIError extends Error {
    constructor(status, body) {
      super(body && body.error ? body.error.message : `HTTP ${status}`);
      this.status = status;
      this.code = body && body.error ? body.error.code : '';
    }
  }

  function authHeaders(h = {}) {
    if (state.token) h.Authorization = 'Bearer ' + state.token;
    return h;
  }

  // api calls the JSON API; it asks for the token on a 401.
  async function api(method, path, body) {
    const init = {method, headers: authHeaders({Accept: 'application/json'}), cache: 'no-store', credentials: 'omit'};
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    const ct = res.headers.get('Content-Type') || '';
    const data = ct.includes('json') ? await res.json().catch(() => null) : await res.text();
    if (res.status === 401) askToken(state.token ? 'The token was refused.' : '');
    if (!res.ok) throw new APIError(res.status, data);
    return data;
  }

  // --- token ----------------------------------------------------------
  let tokenWaiters = [];
  function askToken(why) {
    const box = $('#token-box');
    if (why) showError(why);
    box.hidden = false;
    $('#token-input').focus();
  }
  function tokenReady() {
    return new Promise((r) => tokenWaiters.push(r));
  }
  $('#token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.token = $('#token-input').value.trim();
    sessionStorage.setItem(TOKEN_KEY, state.token);
    $('#token-input').value = '';
    $('#token-box').hidden = true;
    showError('');
    const w = tokenWaiters;
    tokenWaiters = [];
    w.forEach((r) => r());
  });

  // --- tabs -----------------------------------------------------------
  function selectTab(name) {
    for (const b of document.querySelectorAll('nav button.tab')) b.classList.toggle('selected', b.dataset.tab === name);
    for (const s of document.querySelectorAll('.tab-body')) s.hidden = s.id !== 'tab-' + name;
    if (name === 'threads') loadThreads();
    if (name === 'approvals') loadApprovals();
    if (name === 'compare') loadCompares();
  }
  for (const b of document.querySelectorAll('nav button.tab')) b.addEventListener('click', () => selectTab(b.dataset.tab));

  // --- pipelines and graph --------------------------------------------
  async function loadPipelines() {
    let data;
    for (;;) {
      try {
        data = await api('GET', '/api/pipelines');
        break;
      } catch (e) {
        if (e.status !== 401) { showError('Listing the pipelines: ' + e.message); return; }
        await tokenReady();
      }
    }
    state.pipelines = data.pipelines || [];
    state.model = data.model || null;
    // The model fields name what an empty field means: the server's
    // default model, else each pipeline's own llm block.
    const dflt = state.model ? 'server default: ' + (state.model.spec || state.model.provider) + (state.model.mark ? ' (' + state.model.mark + ')' : '')
      : "each pipeline's own llm block";
    $('#run-llm').placeholder = dflt;
    $('#compare-llm').placeholder = dflt;
    $('#pipelines-dir').textContent = data.dir ? '(' + data.dir + ')' : '';
    const list = $('#pipelines');
    const select = $('#run-config');
    const checks = $('#compare-configs');
    list.replaceChildren();
    select.replaceChildren();
    checks.replaceChildren();
    for (const p of state.pipelines) {
      const name = p.name || stem(p.file);
      if (p.error) {
        list.append(el('li', {class: 'broken', title: p.error}, p.file, el('span', {class: 'sub'}, p.error)));
        continue;
      }
      list.append(el('li', {'data-pipeline': name, title: p.description || '', onclick: () => selectPipeline(name)},
        name, el('span', {class: 'sub'}, p.paradigm || '')));
      select.append(el('option', {value: name}, name));
      checks.append(el('label', {}, el('input', {type: 'checkbox', value: name}), name));
    }
    select.addEventListener('change', () => selectPipeline(select.value));
    const first = state.pipelines.find((p) => !p.error);
    if (first && !state.selected) selectPipeline(first.name || stem(first.file));
  }

  function pipelineByPath(path) {
    const file = baseName(path);
    return state.pipelines.find((p) => p.file === file);
  }

  async function selectPipeline(name) {
    state.selected = name;
    for (const li of document.querySelectorAll('#pipelines li')) li.classList.toggle('selected', li.dataset.pipeline === name);
    $('#run-config').value = name;
    const p = state.pipelines.find((x) => (x.name || stem(x.file)) === name);
    $('#graph-title').textContent = 'Graph: ' + name;
    $('#pipeline-desc').textContent = p ? [p.description, p.file].filter(Boolean).join(' — ') : '';
    const box = $('#graph');
    try {
      const text = await api('GET', '/api/pipelines/' + encodeURIComponent(name) + '/graph?format=svg');
      if (state.selected !== name) return;
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      const svg = doc.documentElement;
      if (svg.nodeName !== 'svg') throw new Error('the graph is not an SVG picture');
      box.replaceChildren(document.importNode(svg, true));
      box.dataset.pipeline = name;
    } catch (e) {
      box.replaceChildren(el('p', {class: 'error'}, 'Drawing ' + name + ': ' + e.message));
    }
  }

  function graphNode(id) {
    for (const g of document.querySelectorAll('#graph g.node')) if (g.dataset.node === id) return g;
    return null;
  }
  function markNode(id, cls, on) {
    const g = graphNode(id);
    if (g) g.classList.toggle(cls, on);
  }
  function clearGraph() {
    for (const g of document.querySelectorAll('#graph g.node')) {
      g.classList.remove('active', 'visited', 'waiting', 'failed');
      const t = g.querySelector(':scope > title.failure');
      if (t) t.remove();
    }
  }
  // failNode draws a node as failed, with why in its tooltip.
  function failNode(id, why) {
    const g = graphNode(id);
    if (!g) return;
    g.classList.remove('active', 'visited', 'waiting');
    g.classList.add('failed');
    let t = g.querySelector(':scope > title.failure');
    if (!t) {
      t = svgEl('title', {class: 'failure'});
      g.prepend(t);
    }
    t.textContent = 'failed: ' + (why || 'the run failed here');
  }

  // showModel says what model the run uses, as planner run prints it
  // ("model: LABEL"), with the kind in capitals for an offline model.
  function showModel(m) {
    const p = $('#run-model');
    if (!m || !m.label) { p.hidden = true; p.replaceChildren(); return; }
    p.replaceChildren(m.mark ? el('span', {class: 'model-mark', 'data-kind': m.kind}, m.mark) : null, 'model: ' + m.label);
    p.dataset.kind = m.kind || '';
    p.hidden = false;
  }

  // --- the event stream -----------------------------------------------
  // follow streams a run's events to onEvent(kind, event) and its end
  // (the run as GET /api/runs/{id} shows it) to onEnd.
  function follow(runId, onEvent, onEnd, onTrouble) {
    const url = '/api/runs/' + encodeURIComponent(runId) + '/events';
    if (!state.token) {
      const es = new EventSource(url);
      for (const k of KINDS) es.addEventListener(k, (m) => onEvent(k, JSON.parse(m.data)));
      es.addEventListener('end', (m) => { es.close(); onEnd(JSON.parse(m.data)); });
      es.addEventListener('open', () => onTrouble(''));
      es.addEventListener('error', () => {
        if (es.readyState === EventSource.CLOSED) onTrouble('the event stream closed; reload the run from Threads');
        else onTrouble('reconnecting…');
      });
      return {close: () => es.close()};
    }
    const ctrl = new AbortController();
    let closed = false;
    (async () => {
      let last = '';
      let retry = 1000;
      while (!closed) {
        try {
          const h = authHeaders({Accept: 'text/event-stream'});
          if (last) h['Last-Event-ID'] = last;
          const res = await fetch(url, {headers: h, signal: ctrl.signal, cache: 'no-store', credentials: 'omit'});
          if (!res.ok) {
            const body = await res.json().catch(() => null);
            if (res.status === 401) askToken('The token was refused.');
            onTrouble(new APIError(res.status, body).message);
            if (res.status !== 429 && res.status < 500) return;
          } else {
            onTrouble('');
            const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
            let buf = '';
            let ev = {event: '', data: [], id: null};
            for (;;) {
              const {value, done} = await reader.read();
              if (done) break;
              buf += value;
              let i;
              while ((i = buf.indexOf('\n')) >= 0) {
                let line = buf.slice(0, i);
                buf = buf.slice(i + 1);
                if (line.endsWith('\r')) line = line.slice(0, -1);
                if (line === '') {
                  if (ev.id !== null) last = ev.id;
                  if (ev.data.length) {
                    const kind = ev.event || 'message';
                    const data = JSON.parse(ev.data.join('\n'));
                    if (kind === 'end') { closed = true; onEnd(data); return; }
                    onEvent(kind, data);
                  }
                  ev = {event: '', data: [], id: null};
                  continue;
                }
                if (line.startsWith(':')) continue;
                const c = line.indexOf(':');
                const field = c < 0 ? line : line.slice(0, c);
                let val = c < 0 ? '' : line.slice(c + 1);
                if (val.startsWith(' ')) val = val.slice(1);
                if (field === 'event') ev.event = val;
                else if (field === 'data') ev.data.push(val);
                else if (field === 'id') ev.id = val;
                else if (field === 'retry' && /^\d+$/.test(val)) retry = Number(val);
              }
            }
          }
        } catch (e) {
          if (closed) return;
          onTrouble('reconnecting…');
        }
        if (!closed) await sleep(retry);
      }
    })();
    return {close: () => { closed = true; ctrl.abort(); }};
  }

  // --- a run ------------------------------------------------------------
  function resetRunView() {
    if (state.follow) state.follow.close();
    state.follow = null;
    state.usage = {};
    state.nodeErrors = {};
    state.replies = new Map();
    $('#stream').replaceChildren();
    $('#run-approval').replaceChildren();
    $('#answer').hidden = true;
    renderUsage();
    clearGraph();
  }

  function setStatus(status) {
    const s = $('#run-status');
    s.textContent = status || '';
    s.className = 'status ' + (status || '');
    $('#run-cancel').disabled = !(status === 'queued' || status === 'running');
  }

  function streamItem(cls, tag, node, text) {
    const li = el('li', {class: cls}, tag ? el('span', {class: 'tag'}, tag) : null, node ? el('span', {class: 'node'}, node) : null,
      el('span', {class: 'text'}, text || ''));
    const list = $('#stream');
    const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 20;
    list.append(li);
    if (atEnd) list.scrollTop = list.scrollHeight;
    return li;
  }

  function usageOf(node) {
    return (state.usage[node] ||= {calls: 0, prompt: 0, completion: 0, tools: 0, cost: 0});
  }

  function renderUsage(total) {
    const body = $('#usage tbody');
    body.replaceChildren();
    for (const [node, u] of Object.entries(state.usage)) {
      body.append(el('tr', {'data-node': node}, el('td', {}, node), el('td', {class: 'num'}, num(u.calls)),
        el('td', {class: 'num'}, num(u.prompt)), el('td', {class: 'num'}, num(u.completion)), el('td', {class: 'num'}, num(u.tools)),
        el('td', {class: 'num'}, cost(u.cost))));
    }
    const foot = $('#usage tfoot');
    foot.replaceChildren();
    if (total) {
      foot.append(el('tr', {}, el('td', {}, 'total' + (total.estimated ? ' (estimated)' : '')), el('td', {class: 'num'}, num(total.model_calls)),
        el('td', {class: 'num'}, num(total.prompt_tokens)), el('td', {class: 'num'}, num(total.completion_tokens)),
        el('td', {class: 'num'}, num(total.tool_calls)), el('td', {class: 'num'}, cost(total.cost_usd))));
    }
  }

  function foldReplies(node) {
    for (const [key, r] of state.replies) {
      if (r.node !== node || r.done) continue;
      r.done = true;
      r.li.classList.add('done');
      const details = el('details', {}, el('summary', {}, 'model reply' + (r.call ? ' (call ' + r.call + ')' : '')), r.text);
      r.li.replaceChildren(details);
      state.replies.set(key, r);
      return;
    }
  }

  function onEvent(kind, e) {
    const node = e.node || '';
    switch (kind) {
      case 'node_start':
        markNode(node, 'waiting', false);
        markNode(node, 'active', true);
        streamItem('ev-node_start', '▶', node, (e.data && e.data.type) || '');
        return;
      case 'node_end':
        delete state.nodeErrors[node];
        markNode(node, 'active', false);
        markNode(node, 'visited', true);
        streamItem('ev-node_end', '■', node, e.elapsed_ms ? e.elapsed_ms.toFixed(0) + ' ms' : '');
        return;
      case 'token': {
        const d = e.data || {};
        const key = (d.call || 0) + ':' + (d.attempt || 1);
        let r = state.replies.get(key);
        if (!r) {
          const li = streamItem('reply live', '▸', node, '');
          r = {li, text: li.querySelector('.text'), node, call: d.call, done: false};
          r.text.dataset.call = String(d.call || '');
          state.replies.set(key, r);
        }
        if (!r.done) r.text.textContent += e.text || '';
        return;
      }
      case 'llm_call': {
        const u = usageOf(node);
        u.calls++;
        if (e.usage) {
          u.prompt += e.usage.prompt_tokens || 0;
          u.completion += e.usage.completion_tokens || 0;
          u.cost += e.usage.cost_usd || 0;
        }
        renderUsage();
        foldReplies(node);
        return;
      }
      case 'action':
        usageOf(node).tools++;
        renderUsage();
        streamItem('ev-action', 'Action', node, e.text);
        return;
      case 'run_start':
        streamItem('ev-run_start', '●', '', 'run ' + (e.run_id || '') + ' started');
        return;
      case 'run_end':
        streamItem('ev-run_end', '●', '', e.text || 'run ended');
        return;
      case 'route': {
        const d = e.data || {};
        streamItem('ev-route', 'Route', node, '→ ' + (d.to || '?') + (d.route && d.route !== 'default' ? ' (' + d.route + ')' : ''));
        return;
      }
      case 'error':
        if ((e.text || '').includes('waiting for approval')) {
          streamItem('ev-waiting', 'Waiting', node, e.text.replace(/^.*waiting for approval: /, 'for approval: '));
          return;
        }
        if (node) state.nodeErrors[node] = e.text || '';
        break;
      case 'gap':
        streamItem('ev-error', 'Gap', '', 'events ' + e.from + '–' + e.to + ' were dropped by the server before this page asked for them');
        return;
    }
    let text = e.text || '';
    if (!text && e.data) text = JSON.stringify(e.data);
    streamItem('ev-' + kind, TAGS[kind] || kind, node, text);
  }

  function onEnd(v) {
    setStatus(v.status);
    if (v.model) showModel(v.model);
    $('#conn').textContent = '';
    if (v.usage) {
      const per = v.usage.per_node || {};
      for (const [node, c] of Object.entries(per)) {
        const u = usageOf(node);
        u.calls = c.model_calls || 0;
        u.prompt = c.prompt_tokens || 0;
        u.completion = c.completion_tokens || 0;
        u.tools = c.tool_calls || 0;
      }
      renderUsage(v.usage);
    }
    // A node still running when the run ended failed with it, unless
    // the run waits or was stopped; a node that reported an error and
    // never ended failed too.
    const failed = v.status === 'failed';
    for (const g of document.querySelectorAll('#graph g.node.active')) {
      const id = g.dataset.node;
      if (failed) { failNode(id, state.nodeErrors[id] || [v.failure, v.error].filter(Boolean).join(': ')); continue; }
      g.classList.remove('active');
      if (v.status !== 'waiting') g.classList.add('visited');
    }
    if (failed) for (const [id, why] of Object.entries(state.nodeErrors)) failNode(id, why);
    if (v.status === 'waiting' && v.pending) {
      if (v.pending.node) markNode(v.pending.node, 'waiting', true);
      $('#run-approval').replaceChildren(approvalCard({thread: v.thread, node: v.pending.node, tool: v.pending.tool, input: v.pending.input, question: v.question}));
      loadApprovals();
    }
    const ans = $('#answer');
    if (v.status === 'done' || v.answer || v.error) {
      ans.replaceChildren();
      if (v.answer) ans.append(el('strong', {}, 'Answer: '), el('span', {id: 'answer-text'}, v.answer));
      if (!v.complete && v.reason) ans.append(el('div', {class: 'muted'}, 'incomplete: ' + v.reason));
      if (v.error) ans.append(el('div', {class: 'error'}, v.error));
      ans.classList.toggle('incomplete', !v.complete);
      ans.hidden = false;
    }
    state.follow = null;
  }

  function followRun(acc, keep) {
    if (!keep) resetRunView();
    else if (state.follow) state.follow.close();
    $('#run-id').textContent = acc.run_id + ' · thread ' + acc.thread;
    $('#run-approval').replaceChildren();
    $('#answer').hidden = true;
    setStatus('queued');
    if (acc.model) showModel(acc.model);
    else if (!keep) {
      showModel(null);
      api('GET', '/api/runs/' + encodeURIComponent(acc.run_id)).then((v) => { if (state.follow && state.follow.runId === acc.run_id) showModel(v.model); }).catch(() => {});
    }
    const f = follow(acc.run_id, (k, e) => {
      if (k === 'run_start') setStatus('running');
      onEvent(k, e);
    }, onEnd, (msg) => { $('#conn').textContent = msg; });
    state.follow = {runId: acc.run_id, thread: acc.thread, close: f.close};
  }

  $('#run-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    showError('');
    const req = {config: $('#run-config').value};
    for (const [k, id] of [['question', '#run-question'], ['llm', '#run-llm'], ['suite', '#run-suite'], ['task', '#run-task'], ['thread', '#run-thread']]) {
      const v = $(id).value.trim();
      if (v) req[k] = v;
    }
    if (req.config !== state.selected) await selectPipeline(req.config);
    const btn = $('#run-start');
    btn.disabled = true;
    try {
      const acc = await api('POST', '/api/runs', req);
      followRun(acc, false);
    } catch (e) {
      showError('Starting the run: ' + e.message);
    } finally {
      btn.disabled = false;
    }
  });

  $('#run-cancel').addEventListener('click', async () => {
    if (!state.follow) return;
    try {
      await api('POST', '/api/runs/' + encodeURIComponent(state.follow.runId) + '/cancel');
    } catch (e) {
      showError('Cancelling: ' + e.message);
    }
  });

  // --- approvals ------------------------------------------------------
  function approvalCard(a) {
    const reason = el('input', {type: 'text', class: 'reason', placeholder: 'reason (shown to the model when denied)', maxlength: 4000});
    const decide = async (approve, buttons) => {
      buttons.forEach((b) => { b.disabled = true; });
      showError('');
      try {
        const acc = await api('POST', '/api/approvals/' + encodeURIComponent(a.thread), {approve, reason: reason.value.trim(), by: 'web'});
        const p = pipelineByPath(a.pipeline);
        const same = state.follow === null && $('#run-id').textContent.includes('thread ' + a.thread);
        selectTab('run');
        if (p && (p.name || stem(p.file)) !== state.selected) await selectPipeline(p.name || stem(p.file));
        if (a.node) markNode(a.node, 'waiting', false);
        followRun(acc, same);
        streamItem('ev-decision', approve ? 'Approved' : 'Denied', a.node || '', a.tool + ': ' + a.input + (reason.value.trim() ? ' — ' + reason.value.trim() : ''));
        loadApprovals();
      } catch (e) {
        showError('Deciding: ' + e.message);
        buttons.forEach((b) => { b.disabled = false; });
      }
    };
    const approve = el('button', {type: 'button', class: 'approve'}, 'Approve');
    const deny = el('button', {type: 'button', class: 'deny'}, 'Deny');
    approve.addEventListener('click', () => decide(true, [approve, deny]));
    deny.addEventListener('click', () => decide(false, [approve, deny]));
    return el('div', {class: 'approval', 'data-thread': a.thread},
      el('div', {}, el('strong', {}, 'Waiting for approval: '), 'thread ', el('code', {}, a.thread), a.node ? ' · node ' + a.node : ''),
      a.question ? el('div', {class: 'muted'}, a.question) : null,
      el('div', {}, 'Tool ', el('code', {}, a.tool), ' with input ', el('code', {}, a.input)),
      el('div', {class: 'row'}, reason, approve, deny));
  }

  async function loadApprovals() {
    try {
      const data = await api('GET', '/api/approvals');
      const list = data.approvals || [];
      const badge = $('#approval-count');
      badge.textContent = String(list.length);
      badge.hidden = list.length === 0;
      // Redraw only when the list changed: a reason being typed stays.
      const sig = list.map((a) => a.thread + '@' + a.since).join(',');
      if (sig === state.approvalsSig) return;
      state.approvalsSig = sig;
      const box = $('#approvals');
      box.replaceChildren(...(list.length ? list.map(approvalCard) : [el('p', {class: 'muted'}, 'None.')]));
    } catch (e) {
      if (e.status !== 401) showError('Listing the approvals: ' + e.message);
    }
  }

  // --- threads --------------------------------------------------------
  async function loadThreads() {
    try {
      const data = await api('GET', '/api/threads');
      const body = $('#threads tbody');
      body.replaceChildren();
      for (const t of data.threads || []) {
        const actions = el('td', {});
        if (t.run_id) {
          actions.append(el('button', {type: 'button', class: 'small', onclick: () => { selectTab('run'); followPipeline(t.pipeline); followRun({run_id: t.run_id, thread: t.name}, false); }}, 'Follow'));
        } else if (t.status === 'interrupted' || t.status === 'failed') {
          actions.append(el('button', {type: 'button', class: 'small', onclick: () => resumeThread(t) }, 'Resume'));
        }
        body.append(el('tr', {'data-thread': t.name},
          el('td', {}, el('a', {href: '#', onclick: (ev) => { ev.preventDefault(); showThread(t.name); }}, t.name)),
          el('td', {}, el('span', {class: 'status ' + t.status}, t.status)),
          el('td', {}, stem(t.config || t.pipeline)), el('td', {}, t.question || ''), el('td', {}, when(t.updated)), actions));
      }
      if (!body.children.length) body.append(el('tr', {}, el('td', {colspan: 6, class: 'muted'}, 'No threads yet.')));
    } catch (e) {
      if (e.status !== 401) showError('Listing the threads: ' + e.message);
    }
  }

  function followPipeline(path) {
    const p = pipelineByPath(path);
    if (p) selectPipeline(p.name || stem(p.file));
  }

  async function resumeThread(t) {
    try {
      const acc = await api('POST', '/api/threads/' + encodeURIComponent(t.name) + '/resume');
      selectTab('run');
      followPipeline(t.pipeline);
      followRun(acc, false);
    } catch (e) {
      showError('Resuming ' + t.name + ': ' + e.message);
    }
  }

  async function showThread(name) {
    try {
      const data = await api('GET', '/api/threads/' + encodeURIComponent(name));
      $('#thread-detail').hidden = false;
      $('#thread-name').textContent = name + ' (' + data.thread.status + ')';
      const body = $('#history tbody');
      body.replaceChildren(...(data.history || []).map((h) => el('tr', {}, el('td', {class: 'num'}, h.n), el('td', {}, h.kind),
        el('td', {}, h.node || ''), el('td', {}, h.summary))));
    } catch (e) {
      showError('Thread ' + name + ': ' + e.message);
    }
  }
  $('#threads-refresh').addEventListener('click', loadThreads);

  // --- comparisons ----------------------------------------------------
  $('#compare-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    showError('');
    const configs = [...document.querySelectorAll('#compare-configs input:checked')].map((i) => i.value);
    if (!configs.length) { showError('Pick at least one pipeline to compare.'); return; }
    const req = {suite: $('#compare-suite').value.trim(), configs};
    const llm = $('#compare-llm').value.trim();
    if (llm) req.llm = llm;
    const limit = Number($('#compare-limit').value);
    if (limit > 0) req.limit = limit;
    const repeats = Number($('#compare-repeats').value);
    if (repeats > 1) req.repeats = repeats;
    try {
      const acc = await api('POST', '/api/compares', req);
      showCompare(acc.id);
    } catch (e) {
      showError('Starting the comparison: ' + e.message);
    }
  });

  async function loadCompares() {
    try {
      const data = await api('GET', '/api/compares');
      const list = $('#compares');
      list.replaceChildren(...(data.compares || []).map((c) => el('li', {onclick: () => showCompare(c.id)},
        c.configs.join(', ') + ' on ' + c.suite, el('span', {class: 'sub'}, c.status + ' · ' + (c.model || 'own models') + ' · ' + when(c.started)))));
      if (!list.children.length) list.append(el('li', {class: 'muted'}, 'None yet.'));
    } catch (e) {
      if (e.status !== 401) showError('Listing the comparisons: ' + e.message);
    }
  }

  async function showCompare(id) {
    clearTimeout(state.compareTimer);
    state.compare = id;
    $('#compare-id').textContent = id;
    $('#compare-table thead').replaceChildren();
    $('#compare-table tbody').replaceChildren();
    $('#compare-chart').replaceChildren();
    $('#compare-note').textContent = '';
    $('#compare-error').hidden = true;
    state.tasksDone = -1;
    state.tasks = null;
    state.cell = null;
    $('#compare-tasks-card').hidden = true;
    $('#compare-grid thead').replaceChildren();
    $('#compare-grid tbody').replaceChildren();
    $('#compare-run').replaceChildren();
    $('#compare-run').hidden = true;
    pollCompare(id);
  }

  async function pollCompare(id) {
    if (state.compare !== id) return;
    let v;
    try {
      v = await api('GET', '/api/compares/' + encodeURIComponent(id));
    } catch (e) {
      showError('Comparison ' + id + ': ' + e.message);
      return;
    }
    if (state.compare !== id) return;
    const st = $('#compare-status');
    st.textContent = v.status;
    st.className = 'status ' + v.status;
    const bar = $('#compare-progress');
    bar.max = Math.max(v.total, 1);
    bar.value = v.done;
    $('#compare-count').textContent = v.done + ' of ' + v.total + ' runs';
    if (v.error) { $('#compare-error').textContent = v.error; $('#compare-error').hidden = false; }
    if (v.done !== state.tasksDone || v.status !== 'running') {
      state.tasksDone = v.done;
      loadTasks(id);
    }
    if (v.status === 'running') {
      table('#compare-table', ['config', 'done', 'complete so far', 'failed'], (v.per_config || []).map((c) => [c.config, c.done, c.correct, c.failed]));
      state.compareTimer = setTimeout(() => pollCompare(id), 700);
      return;
    }
    loadCompares();
    if (v.status !== 'done') return;
    try {
      const base = '/api/compares/' + encodeURIComponent(id) + '/report';
      const [rep, tab] = await Promise.all([api('GET', base), api('GET', base + '?format=table')]);
      if (state.compare !== id) return;
      renderReport(rep, tab);
    } catch (e) {
      showError('The report of ' + id + ': ' + e.message);
    }
  }

  function table(sel, head, rows) {
    const t = $(sel);
    t.querySelector('thead').replaceChildren(el('tr', {}, head.map((h, i) => el('th', {class: i ? 'num' : ''}, h))));
    t.querySelector('tbody').replaceChildren(...rows.map((r) => el('tr', {}, r.map((c, i) => el('td', {class: i ? 'num' : ''}, c)))));
  }

  // renderReport shows the report's table as report.md has it (tab is
  // GET .../report?format=table: the same columns, cells and scales:
  // rates 0 to 1, figures per task, failures and recovered runs by
  // kind), each header explained in its tooltip; then the charts and
  // what produced the numbers.
  function renderReport(rep, tab) {
    const cs = rep.configs || [];
    const t = $('#compare-table');
    t.querySelector('thead').replaceChildren(el('tr', {}, tab.columns.map((c, i) => el('th', {class: i ? 'num' : '', title: c.meaning + ' (report.json: configs[i].' + c.field + ')', 'data-field': c.field}, c.column))));
    const text = new Set(['config', 'failures', 'recovered', 'stopped']);
    t.querySelector('tbody').replaceChildren(...tab.rows.map((r) => el('tr', {}, r.map((cell, i) => {
      const f = tab.columns[i].field;
      return el('td', {class: i === 0 ? '' : text.has(f) ? 'text' : 'num', 'data-field': f}, cell);
    }))));
    const fixed3 = (x) => x.toFixed(3);
    const chart = $('#compare-chart');
    const name = (c) => c.label || c.config;
    chart.replaceChildren(
      barChart('Success rate (0 to 1)', cs.map((c) => [name(c), c.success_rate]), 1, fixed3),
      barChart('Tokens per task', cs.map((c) => [name(c), ((c.per_task || {}).prompt_tokens || 0) + ((c.per_task || {}).completion_tokens || 0)]), 0, (x) => num(Math.round(x))));
    const notes = [tab.banner];
    notes.push('Suite ' + rep.suite + ', ' + rep.tasks + ' tasks, model ' + (rep.model_spec || rep.model) + ', seed ' + rep.seed + (rep.dir ? ', folder ' + rep.dir : '') + '.');
    notes.push(...(tab.notes || []));
    $('#compare-note').textContent = notes.join(' ');
  }

  // --- a comparison's tasks ---------------------------------------------
  // The grid shows every task against every config; a click on a cell
  // fetches its runs' traces and draws them as timelines. Everything
  // shown is model output: it goes into the page as text only.
  const MAX_EVENT_TEXT = 2000, MAX_EVENTS = 400;
  const clip = (s, n) => { s = String(s || ''); return s.length > n ? s.slice(0, n) + ' … [' + (s.length - n) + ' more characters cut]' : s; };
  const short = (s, n) => { s = String(s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
  const ms = (x) => (x >= 1000 ? (x / 1000).toFixed(1) + ' s' : Math.round(x || 0) + ' ms');
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

  // cellOutcome sums up a cell's runs: its mark (✓, ✗, —, k/n), its
  // class and a key two cells share when they succeeded alike; null for a
  // cell with no run (yet).
  function cellOutcome(runs) {
    if (!runs.length) return null;
    const scored = runs.filter((r) => r.scored);
    const ok = scored.filter((r) => r.correct).length;
    if (!scored.length) return {mark: '—', cls: 'unscored', key: 'unscored'};
    return {mark: runs.length === 1 ? (ok ? '✓' : '✗') : ok + '/' + scored.length,
      cls: ok === scored.length ? 'ok' : ok === 0 ? 'bad' : 'mixed', key: (ok / scored.length).toFixed(6)};
  }

  async function loadTasks(id) {
    let d;
    try {
      d = await api('GET', '/api/compares/' + encodeURIComponent(id) + '/tasks');
    } catch (e) {
      showError('The tasks of ' + id + ': ' + e.message);
      return;
    }
    if (state.compare !== id) return;
    state.tasks = d;
    renderTasks(id, d);
  }

  function renderTasks(id, d) {
    const cells = d.tasks.map(() => d.columns.map(() => []));
    for (const r of d.runs || []) if (cells[r.task] && cells[r.task][r.column]) cells[r.task][r.column].push(r);
    for (const row of cells) for (const runs of row) runs.sort((a, b) => a.repeat - b.repeat);
    $('#compare-banner').textContent = d.banner || '';
    const head = el('tr', {}, el('th', {class: 'task'}, 'task'));
    d.columns.forEach((c, i) => {
      const runs = cells.flatMap((row) => row[i]);
      const scored = runs.filter((r) => r.scored);
      head.append(el('th', {'data-col': i, title: c.model ? c.config + ' with ' + c.model : c.config}, c.label || c.config,
        el('span', {class: 'count'}, scored.length ? scored.filter((r) => r.correct).length + '/' + scored.length + ' correct' : runs.length + ' runs')));
    });
    $('#compare-grid thead').replaceChildren(head);
    let disagreeing = 0;
    const rows = d.tasks.map((t, ti) => {
      const disagree = new Set(cells[ti].map(cellOutcome).filter(Boolean).map((o) => o.key)).size > 1;
      if (disagree) disagreeing++;
      const tr = el('tr', {'data-task': t.id, 'data-disagree': String(disagree)},
        el('th', {class: 'task'}, el('span', {class: 'id'}, t.id), el('span', {class: 'q', title: t.question}, short(t.question, 90))));
      d.columns.forEach((c, ci) => {
        const runs = cells[ti][ci];
        const o = cellOutcome(runs);
        if (!o) { tr.append(el('td', {class: 'cell none muted', 'data-col': ci}, '…')); return; }
        const answers = runs.map((r) => r.answer || (r.failure ? '(' + r.failure + ')' : '(no answer)'));
        const failures = runs.filter((r) => r.failure).map((r) => r.failure);
        const selected = state.cell && state.cell[0] === ti && state.cell[1] === ci;
        const td = el('td', {class: 'cell ' + o.cls + (selected ? ' selected' : ''), 'data-col': ci, 'data-outcome': o.mark, tabindex: 0, role: 'button',
          title: answers.join('\n---\n')},
          el('span', {class: 'mark'}, o.mark), ' ', el('span', {class: 'cell-answer'}, short(answers[0], 60)),
          failures.length ? el('span', {class: 'failure'}, failures.join(', ')) : null,
          el('span', {class: 'meta'}, (runs.length > 1 ? 'mean ' : '') + '$' + mean(runs.map((r) => r.cost_usd || 0)).toFixed(4) + ' · ' +
            ms(mean(runs.map((r) => r.latency_ms || 0)))));
        const open = () => {
          for (const x of document.querySelectorAll('#compare-grid td.selected')) x.classList.remove('selected');
          td.classList.add('selected');
          state.cell = [ti, ci];
          showCell(id, d, ti, ci, runs);
        };
        td.addEventListener('click', open);
        td.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); open(); } });
        tr.append(td);
      });
      return tr;
    });
    $('#compare-grid tbody').replaceChildren(...rows);
    $('#compare-disagree-count').textContent = '(' + disagreeing + ')';
    $('#compare-tasks-card').hidden = false;
    applyTaskFilters();
  }

  function applyTaskFilters() {
    const d = state.tasks;
    if (!d) return;
    const q = $('#compare-filter').value.trim().toLowerCase();
    const only = $('#compare-disagree').checked;
    let n = 0;
    for (const tr of document.querySelectorAll('#compare-grid tbody tr')) {
      const t = d.tasks.find((x) => x.id === tr.dataset.task) || {id: '', question: ''};
      const hit = (!only || tr.dataset.disagree === 'true') && (!q || t.id.toLowerCase().includes(q) || (t.question || '').toLowerCase().includes(q));
      tr.hidden = !hit;
      if (hit) n++;
    }
    $('#compare-tasks-count').textContent = n + ' of ' + d.tasks.length + ' tasks';
  }
  $('#compare-disagree').addEventListener('change', applyTaskFilters);
  $('#compare-filter').addEventListener('input', applyTaskFilters);

  function usageText(u) {
    let s = (u.prompt_tokens || 0) + ' in + ' + (u.completion_tokens || 0) + ' out tokens';
    if (u.cached_prompt_tokens) s += ' (' + u.cached_prompt_tokens + ' cached)';
    if (u.cost_usd) s += ' · $' + u.cost_usd.toFixed(4);
    if (u.estimated) s += ' (estimated)';
    return s;
  }

  // timeline draws a run's events in order, bounded like the tasks.html
  // page: the first MAX_EVENTS events, each text cut at MAX_EVENT_TEXT.
  function timeline(events) {
    const t0 = events.length && events[0].time ? Date.parse(events[0].time) : NaN;
    const ol = el('ol', {class: 'timeline'});
    for (const e of events.slice(0, MAX_EVENTS)) {
      const at = e.time ? Date.parse(e.time) - t0 : NaN;
      ol.append(el('li', {class: 'ev ev-' + e.kind, 'data-kind': e.kind},
        el('span', {class: 'seq'}, '#' + e.seq), el('span', {class: 'kind'}, e.kind),
        e.node ? el('span', {class: 'node'}, e.node) : null,
        Number.isFinite(at) ? el('span', {class: 'at'}, '+' + ms(at)) : null,
        e.elapsed_ms ? el('span', {class: 'ms'}, Math.round(e.elapsed_ms) + ' ms') : null,
        e.usage ? el('span', {class: 'usage'}, usageText(e.usage)) : null,
        e.text ? el('div', {class: 'text'}, clip(e.text, MAX_EVENT_TEXT)) : null,
        e.data ? el('details', {}, el('summary', {}, 'data'), el('pre', {}, clip(JSON.stringify(e.data), MAX_EVENT_TEXT))) : null));
    }
    const out = [ol];
    if (events.length > MAX_EVENTS) out.push(el('p', {class: 'cut'}, (events.length - MAX_EVENTS) + ' more events not shown: the page shows a run\'s first ' + MAX_EVENTS + '.'));
    return out;
  }

  async function showCell(id, d, ti, ci, runs) {
    const t = d.tasks[ti];
    const c = d.columns[ci];
    const box = $('#compare-run');
    const parts = runs.map((r) => {
      const o = cellOutcome([r]);
      const facts = [o.mark, '$' + (r.cost_usd || 0).toFixed(4), ms(r.latency_ms), r.model_calls + ' model calls', r.tool_calls + ' tool calls'];
      if (r.failure) facts.push('failure: ' + r.failure);
      for (const [k, v] of Object.entries(r.scores || {})) facts.push(k + ' ' + v);
      const events = el('div', {class: 'events'}, el('p', {class: 'muted'}, r.trace ? 'Loading its trace…' : 'No trace: the comparison ran without traces.'));
      return {r, events, div: el('div', {class: 'run ' + o.cls, 'data-repeat': r.repeat},
        el('h3', {}, (runs.length > 1 ? 'Repeat ' + (r.repeat + 1) + ' · ' : 'Run · ') + facts.join(' · ')),
        el('div', {class: 'answer-full'}, el('strong', {}, 'Answer: '), el('span', {class: 'answer-text'}, r.answer || '(none)')), events)};
    });
    box.replaceChildren(el('h3', {}, t.id + ' · ' + (c.label || c.config)), el('p', {class: 'question'}, t.question),
      t.reference ? el('p', {}, el('strong', {}, 'Reference: '), t.reference) : null, ...parts.map((p) => p.div));
    box.hidden = false;
    for (const p of parts) {
      if (!p.r.trace) continue;
      try {
        const tr = await api('GET', '/api/compares/' + encodeURIComponent(id) + '/trace?ref=' + encodeURIComponent(p.r.trace));
        if (state.compare !== id) return;
        p.events.replaceChildren(...timeline(tr.events || []));
      } catch (e) {
        p.events.replaceChildren(el('p', {class: 'error'}, 'Its trace: ' + e.message));
      }
    }
  }

  // barChart draws horizontal bars as inline SVG; max 0 scales to the
  // largest value.
  function barChart(title, rows, max, fmt) {
    const labelW = 150, barW = 360, rowH = 22, top = 22;
    const hi = max || Math.max(...rows.map((r) => r[1]), 1e-9);
    const svg = svgEl('svg', {width: labelW + barW + 90, height: top + rows.length * rowH + 6, role: 'img', 'aria-label': title, class: 'bars'});
    svg.setAttribute('viewBox', `0 0 ${labelW + barW + 90} ${top + rows.length * rowH + 6}`);
    const t = svgEl('text', {x: 0, y: 14, 'font-weight': 600});
    t.textContent = title;
    svg.append(t);
    rows.forEach(([label, v], i) => {
      const y = top + i * rowH;
      const l = svgEl('text', {x: labelW - 6, y: y + 14, 'text-anchor': 'end'});
      l.textContent = label;
      const w = Math.max(0, Math.min(1, v / hi)) * barW;
      const r = svgEl('rect', {class: 'bar', x: labelW, y: y + 3, width: w.toFixed(1), height: rowH - 8, rx: 2});
      r.dataset.config = label;
      const val = svgEl('text', {x: labelW + w + 6, y: y + 14});
      val.textContent = fmt(v);
      svg.append(l, r, val);
    });
    return svg;
  }

  // --- start ----------------------------------------------------------
  async function start() {
    await loadPipelines();
    loadApprovals();
    setInterval(() => { if (!document.hidden) loadApprovals(); }, 3000);
  }
  start();
})();
