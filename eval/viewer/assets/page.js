// The per-task page of a comparison (package viewer): it reads its data
// from the JSON block #viewer-data and builds the grid with textContent
// only, so that answers and traces, which are model output, are never
// read as markup.
'use strict';
(() => {
  const data = JSON.parse(document.getElementById('viewer-data').textContent);
  const root = document.getElementById('viewer');

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const short = (s, n) => { s = String(s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
  const money = (c) => (c ? '$' + c.toFixed(4) : '$0');
  const secs = (ms) => (ms >= 1000 ? (ms / 1000).toFixed(1) + ' s' : Math.round(ms || 0) + ' ms');
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

  // cells[t][c] holds the runs of task t by column c, by repeat.
  const cells = data.tasks.map(() => data.columns.map(() => []));
  for (const r of data.runs) cells[r.task][r.column].push(r);
  for (const row of cells) for (const runs of row) runs.sort((a, b) => a.repeat - b.repeat);

  // outcome sums up a cell: its mark (✓, ✗, —, k/n) and a key that two
  // cells share when they succeeded alike; null for a cell not run.
  function outcome(runs) {
    if (!runs.length) return null;
    const scored = runs.filter((r) => r.scored);
    const ok = scored.filter((r) => r.correct).length;
    if (!scored.length) return {mark: '—', cls: 'unscored', key: 'unscored'};
    const cls = ok === scored.length ? 'ok' : ok === 0 ? 'bad' : 'mixed';
    const mark = runs.length === 1 ? (ok ? '✓' : '✗') : ok + '/' + scored.length;
    return {mark, cls, key: (ok / scored.length).toFixed(6)};
  }
  const disagree = cells.map((row) => new Set(row.map(outcome).filter(Boolean).map((o) => o.key)).size > 1);

  // --- head -------------------------------------------------------------
  const notes = [
    'Each cell: ✓ correct, ✗ wrong, — not scored; k/n for repeated runs. Click a cell for its runs\' traces.',
    'Bounds: texts over ' + data.limits.event_text + ' characters (answers over ' + data.limits.answer +
      ') are cut, and a run shows its first ' + data.limits.events_per_run + ' events' +
      (data.clipped ? '; ' + data.clipped + ' texts were cut on this page.' : '.'),
  ];
  const disagreeBox = el('input', {type: 'checkbox', id: 'only-disagree'});
  const filterBox = el('input', {type: 'search', id: 'filter', placeholder: 'filter by task id or question', size: 32});
  const shown = el('span', {id: 'shown', class: 'muted'});
  root.append(
    el('header', {}, el('h1', {id: 'title'}, data.title),
      el('p', {id: 'banner', class: 'banner'}, data.banner || 'No banner: the caller did not say what produced these numbers.')),
    el('p', {class: 'muted notes'}, notes.join(' ')),
    el('div', {class: 'controls'}, el('label', {}, disagreeBox, ' only tasks where the columns disagree (' +
      disagree.filter(Boolean).length + ')'), filterBox, shown));

  const head = el('tr', {}, el('th', {class: 'task'}, 'task'));
  data.columns.forEach((c, i) => {
    const runs = cells.flatMap((row) => row[i]);
    const scored = runs.filter((r) => r.scored);
    const ok = scored.filter((r) => r.correct).length;
    head.append(el('th', {'data-col': i, title: c.model ? c.config + ' with ' + c.model : c.config}, c.label,
      el('span', {class: 'count'}, scored.length ? ok + '/' + scored.length + ' correct' : runs.length + ' runs, not scored')));
  });
  const body = el('tbody');
  const grid = el('table', {id: 'grid', class: 'grid'}, el('thead', {}, head), body);
  const detail = el('section', {id: 'detail', hidden: true});
  root.append(el('div', {class: 'scroll'}, grid), detail);

  let selected = null;
  data.tasks.forEach((t, ti) => {
    const tr = el('tr', {'data-task': t.id, 'data-disagree': String(disagree[ti])},
      el('th', {class: 'task'}, el('span', {class: 'id'}, t.id), el('span', {class: 'q', title: t.question}, short(t.question, 90))));
    data.columns.forEach((c, ci) => {
      const runs = cells[ti][ci];
      const o = outcome(runs);
      if (!o) { tr.append(el('td', {class: 'cell none', 'data-col': ci}, el('span', {class: 'muted'}, 'not run'))); return; }
      const answers = runs.map((r) => r.answer || (r.failure ? '(' + r.failure + ')' : '(no answer)'));
      const failures = runs.filter((r) => r.failure).map((r) => r.failure);
      const meta = (runs.length > 1 ? 'mean ' : '') + money(mean(runs.map((r) => r.cost_usd || 0))) + ' · ' + secs(mean(runs.map((r) => r.latency_ms || 0)));
      const td = el('td', {class: 'cell ' + o.cls, 'data-col': ci, 'data-outcome': o.mark, tabindex: 0, role: 'button',
        title: answers.join('\n---\n')},
        el('span', {class: 'mark'}, o.mark), ' ',
        el('span', {class: 'answer'}, short(answers[0], 60)),
        failures.length ? el('span', {class: 'failure'}, failures.join(', ')) : null,
        el('span', {class: 'meta'}, meta));
      const open = () => {
        if (selected) selected.classList.remove('selected');
        selected = td;
        td.classList.add('selected');
        showRuns(ti, ci);
      };
      td.addEventListener('click', open);
      td.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); open(); } });
      tr.append(td);
    });
    body.append(tr);
  });

  function applyFilters() {
    const q = filterBox.value.trim().toLowerCase();
    const only = disagreeBox.checked;
    let n = 0;
    data.tasks.forEach((t, i) => {
      const tr = body.children[i];
      const hit = (!only || disagree[i]) && (!q || t.id.toLowerCase().includes(q) || (t.question || '').toLowerCase().includes(q));
      tr.hidden = !hit;
      if (hit) n++;
    });
    shown.textContent = n + ' of ' + data.tasks.length + ' tasks';
  }
  disagreeBox.addEventListener('change', applyFilters);
  filterBox.addEventListener('input', applyFilters);
  applyFilters();

  // --- a cell's runs ------------------------------------------------------
  function usage(u) {
    if (!u) return '';
    let s = u.prompt_tokens + ' in + ' + u.completion_tokens + ' out tokens';
    if (u.cached_prompt_tokens) s += ' (' + u.cached_prompt_tokens + ' cached)';
    if (u.cost_usd) s += ' · ' + money(u.cost_usd);
    if (u.estimated) s += ' (estimated)';
    return s;
  }

  function timeline(r) {
    if (!r.events.length && !r.events_cut) {
      return el('p', {class: 'muted'}, r.trace ? 'Its events are in ' + r.trace + ' (not on this page).' : 'No trace: the comparison ran without traces.');
    }
    const ol = el('ol', {class: 'timeline'});
    for (const e of r.events) {
      ol.append(el('li', {class: 'ev ev-' + e.kind, 'data-kind': e.kind},
        el('span', {class: 'seq'}, '#' + e.seq),
        el('span', {class: 'kind'}, e.kind),
        e.node ? el('span', {class: 'node'}, e.node) : null,
        e.at_ms !== undefined ? el('span', {class: 'at'}, '+' + secs(e.at_ms)) : null,
        e.elapsed_ms ? el('span', {class: 'ms'}, Math.round(e.elapsed_ms) + ' ms') : null,
        e.usage ? el('span', {class: 'usage'}, usage(e.usage)) : null,
        e.text ? el('div', {class: 'text'}, e.text) : null,
        e.data ? el('details', {}, el('summary', {}, 'data'), el('pre', {}, e.data)) : null));
    }
    const out = [ol];
    if (r.events_cut) out.push(el('p', {class: 'cut'}, r.events_cut + ' more events cut: ' + r.why + '.'));
    return out;
  }

  function showRuns(ti, ci) {
    const t = data.tasks[ti];
    const c = data.columns[ci];
    const runs = cells[ti][ci];
    detail.replaceChildren(
      el('h2', {}, t.id + ' · ' + c.label, el('button', {type: 'button', class: 'close', onclick: () => { detail.hidden = true; }}, 'close')),
      el('p', {class: 'question'}, t.question),
      t.reference ? el('p', {class: 'reference'}, el('strong', {}, 'Reference: '), t.reference) : null,
      ...runs.map((r) => {
        const o = outcome([r]);
        const facts = [o.mark, money(r.cost_usd), secs(r.latency_ms), r.model_calls + ' model calls', r.tool_calls + ' tool calls'];
        if (r.failure) facts.push('failure: ' + r.failure);
        for (const [k, v] of Object.entries(r.scores || {})) facts.push(k + ' ' + v);
        return el('div', {class: 'run ' + o.cls, 'data-repeat': r.repeat},
          el('h3', {}, (runs.length > 1 ? 'Repeat ' + (r.repeat + 1) + ' · ' : 'Run · ') + facts.join(' · ')),
          el('div', {class: 'answer-full'}, el('strong', {}, 'Answer: '), el('span', {class: 'answer-text'}, r.answer || '(none)')),
          r.trace ? el('p', {class: 'muted'}, 'trace: ' + r.trace) : null,
          timeline(r));
      }));
    detail.hidden = false;
    detail.scrollIntoView({block: 'nearest'});
  }
})();
