// The page of `ftbound serve`: the job as editable YAML, re-planned as it changes (POST /api/plan), errors shown
// with the command line's text; a comparison across systems (POST /api/compare); the catalog (GET /api/catalog).
'use strict';
(function () {
  var el = FTB.views.el;
  var body = document.body;
  var app = el('div', { 'class': 'app' }, body);
  var nav = el('nav', {}, app);
  el('strong', {}, nav, 'ftbound');
  var tabs = {};
  var editor = el('aside', { 'class': 'editor' }, app);
  el('h3', {}, editor, 'Job (YAML, as in a job file)');
  var yaml = el('textarea', { id: 'job', spellcheck: 'false', wrap: 'off', 'aria-label': 'job file' }, editor);
  yaml.value = JSON.parse(document.getElementById('ftbound-default-job').textContent);
  var status = el('div', { 'class': 'status', id: 'status' }, editor);
  var errors = el('div', { 'class': 'errors', id: 'errors', role: 'alert' }, editor);
  var views = el('div', { 'class': 'view' }, app);
  var panes = {};
  ['plan', 'compare', 'catalog'].forEach(function (name, i) {
    tabs[name] = el('button', { type: 'button', 'data-tab': name, 'aria-selected': i === 0 ? 'true' : 'false' }, nav,
                    name.charAt(0).toUpperCase() + name.slice(1));
    panes[name] = el('div', { id: name + '-view', 'class': i === 0 ? '' : 'hidden' }, views);
    tabs[name].addEventListener('click', function () { select(name); });
  });
  function select(name) {
    Object.keys(tabs).forEach(function (n) {
      tabs[n].setAttribute('aria-selected', n === name ? 'true' : 'false');
      panes[n].className = n === name ? '' : 'hidden';
    });
    if (name === 'catalog') loadCatalog();
    if (name === 'compare') loadCatalog();
  }
  var planRoot = el('main', { id: 'report' }, panes.plan);

  function post(url, text) {
    return fetch(url, { method: 'POST', body: text, headers: { 'Content-Type': 'application/yaml' } })
      .then(function (r) { return r.json().then(function (j) { return { status: r.status, json: j }; }); });
  }
  function showErrors(json) {
    errors.textContent = (json.errors || ['error: the server answered without an error line']).join('\n');
  }

  // ---- plan: re-planned a moment after each edit; answers to older edits are dropped ----
  var sent = 0, shown = 0, timer = null;
  function plan() {
    var seq = ++sent, t0 = Date.now();
    status.textContent = 'planning...';
    post('/api/plan', yaml.value).then(function (r) {
      if (seq < shown) return;
      shown = seq;
      if (r.status === 200) {
        errors.textContent = '';
        FTB.views.plan(planRoot, r.json);
        planRoot.classList.remove('stale');
        status.textContent = 'planned in ' + (Date.now() - t0) + ' ms';
      } else {
        showErrors(r.json);
        planRoot.classList.add('stale');
        status.textContent = planRoot.childNodes.length ? 'the last plan that worked is shown, dimmed' : '';
      }
      body.setAttribute('data-plan-seq', String(seq));
    }).catch(function (e) {
      errors.textContent = 'error: the server did not answer (' + e + ')';
      body.setAttribute('data-plan-seq', String(seq));
    });
  }
  yaml.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(plan, 350);
  });

  // ---- catalog ----
  var catalog = null, catalogLoad = null;
  function loadCatalog() {
    if (!catalogLoad)
      catalogLoad = fetch('/api/catalog').then(function (r) { return r.json(); }).then(function (j) {
        catalog = j;
        drawCatalog();
        drawCompareControls();
        body.setAttribute('data-catalog', 'loaded');
        return j;
      });
    return catalogLoad;
  }
  var catControls = el('div', { 'class': 'controls' }, panes.catalog);
  var catSection = el('select', { id: 'catalog-section', 'aria-label': 'catalog section' }, catControls);
  var catFilter = el('input', { type: 'text', id: 'catalog-filter', placeholder: 'filter by name', 'aria-label': 'filter' },
                     catControls);
  var catTable = el('div', { id: 'catalog-table' }, panes.catalog);
  catSection.addEventListener('change', drawCatalogTable);
  catFilter.addEventListener('input', drawCatalogTable);
  function drawCatalog() {
    Object.keys(catalog).forEach(function (s) { el('option', { value: s }, catSection, s + ' (' + catalog[s].length + ')'); });
    drawCatalogTable();
  }
  function flat(v) {
    if (v === null || v === undefined) return '';
    if (typeof v === 'object') return Object.keys(v).map(function (k) { return k + ' ' + v[k]; }).join(', ');
    return String(v);
  }
  function drawCatalogTable() {
    var rows = catalog[catSection.value] || [], q = catFilter.value.toLowerCase();
    rows = rows.filter(function (r) { return !q || String(r.name).toLowerCase().indexOf(q) >= 0; });
    var cols = rows.length ? Object.keys(rows[0]) : ['name'];
    catTable.textContent = '';
    FTB.views.table(catTable, 'catalog', cols, rows.map(function (r) { return cols.map(function (c) { return flat(r[c]); }); }));
  }

  // ---- compare: the job on the systems ticked ----
  var cmpControls = el('div', { 'class': 'controls', id: 'compare-systems' }, panes.compare);
  var cmpRun = el('button', { type: 'button', id: 'compare-run' }, panes.compare, 'Compare on the systems ticked');
  var cmpRoot = el('main', { id: 'compare-report' }, panes.compare);
  function drawCompareControls() {
    (catalog.systems || []).forEach(function (s, i) {
      var l = el('label', {}, cmpControls);
      el('input', { type: 'checkbox', value: s.name, checked: i < 3 ? 'checked' : null }, l);
      l.appendChild(document.createTextNode(' ' + s.name));
    });
  }
  cmpRun.addEventListener('click', function () {
    var names = Array.prototype.map.call(cmpControls.querySelectorAll('input:checked'), function (c) { return c.value; });
    status.textContent = 'comparing...';
    post('/api/compare?hardware=' + encodeURIComponent(names.join(',')), yaml.value).then(function (r) {
      if (r.status === 200) {
        errors.textContent = '';
        FTB.views.compare(cmpRoot, r.json);
        status.textContent = 'compared on ' + names.length + ' systems';
      } else {
        showErrors(r.json);
        status.textContent = '';
      }
      body.setAttribute('data-compared', String(r.status));
    });
  });

  plan();
})();
