// ftbound charts: small SVG charts drawn from plain numbers (no library, no network). Every mark carries a
// <title> with its exact figure; every chart is an <svg data-chart="NAME"> so tests and users can find it.
'use strict';
var FTB = window.FTB || {};
window.FTB = FTB;

FTB.fmt = (function () {
  // The same rules as the text report (src/report/table.cpp), so a figure reads the same everywhere.
  function fixed(x, d) { return Number(x).toFixed(d); }
  function bytes(b) {
    var a = Math.abs(b);
    if (a >= 1099511627776) return fixed(b / 1099511627776, 2) + ' TiB';
    if (a >= 1073741824) return fixed(b / 1073741824, 2) + ' GiB';
    if (a >= 1048576) return fixed(b / 1048576, 1) + ' MiB';
    if (a >= 1024) return fixed(b / 1024, 1) + ' KiB';
    return fixed(b, 0) + ' B';
  }
  function seconds(s) {
    if (!isFinite(s)) return 'n/a';
    if (s < 1e-3) return fixed(s * 1e6, 1) + ' us';
    if (s < 1) return fixed(s * 1e3, 2) + ' ms';
    if (s < 120) return fixed(s, 2) + ' s';
    if (s < 7200) return fixed(s / 60, 1) + ' min';
    if (s < 3 * 86400) return fixed(s / 3600, 1) + ' h';
    return fixed(s / 86400, 1) + ' days';
  }
  function count(n) {
    var a = Math.abs(n);
    if (a >= 1e12) return fixed(n / 1e12, 2) + 'T';
    if (a >= 1e9) return fixed(n / 1e9, 2) + 'B';
    if (a >= 1e6) return fixed(n / 1e6, 1) + 'M';
    if (a >= 1e4) return fixed(n / 1e3, 1) + 'K';
    return fixed(n, 0);
  }
  function percent(f, d) { return fixed(f * 100, d === undefined ? 1 : d) + '%'; }
  // Three significant figures; whole numbers from 1000 up.
  function number(x) { return Math.abs(x) >= 1000 ? fixed(x, 0) : Number(x).toPrecision(3); }
  function times(x) { return fixed(x, 2) + 'x'; }
  function money(x) { return fixed(x, 2); }
  return { bytes: bytes, seconds: seconds, count: count, percent: percent, number: number, times: times, money: money };
})();

FTB.colors = {
  // Resource vocabulary (CONTRACT.md) and diagnose's `idle`.
  resource: {
    compute: '#4e79a7', memory_bandwidth: '#59a14f', memory_capacity: '#8cd17d', pcie: '#f28e2b',
    gpu_interconnect: '#e15759', network: '#b6992d', host_memory: '#76b7b2', host_cpu: '#499894',
    storage: '#9d7660', launch_overhead: '#bab0ac', pipeline_bubble: '#d4a6c8', data_loading: '#ff9d9a',
    power: '#b07aa1', idle: '#d7d7d7'
  },
  memory: {
    weights: '#4e79a7', gradients: '#f28e2b', optimizer: '#e15759', activations: '#59a14f', logits: '#edc948',
    temporary: '#b07aa1', allocator: '#9c755f', context: '#bab0ac'
  },
  series: ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'],
  forResource: function (r, i) { return this.resource[r] || this.series[(i || 0) % this.series.length]; }
};

FTB.charts = (function () {
  var SVG = 'http://www.w3.org/2000/svg';

  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function label(parent, x, y, str, attrs) {
    var t = svg('text', Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = str;
    return t;
  }
  function tip(mark, str) { svg('title', {}, mark).textContent = str; return mark; }
  function root(container, name, width, height, description) {
    var s = svg('svg', { 'data-chart': name, viewBox: '0 0 ' + width + ' ' + height, width: width, height: height,
                         role: 'img', 'class': 'chart' }, container);
    svg('desc', {}, s).textContent = description;
    return s;
  }
  function legend(container, items) {
    var box = document.createElement('div');
    box.className = 'legend';
    items.forEach(function (it) {
      var span = document.createElement('span');
      var sw = document.createElement('i');
      sw.style.background = it.color;
      span.appendChild(sw);
      span.appendChild(document.createTextNode(it.label));
      box.appendChild(span);
    });
    container.appendChild(box);
    return box;
  }
  // Round axis steps: 1, 2, 5 times a power of ten, about `n` ticks up to `max`.
  function ticks(max, n) {
    if (!(max > 0)) return [0];
    var raw = max / (n || 5), p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    var step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p, out = [];
    for (var v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }

  // One horizontal bar split into segments, against reference lines (e.g. capacity) and a shaded range.
  // opts: {name, segments:[{label,value,color}], refs:[{label,value}], band:[lo,hi], fmt, width}
  function stackedBar(container, opts) {
    var W = opts.width || 1000, H = 74, left = 8, right = 8, top = 22, barH = 28;
    var total = opts.segments.reduce(function (a, s) { return a + Math.max(0, s.value); }, 0);
    var max = total;
    (opts.refs || []).forEach(function (r) { max = Math.max(max, r.value); });
    if (opts.band) max = Math.max(max, opts.band[1]);
    max = max > 0 ? max * 1.04 : 1;
    var s = root(container, opts.name, W, H, opts.description || opts.name);
    var x = function (v) { return left + (W - left - right) * v / max; };
    if (opts.band) {
      tip(svg('rect', { x: x(opts.band[0]), y: top - 6, width: Math.max(1, x(opts.band[1]) - x(opts.band[0])),
                        height: barH + 12, 'class': 'band' }, s),
          (opts.bandLabel || 'uncertainty band') + ': ' + opts.fmt(opts.band[0]) + ' to ' + opts.fmt(opts.band[1]));
    }
    var at = 0;
    opts.segments.forEach(function (seg) {
      if (!(seg.value > 0)) return;
      var r = svg('rect', { x: x(at), y: top, width: Math.max(0.5, x(at + seg.value) - x(at)), height: barH,
                            fill: seg.color, 'class': 'mark', 'data-label': seg.label, 'data-value': seg.value,
                            'data-key': seg.key }, s);
      tip(r, seg.label + ': ' + opts.fmt(seg.value) + (total > 0 ? ' (' + FTB.fmt.percent(seg.value / total) + ')' : ''));
      at += seg.value;
    });
    (opts.refs || []).forEach(function (ref, i) {
      var xx = x(ref.value);
      var line = svg('line', { x1: xx, x2: xx, y1: top - 10, y2: top + barH + 10, 'class': 'ref' }, s);
      tip(line, ref.label + ': ' + opts.fmt(ref.value));
      var anchor = xx > W * 0.8 ? 'end' : 'start';
      label(s, xx + (anchor === 'end' ? -4 : 4), i % 2 ? top + barH + 20 : top - 10,
            ref.label + ' ' + opts.fmt(ref.value), { 'class': 'reflabel', 'text-anchor': anchor });
    });
    legend(container, opts.segments.filter(function (g) { return g.value > 0; })
      .map(function (g) { return { label: g.label + ' ' + opts.fmt(g.value), color: g.color }; }));
    return s;
  }

  // Several stacked bars on one scale, one per row (e.g. measured beside predicted).
  // opts: {name, rows:[{label, segments:[{label,value,color}]}], fmt}
  function stackedRows(container, opts) {
    var W = opts.width || 1000, labelW = 120, rowH = 34, top = 8;
    var H = top + opts.rows.length * rowH + 18;
    var max = 0;
    opts.rows.forEach(function (r) {
      max = Math.max(max, r.segments.reduce(function (a, g) { return a + Math.max(0, g.value); }, 0));
    });
    max = max > 0 ? max * 1.02 : 1;
    var s = root(container, opts.name, W, H, opts.description || opts.name);
    var x = function (v) { return labelW + (W - labelW - 10) * v / max; };
    var seen = {}, keys = [];
    opts.rows.forEach(function (row, i) {
      var y = top + i * rowH;
      label(s, labelW - 6, y + 18, row.label, { 'text-anchor': 'end', 'class': 'rowlabel' });
      var at = 0;
      row.segments.forEach(function (g) {
        if (!(g.value > 0)) return;
        tip(svg('rect', { x: x(at), y: y, width: Math.max(0.5, x(at + g.value) - x(at)), height: rowH - 8, fill: g.color,
                          'class': 'mark', 'data-label': g.label, 'data-value': g.value }, s),
            row.label + ', ' + g.label + ': ' + opts.fmt(g.value));
        at += g.value;
        if (!seen[g.label]) { seen[g.label] = 1; keys.push({ label: g.label, color: g.color }); }
      });
      label(s, Math.min(x(at) + 4, W - 4), y + 18, opts.fmt(at), { 'class': 'value', 'text-anchor': x(at) + 60 > W ? 'end' : 'start' });
    });
    legend(container, keys);
    return s;
  }

  // Horizontal bars from a base value (1 for speed-ups, 0 otherwise). opts: {name, items:[{label,value,color,text}], base, fmt}
  function bars(container, opts) {
    var W = opts.width || 1000, labelW = opts.labelWidth || 300, rowH = 26, top = 6;
    var H = top + opts.items.length * rowH + 22, base = opts.base || 0;
    var max = base;
    opts.items.forEach(function (it) { max = Math.max(max, it.value); });
    if (max <= base) max = base + 1;
    var span = (max - base) * 1.15;
    var right = 150;   // room for the value written after the longest bar
    var s = root(container, opts.name, W, H, opts.description || opts.name);
    var x = function (v) { return labelW + (W - labelW - right) * (v - base) / span; };
    opts.items.forEach(function (it, i) {
      var y = top + i * rowH;
      var name = it.label.length > 48 ? it.label.slice(0, 46) + '...' : it.label;
      tip(label(s, labelW - 6, y + 16, name, { 'text-anchor': 'end', 'class': 'rowlabel' }), it.label);
      var w = Math.max(0.5, x(Math.max(base, it.value)) - x(base));
      tip(svg('rect', { x: x(base), y: y + 3, width: w, height: rowH - 8, fill: it.color, 'class': 'mark',
                        'data-label': it.label, 'data-value': it.value, 'data-key': it.key }, s), it.label + ': ' + (it.text || opts.fmt(it.value)));
      label(s, x(base) + w + 4, y + 16, it.text || opts.fmt(it.value), { 'class': 'value' });
    });
    svg('line', { x1: x(base), x2: x(base), y1: top, y2: H - 18, 'class': 'axis' }, s);
    label(s, x(base), H - 4, opts.fmt(base), { 'class': 'tick', 'text-anchor': 'middle' });
    return s;
  }

  // Memory through the step: stacked areas by kind over the walk's points, phases shaded, the peak marked.
  // opts: {name, points:[{phase, block, parts:{kind:bytes}}], kinds:[{key,label,color}], peak:{index,label}, refs:[{label,value}], fmt}
  function walk(container, opts) {
    var W = opts.width || 1000, H = 280, left = 74, right = 12, top = 26, bottom = 34;
    var n = opts.points.length;
    var totals = opts.points.map(function (p) {
      return opts.kinds.reduce(function (a, k) { return a + (p.parts[k.key] || 0); }, 0);
    });
    var max = Math.max.apply(null, totals.concat((opts.refs || []).map(function (r) { return r.value; }))) * 1.05 || 1;
    var s = root(container, opts.name, W, H, opts.description || opts.name);
    var x = function (i) { return left + (W - left - right) * (n > 1 ? i / (n - 1) : 0.5); };
    var y = function (v) { return top + (H - top - bottom) * (1 - v / max); };
    // Phase bands.
    var start = 0;
    for (var i = 1; i <= n; i++) {
      if (i === n || opts.points[i].phase !== opts.points[start].phase) {
        var x0 = start === 0 ? left : (x(start - 1) + x(start)) / 2, x1 = i === n ? W - right : (x(i - 1) + x(i)) / 2;
        svg('rect', { x: x0, y: top, width: Math.max(0, x1 - x0), height: H - top - bottom,
                      'class': 'phase phase-' + opts.points[start].phase.replace(/ /g, '-') }, s);
        label(s, (x0 + x1) / 2, H - bottom + 26, opts.points[start].phase, { 'class': 'tick', 'text-anchor': 'middle' });
        start = i;
      }
    }
    var unit = opts.unit || 1;
    ticks(max / unit, 6).map(function (v) { return v * unit; }).forEach(function (v) {
      svg('line', { x1: left, x2: W - right, y1: y(v), y2: y(v), 'class': 'grid' }, s);
      label(s, left - 6, y(v) + 4, opts.fmt(v), { 'class': 'tick', 'text-anchor': 'end' });
    });
    // Stacked areas, bottom kind first.
    var below = opts.points.map(function () { return 0; });
    opts.kinds.forEach(function (k) {
      var upper = opts.points.map(function (p, i) { return below[i] + (p.parts[k.key] || 0); });
      if (upper.every(function (v, i) { return v === below[i]; })) return;
      var pts = [];
      for (var i = 0; i < n; i++) pts.push(x(i) + ',' + y(upper[i]));
      for (var j = n - 1; j >= 0; j--) pts.push(x(j) + ',' + y(below[j]));
      tip(svg('polygon', { points: pts.join(' '), fill: k.color, 'class': 'mark area', 'data-label': k.label }, s), k.label);
      below = upper;
    });
    // Hover targets: one thin column per point with the whole composition in its title.
    opts.points.forEach(function (p, i) {
      var w = Math.max(2, (W - left - right) / Math.max(1, n));
      var parts = opts.kinds.filter(function (k) { return p.parts[k.key] > 0; })
        .map(function (k) { return k.label + ' ' + opts.fmt(p.parts[k.key]); }).join(', ');
      tip(svg('rect', { x: x(i) - w / 2, y: top, width: w, height: H - top - bottom, 'class': 'hover',
                        'data-total': totals[i] }, s),
          p.phase + (p.block !== null && p.block !== undefined ? ' block ' + p.block : '') + ': ' + opts.fmt(totals[i]) +
          (parts ? ' (' + parts + ')' : ''));
    });
    (opts.refs || []).forEach(function (r) {
      svg('line', { x1: left, x2: W - right, y1: y(r.value), y2: y(r.value), 'class': 'ref' }, s);
      label(s, W - right - 4, y(r.value) - 4, r.label + ' ' + opts.fmt(r.value), { 'class': 'reflabel', 'text-anchor': 'end' });
    });
    if (opts.peak && opts.peak.index >= 0 && opts.peak.index < n) {
      var px = x(opts.peak.index), py = y(totals[opts.peak.index]);
      tip(svg('circle', { cx: px, cy: py, r: 5, 'class': 'peak', 'data-value': totals[opts.peak.index] }, s), opts.peak.label);
      label(s, Math.min(Math.max(px, left + 80), W - right - 80), Math.max(py - 9, 12), opts.peak.label,
            { 'class': 'peaklabel', 'text-anchor': 'middle' });
    }
    legend(container, opts.kinds.filter(function (k) {
      return opts.points.some(function (p) { return p.parts[k.key] > 0; });
    }));
    return s;
  }

  // Small multiples: one bar chart per metric, one bar per category (system), same order everywhere.
  // opts: {name, categories:[label], metrics:[{title, values:[number|null], fmt}]}
  function multiples(container, opts) {
    var per = 330, W = per * opts.metrics.length, rowH = 24, labelW = 0, top = 24;
    var H = top + opts.categories.length * rowH + 8;
    var s = root(container, opts.name, W, H, opts.description || opts.name);
    opts.metrics.forEach(function (m, mi) {
      var ox = mi * per + 8, inner = per - 24;
      label(s, ox, 14, m.title, { 'class': 'subtitle' });
      var max = Math.max.apply(null, m.values.map(function (v) { return v === null ? 0 : v; })) || 1;
      m.values.forEach(function (v, i) {
        var y = top + i * rowH;
        if (v === null || v === undefined) {
          label(s, ox + labelW, y + 15, 'n/a', { 'class': 'value muted' });
          return;
        }
        var w = Math.max(0.5, (inner - 70) * v / max);
        tip(svg('rect', { x: ox + labelW, y: y + 2, width: w, height: rowH - 8, fill: FTB.colors.series[i % 10],
                          'class': 'mark', 'data-label': opts.categories[i], 'data-value': v }, s),
            opts.categories[i] + ', ' + m.title + ': ' + m.fmt(v));
        label(s, ox + labelW + w + 4, y + 15, m.fmt(v), { 'class': 'value' });
      });
    });
    legend(container, opts.categories.map(function (c, i) { return { label: c, color: FTB.colors.series[i % 10] }; }));
    return s;
  }

  // Scatter of configurations: x and y figures, highlighted ones (a Pareto front) joined by a line.
  // opts: {name, points:[{x,y,label,front}], xLabel, yLabel, fx, fy}
  function scatter(container, opts) {
    var W = opts.width || 1000, H = 320, left = 70, right = 16, top = 16, bottom = 44;
    var xs = opts.points.map(function (p) { return p.x; }), ys = opts.points.map(function (p) { return p.y; });
    var xmax = Math.max.apply(null, xs) * 1.08 || 1, ymax = Math.max.apply(null, ys) * 1.08 || 1;
    var s = root(container, opts.name, W, H, opts.description || opts.name);
    var x = function (v) { return left + (W - left - right) * v / xmax; };
    var y = function (v) { return top + (H - top - bottom) * (1 - v / ymax); };
    ticks(ymax, 4).forEach(function (v) {
      svg('line', { x1: left, x2: W - right, y1: y(v), y2: y(v), 'class': 'grid' }, s);
      label(s, left - 6, y(v) + 4, opts.fy(v), { 'class': 'tick', 'text-anchor': 'end' });
    });
    ticks(xmax, 5).forEach(function (v) {
      label(s, x(v), H - bottom + 16, opts.fx(v), { 'class': 'tick', 'text-anchor': 'middle' });
    });
    label(s, (left + W) / 2, H - 6, opts.xLabel, { 'class': 'axislabel', 'text-anchor': 'middle' });
    label(s, 12, top + 8, opts.yLabel, { 'class': 'axislabel' });
    var front = opts.points.filter(function (p) { return p.front; }).sort(function (a, b) { return a.x - b.x; });
    if (front.length > 1)
      svg('polyline', { points: front.map(function (p) { return x(p.x) + ',' + y(p.y); }).join(' '), 'class': 'frontline' }, s);
    opts.points.forEach(function (p) {
      tip(svg('circle', { cx: x(p.x), cy: y(p.y), r: p.front ? 6 : 4, 'class': 'mark ' + (p.front ? 'front' : 'dot'),
                          'data-label': p.label, 'data-value': p.x }, s),
          p.label + ': ' + opts.fx(p.x) + ', ' + opts.fy(p.y));
    });
    return s;
  }

  return { stackedBar: stackedBar, stackedRows: stackedRows, bars: bars, walk: walk, multiples: multiples,
           scatter: scatter, legend: legend };
})();
