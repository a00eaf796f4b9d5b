// ftbound views: one function per command, drawing that command's --json document. The page holds nothing the
// document does not: every figure is an element with data-key (its dotted path in the document), data-value
// (the exact number) and the text the terminal report would print for it.
'use strict';
FTB.views = (function () {
  var fmt = FTB.fmt, charts = FTB.charts, colors = FTB.colors;

  function el(tag, attrs, parent, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function get(doc, path) {
    return path.split('.').reduce(function (o, k) { return o === null || o === undefined ? undefined : o[k]; }, doc);
  }
  function isNum(v) { return typeof v === 'number' && isFinite(v); }
  function show(value, format) { return isNum(value) ? fmt[format](value) : 'n/a'; }
  // A figure: the label, and the value as the terminal prints it, tagged with its place in the JSON document.
  function figure(parent, label, key, value, format, extra) {
    var f = el('div', { 'class': 'fig', 'data-key': key, 'data-value': isNum(value) ? String(value) : 'null',
                        'data-format': format }, parent);
    el('span', { 'class': 'v' }, f, show(value, format));
    el('span', { 'class': 'l' }, f, label + (extra ? ' ' + extra : ''));
    return f;
  }
  function figures(parent) { return el('div', { 'class': 'figs' }, parent); }
  function section(parent, title, id) {
    var s = el('section', { id: id }, parent);
    el('h2', {}, s, title);
    return s;
  }
  // cells: strings, or {text, key, value, format} for figures inside tables.
  function table(parent, name, headers, rows) {
    var t = el('table', { 'data-table': name }, parent);
    var tr = el('tr', {}, el('thead', {}, t));
    headers.forEach(function (h) { el('th', {}, tr, h); });
    var body = el('tbody', {}, t);
    rows.forEach(function (r) {
      var row = el('tr', {}, body);
      r.forEach(function (c) {
        if (c !== null && typeof c === 'object' && c.clip !== undefined)
          el('td', { 'class': 'clip', title: c.clip }, row, c.clip);
        else if (c !== null && typeof c === 'object')
          el('td', { 'data-key': c.key, 'data-value': isNum(c.value) ? String(c.value) : 'null', 'data-format': c.format,
                     'class': 'num' }, row, c.text !== undefined ? c.text : show(c.value, c.format));
        else el('td', {}, row, c === null || c === undefined ? '' : String(c));
      });
    });
    return t;
  }
  function cell(doc, key, format, base) {
    return { key: (base ? base + '.' : '') + key, value: get(doc, key), format: format };
  }
  function verdictOf(memory) {
    if (!memory) return 'error';
    if (memory.verdict) return memory.verdict;
    return memory.fits ? 'fits' : 'does_not_fit';
  }
  var verdictText = { fits: 'fits', tight: 'tight', does_not_fit: 'does not fit', error: 'error' };

  // ---- plan ----
  var memoryKinds = [
    { key: 'weights', label: 'weights' }, { key: 'gradients', label: 'gradients' },
    { key: 'optimizer', label: 'optimizer states' }, { key: 'activations', label: 'activations' },
    { key: 'logits', label: 'logits and loss' }, { key: 'temporary', label: 'temporary' }
  ].map(function (k) { k.color = colors.memory[k.key]; return k; });

  // The peak by kind, then what sits above the live tensors: the allocator's cache (reserved - allocated) and the
  // CUDA context and communicator buffers; they sum to device_used.
  function peakSegments(m) {
    var segs = memoryKinds.map(function (k) {
      return { label: k.label, value: m.breakdown[k.key] || 0, color: k.color, key: 'memory.breakdown.' + k.key };
    });
    var allocator = m.reserved_peak_bytes - m.allocated_peak_bytes;
    var context = (m.cuda_context_bytes || 0) + (m.comm_buffer_bytes || 0);
    segs.push({ label: 'allocator cache', value: allocator, color: colors.memory.allocator });
    segs.push({ label: 'CUDA context and communicator buffers', value: context, color: colors.memory.context });
    return segs;
  }

  function memoryBanner(parent, doc) {
    var m = doc.memory, v = verdictOf(m);
    var b = el('div', { 'class': 'verdict ' + v, 'data-key': m.verdict ? 'memory.verdict' : 'memory.fits',
                        'data-value': m.verdict ? v : String(m.fits) }, parent);
    el('strong', {}, b, verdictText[v].toUpperCase());
    var who = 'per device';
    b.appendChild(document.createTextNode(': ' + fmt.bytes(m.device_used_bytes) + ' of ' + fmt.bytes(m.capacity_bytes) + ' ' +
      who + ' (' + fmt.percent(m.device_used_bytes / m.capacity_bytes, 0) + ' used), peak in the ' + m.peak_phase +
      (isNum(m.margin_bytes) ? '; margin ' + fmt.bytes(m.margin_bytes) : '') +
      (m.host_fits === false ? '; the host RAM is too small for the offloaded state' : '')));
    return b;
  }

  function memorySection(parent, doc) {
    var m = doc.memory, s = section(parent, 'Memory per GPU', 'memory');
    var f = figures(s);
    figure(f, 'allocated peak', 'memory.allocated_peak_bytes', m.allocated_peak_bytes, 'bytes');
    if (m.typical_step_allocated_peak_bytes < m.allocated_peak_bytes)
      figure(f, 'allocated peak of a typical step (unpacked data)', 'memory.typical_step_allocated_peak_bytes',
             m.typical_step_allocated_peak_bytes, 'bytes');
    figure(f, 'reserved peak', 'memory.reserved_peak_bytes', m.reserved_peak_bytes, 'bytes');
    figure(f, 'device used', 'memory.device_used_bytes', m.device_used_bytes, 'bytes');
    figure(f, 'capacity', 'memory.capacity_bytes', m.capacity_bytes, 'bytes');
    if (m.paged_bytes > 0)
      figure(f, 'paged optimizer states (unified memory, not in device used)', 'memory.paged_bytes', m.paged_bytes, 'bytes');
    if (m.host_bytes > 0) figure(f, 'host RAM per node', 'memory.host_bytes', m.host_bytes, 'bytes');
    if (doc.limits) {
      figure(f, 'largest micro-batch that fits', 'limits.max_micro_batch', doc.limits.max_micro_batch, 'count');
      figure(f, 'longest sequence at this micro-batch', 'limits.max_seq_len', doc.limits.max_seq_len, 'count');
    }
    el('h3', {}, s, 'At the peak, by kind, against the capacity');
    charts.stackedBar(s, {
      name: 'memory-peak', segments: peakSegments(m), fmt: fmt.bytes,
      refs: [{ label: 'capacity', value: m.capacity_bytes }],
      band: Array.isArray(m.band_bytes) ? m.band_bytes : null, bandLabel: 'uncertainty band of device used',
      description: 'memory at the peak by kind, stacked, against the GPU capacity'
    });
    var walk = doc.memory_walk;
    if (walk && walk.points && walk.points.length) {
      el('h3', {}, s, 'Through the step' + (walk.stage > 0 ? ' (pipeline stage ' + walk.stage + ')' : '') +
         ': allocated tensors');
      var peak = 0;
      walk.points.forEach(function (p, i) { if (p.allocated_bytes > walk.points[peak].allocated_bytes) peak = i; });
      var pp = walk.points[peak];
      charts.walk(s, {
        name: 'memory-walk', fmt: fmt.bytes, kinds: memoryKinds, unit: 1073741824,
        points: walk.points.map(function (p) { return { phase: p.phase, block: p.block, parts: p }; }),
        peak: { index: peak, label: 'peak ' + fmt.bytes(pp.allocated_bytes) + ' (' + pp.phase +
                (pp.block !== null ? ', block ' + pp.block : '') + ')' },
        refs: [{ label: 'capacity', value: m.capacity_bytes }],
        description: 'allocated memory by kind through forward, loss, backward and the optimizer step'
      });
    }
  }

  function timeSection(parent, doc) {
    var st = doc.step, s = section(parent, 'Time of one optimizer step', 'time');
    var f = figures(s);
    figure(f, 'step', 'step.seconds', st.seconds, 'seconds');
    figure(f, 'bottleneck share', 'bottleneck.share', doc.bottleneck.share, 'percent', '(' + doc.bottleneck.resource + ')');
    el('p', { 'class': 'sentence', 'data-key': 'bottleneck.why' }, s, doc.bottleneck.why || '');
    el('h3', {}, s, 'Where the step goes, by resource');
    var byResource = {};
    st.breakdown.forEach(function (p) { byResource[p.resource] = (byResource[p.resource] || 0) + p.seconds; });
    charts.stackedBar(s, {
      name: 'time-by-resource', fmt: fmt.seconds,
      segments: Object.keys(byResource).sort(function (a, b) { return byResource[b] - byResource[a]; }).map(function (r) {
        return { label: r, value: byResource[r], color: colors.forResource(r) };
      }),
      description: 'the step time summed by the resource each second is attributed to'
    });
    el('h3', {}, s, 'By phase');
    charts.stackedBar(s, {
      name: 'time-breakdown', fmt: fmt.seconds,
      segments: st.breakdown.map(function (p, i) {
        return { label: p.phase + ' [' + p.resource + ']', value: p.seconds, color: colors.forResource(p.resource),
                 key: 'step.breakdown.' + i + '.seconds' };
      }),
      description: 'the step time split by phase, coloured by the resource each second is attributed to'
    });
    table(s, 'step-breakdown', ['phase', 'seconds', 'share', 'resource'], st.breakdown.map(function (p, i) {
      return [p.phase, { key: 'step.breakdown.' + i + '.seconds', value: p.seconds, format: 'seconds' },
              fmt.percent(st.seconds > 0 ? p.seconds / st.seconds : 0), p.resource];
    }));
    var c = st.communication;
    if (c && c.seconds > 0) {
      el('h3', {}, s, 'Communication: exposed on the critical path vs hidden under compute');
      var cf = figures(s);
      figure(cf, 'communication', 'step.communication.seconds', c.seconds, 'seconds',
             '(' + fmt.percent(c.seconds / st.seconds) + ' of the step)');
      figure(cf, 'exposed', 'step.communication.exposed_seconds', c.exposed_seconds, 'seconds');
      figure(cf, 'overlapped', 'step.communication.overlapped_seconds', c.overlapped_seconds, 'seconds');
      charts.stackedBar(s, {
        name: 'communication', fmt: fmt.seconds,
        segments: [{ label: 'exposed', value: c.exposed_seconds, color: colors.resource.gpu_interconnect,
                     key: 'step.communication.exposed_seconds' },
                   { label: 'overlapped with compute', value: c.overlapped_seconds, color: '#a0cbe8',
                     key: 'step.communication.overlapped_seconds' }],
        description: 'communication time of one step: exposed vs overlapped'
      });
    }
    var t = doc.throughput, g = figures(s);
    figure(g, 'tokens/s', 'throughput.tokens_per_second', t.tokens_per_second, 'count');
    figure(g, 'tokens/s per GPU', 'throughput.tokens_per_second_per_gpu', t.tokens_per_second_per_gpu, 'count');
    figure(g, 'MFU', 'throughput.mfu', t.mfu, 'percent');
    if (isNum(t.mfu_6n)) figure(g, 'MFU (6N convention)', 'throughput.mfu_6n', t.mfu_6n, 'percent');
    figure(g, 'HFU', 'throughput.hfu', t.hfu, 'percent');
  }

  function weakSection(parent, doc) {
    var s = section(parent, 'Weak points: the step with each resource made 2x better', 'weak');
    var items = [], headroom = null;
    doc.weak_points.forEach(function (w, i) {
      if (w.resource === 'memory_capacity') headroom = { w: w, i: i };
      else items.push({ label: w.what + ' (' + w.resource + ')', value: w.impact, color: colors.forResource(w.resource, i),
                        text: fmt.times(w.impact) + ' faster', key: 'weak_points.' + i + '.impact' });
    });
    if (items.length)
      charts.bars(s, { name: 'weak-points', items: items, base: 1, fmt: fmt.times, labelWidth: 360,
                       description: 'speed-up of the step when each resource is made twice as good' });
    if (headroom)
      figure(figures(s), 'of the GPU memory left (' + headroom.w.what + ')', 'weak_points.' + headroom.i + '.impact', headroom.w.impact,
             'percent');
  }

  function recommendationsSection(parent, doc) {
    if (doc.recommendations && doc.recommendations.length) {
      var s = section(parent, 'What to change (each re-planned; all fit)', 'recommendations');
      table(s, 'recommendations', ['change', 'step', 'speed-up', 'memory per GPU', 'changes the training', 'set'],
        doc.recommendations.map(function (r, i) {
          var b = 'recommendations.' + i;
          return [r.what, { key: b + '.step_seconds', value: r.step_seconds, format: 'seconds' },
                  { key: b + '.speedup', value: r.speedup, format: 'times' },
                  { key: b + '.device_used_bytes', value: r.device_used_bytes, format: 'bytes' },
                  r.changes_training ? 'yes' : 'no', (r.set || []).map(function (x) { return '--set ' + x; }).join(' ')];
        }));
    }
    if (doc.fits_with && doc.fits_with.length) {
      var t = section(parent, 'What would make it fit (each re-planned)', 'fits-with');
      table(t, 'fits-with', ['change', 'memory per GPU', 'fits', 'set'], doc.fits_with.map(function (r, i) {
        return [r.what, { key: 'fits_with.' + i + '.device_used_bytes', value: r.device_used_bytes, format: 'bytes' },
                r.fits ? 'yes' : 'no', (r.set || []).map(function (x) { return '--set ' + x; }).join(' ')];
      }));
    }
  }

  function operationsSection(parent, doc) {
    var s = section(parent, 'Power, reliability, energy and cost', 'operations');
    var pw = doc.power, panel = el('div', { 'class': 'panel' }, s);
    if (pw) {
      var refs = [];
      if (pw.psu_capacity_w > 0) refs.push({ label: 'supplies', value: pw.psu_capacity_w });
      if (pw.psu_capacity_after_failure_w > 0)
        refs.push({ label: 'after losing ' + pw.psu_failures_tolerated + ' supply', value: pw.psu_capacity_after_failure_w });
      charts.stackedBar(panel, {
        name: 'power', fmt: function (w) { return fmt.number(w) + ' W'; }, refs: refs,
        segments: [{ label: 'node draw', value: pw.node_w, color: colors.resource.power, key: 'power.node_w' }],
        description: 'power drawn by one node against its power supplies'
      });
      var pf = figures(panel);
      figure(pf, 'W per GPU', 'power.device_w', pw.device_w, 'number');
      figure(pf, 'W per node', 'power.node_w', pw.node_w, 'number');
      if (isNum(pw.sustained_clock_fraction) && pw.sustained_clock_fraction < 1)
        figure(pf, 'tensor-core clock under the power limit', 'power.sustained_clock_fraction',
               pw.sustained_clock_fraction, 'percent');
      if (pw.note) el('p', { 'class': 'note' }, panel, pw.note);
    }
    var r = doc.reliability || {}, rf = figures(panel);
    figure(rf, 'expected interruptions', 'reliability.expected_interruptions', r.expected_interruptions, 'number');
    figure(rf, 'checkpoint every', 'reliability.checkpoint_interval_seconds', r.checkpoint_interval_seconds, 'seconds');
    figure(rf, 'goodput', 'reliability.goodput', r.goodput, 'percent');
    figure(rf, 'job MTBF', 'reliability.job_mtbf_seconds', r.job_mtbf_seconds, 'seconds');
    var ef = figures(panel);
    figure(ef, 'time to train', 'time_to_train_seconds', doc.time_to_train_seconds, 'seconds');
    figure(ef, 'kWh at the meter', 'energy_kwh', doc.energy_kwh, 'number');
    figure(ef, 'cost', 'cost', doc.cost, 'money');
    if (doc.cost_detail) {
      figure(ef, 'of it compute', 'cost_detail.compute', doc.cost_detail.compute, 'money');
      figure(ef, 'of it energy', 'cost_detail.energy', doc.cost_detail.energy, 'money');
    }
    if (!isNum(doc.time_to_train_seconds))
      el('p', { 'class': 'note' }, panel, 'Job length unknown: give data.tokens for time to train, energy and cost.');
  }

  function plan(root, doc) {
    root.textContent = '';
    var h = el('header', {}, root);
    el('h1', {}, h, 'ftbound plan');
    el('p', { 'class': 'sub' }, h, doc.model + ' on ' + doc.system + ' (' + doc.gpus + ' GPUs)' + (doc.job ? ': ' + doc.job : ''));
    memoryBanner(root, doc);
    var f = figures(root);
    figure(f, 'per optimizer step', 'step.seconds', doc.step.seconds, 'seconds');
    figure(f, 'tokens/s', 'throughput.tokens_per_second', doc.throughput.tokens_per_second, 'count');
    figure(f, 'MFU', 'throughput.mfu', doc.throughput.mfu, 'percent');
    figure(f, 'time to train', 'time_to_train_seconds', doc.time_to_train_seconds, 'seconds');
    figure(f, 'cost', 'cost', doc.cost, 'money');
    memorySection(root, doc);
    timeSection(root, doc);
    weakSection(root, doc);
    recommendationsSection(root, doc);
    operationsSection(root, doc);
  }

  // ---- compare ----
  function compare(root, doc) {
    root.textContent = '';
    var rows = doc.rows || [];
    var h = el('header', {}, root);
    el('h1', {}, h, 'ftbound compare');
    el('p', { 'class': 'sub' }, h, 'the same job on ' + rows.length + ' systems');
    var names = rows.map(function (r) { return r.system + (r.nodes > 1 ? ' x' + r.nodes : ''); });
    table(root, 'compare', ['system', 'GPUs', 'memory', 'device used', 'step', 'tokens/s', 'time to train', 'cost',
                            'energy kWh', 'bottleneck', 'adapted'],
      rows.map(function (r, i) {
        var b = 'rows.' + i;
        if (r.error) return [r.system, '', 'error', r.error, '', '', '', '', '', '', ''];
        return [r.system, String(r.gpus), verdictText[verdictOf(r.memory)],
                cell(r, 'memory.device_used_bytes', 'bytes', b), cell(r, 'step.seconds', 'seconds', b),
                cell(r, 'throughput.tokens_per_second', 'count', b), cell(r, 'time_to_train_seconds', 'seconds', b),
                cell(r, 'cost', 'money', b), cell(r, 'energy_kwh', 'number', b),
                r.bottleneck.resource + ' ' + fmt.percent(r.bottleneck.share, 0),
                (r.adapted || r.adjustments || []).join('; ')];
      }));
    var any = function (k) { return rows.some(function (r) { return isNum(get(r, k)); }); };
    var metric = function (title, key, format) {
      return { title: title, key: key, fmt: fmt[format], values: rows.map(function (r) { var v = get(r, key); return isNum(v) ? v : null; }) };
    };
    var metrics = [any('time_to_train_seconds') ? metric('time to train', 'time_to_train_seconds', 'seconds')
                                                 : metric('step time', 'step.seconds', 'seconds')];
    metrics.push(any('cost_per_million_tokens') ? metric('cost per million tokens', 'cost_per_million_tokens', 'money')
                                                : metric('cost', 'cost', 'money'));
    metrics.push(any('energy_kwh_per_million_tokens')
                   ? metric('kWh per million tokens', 'energy_kwh_per_million_tokens', 'number')
                   : metric('energy kWh', 'energy_kwh', 'number'));
    var s = section(root, 'Side by side', 'compare-charts');
    charts.multiples(s, { name: 'compare', categories: names, metrics: metrics,
                          description: 'time, cost and energy of the job per system' });
    var m = section(root, 'Memory fit per system', 'compare-fit');
    var items = [];
    rows.forEach(function (r, i) {
      if (r.error) return;
      var v = verdictOf(r.memory);
      items.push({ label: names[i], value: r.memory.device_used_bytes / r.memory.capacity_bytes,
                   color: v === 'fits' ? '#59a14f' : v === 'tight' ? '#edc948' : '#e15759',
                   text: verdictText[v] + ': ' + fmt.bytes(r.memory.device_used_bytes) + ' of ' + fmt.bytes(r.memory.capacity_bytes) });
    });
    if (items.length)
      charts.bars(m, { name: 'compare-memory', items: items, base: 0, fmt: fmt.percent, labelWidth: 300,
                       description: 'device memory used as a share of capacity, per system' });
  }

  // ---- diagnose ----
  function diagnose(root, doc) {
    root.textContent = '';
    var h = el('header', {}, root);
    el('h1', {}, h, 'ftbound diagnose');
    el('p', { 'class': 'sub' }, h, doc.ranks + ' rank' + (doc.ranks > 1 ? 's' : '') + ', ' +
       fmt.seconds(doc.window_seconds) + ' analysed per rank (' + (doc.window_source || '') + ')');
    var f = figures(root);
    figure(f, 'analysed per rank', 'window_seconds', doc.window_seconds, 'seconds');
    if (doc.measured) figure(f, 'measured step', 'measured.step_seconds', doc.measured.step_seconds, 'seconds');
    figure(f, 'bottleneck share', 'bottleneck.share', doc.bottleneck.share, 'percent', '(' + doc.bottleneck.resource + ')');
    figure(f, 'GPU idle', 'gpu.idle', doc.gpu.idle, 'percent');
    figure(f, 'communication hidden under compute', 'overlap.comm_compute', doc.overlap.comm_compute, 'percent');
    el('p', { 'class': 'sentence', 'data-key': 'bottleneck.evidence' }, root, doc.bottleneck.evidence || '');
    var s = section(root, 'GPU time', 'gpu-time');
    charts.stackedBar(s, {
      name: 'gpu-time', fmt: fmt.percent,
      segments: [{ label: 'compute', value: doc.gpu.compute, color: colors.resource.compute, key: 'gpu.compute' },
                 { label: 'communication only', value: doc.gpu.communication, color: colors.resource.gpu_interconnect,
                   key: 'gpu.communication' },
                 { label: 'copies and memsets only', value: doc.gpu.memcpy, color: colors.resource.pcie, key: 'gpu.memcpy' },
                 { label: 'idle', value: doc.gpu.idle, color: colors.resource.idle, key: 'gpu.idle' }],
      description: 'fractions of the analysed window by what the GPU ran'
    });
    el('h3', {}, s, 'How the idle time splits');
    charts.stackedBar(s, {
      name: 'idle-split', fmt: fmt.percent,
      segments: [{ label: 'waiting for the host to launch', value: doc.idle.host_wait, color: colors.resource.host_cpu,
                   key: 'idle.host_wait' },
                 { label: 'between kernels', value: doc.idle.kernel_wait, color: colors.resource.launch_overhead,
                   key: 'idle.kernel_wait' },
                 { label: 'other', value: doc.idle.other, color: colors.resource.idle, key: 'idle.other' }],
      description: 'the idle fraction split by its cause'
    });
    var g = figures(s);
    figure(g, 'waiting for the host', 'idle.host_wait', doc.idle.host_wait, 'percent');
    figure(g, 'between kernels', 'idle.kernel_wait', doc.idle.kernel_wait, 'percent');
    figure(g, 'other idle', 'idle.other', doc.idle.other, 'percent');
    var r = section(root, doc.plan ? 'The run beside the plan' : 'The run, by resource', 'run-vs-plan');
    var rows = [];
    if (doc.plan && doc.plan.by_resource) {
      var res = doc.plan.by_resource;
      var seg = function (which) {
        return res.map(function (x, i) { return { label: x.resource, value: x[which], color: colors.forResource(x.resource, i) }; });
      };
      rows = [{ label: 'measured', segments: seg('measured_seconds') }, { label: 'predicted', segments: seg('predicted_seconds') }];
      var pf = figures(r);
      figure(pf, 'predicted step', 'plan.predicted.step_seconds', doc.plan.predicted.step_seconds, 'seconds');
      figure(pf, 'measured / predicted', 'plan.step_ratio_measured_over_predicted', doc.plan.step_ratio_measured_over_predicted,
             'times');
    } else if (doc.measured) {
      rows = [{ label: 'measured', segments: doc.measured.breakdown.map(function (b, i) {
        return { label: b.phase + ' [' + b.resource + ']', value: b.seconds, color: colors.forResource(b.resource, i) };
      }) }];
    }
    if (rows.length)
      charts.stackedRows(r, { name: 'run-vs-plan', rows: rows, fmt: fmt.seconds,
                              description: 'seconds of one step by resource, measured and predicted' });
    var k = section(root, 'Top kernels', 'top-kernels');
    var kernels = doc.top_kernels || [];
    if (kernels.length)
      charts.bars(k, { name: 'top-kernels', base: 0, fmt: fmt.percent, labelWidth: 380,
        items: kernels.map(function (x, i) {
          return { label: x.name, value: x.share, color: colors.series[i % 10], key: 'top_kernels.' + i + '.share',
                   text: fmt.percent(x.share) + ', ' + fmt.seconds(x.seconds) + ' in ' + x.count + ' calls' };
        }), description: 'the kernels that take the most GPU time' });
    table(k, 'top-kernels', ['kernel', 'calls', 'seconds', 'share'], kernels.map(function (x, i) {
      return [{ clip: x.name }, String(x.count), { key: 'top_kernels.' + i + '.seconds', value: x.seconds, format: 'seconds' },
              { key: 'top_kernels.' + i + '.share', value: x.share, format: 'percent' }];
    }));
    var c = section(root, 'Copies', 'copies');
    var cf = figures(c);
    figure(cf, 'host to device', 'memcpy.h2d_bytes', doc.memcpy.h2d_bytes, 'bytes');
    figure(cf, 'GB/s host to device', 'memcpy.h2d_GBps', doc.memcpy.h2d_GBps, 'number');
    figure(cf, 'device to host', 'memcpy.d2h_bytes', doc.memcpy.d2h_bytes, 'bytes');
    figure(cf, 'GB/s device to host', 'memcpy.d2h_GBps', doc.memcpy.d2h_GBps, 'number');
    figure(cf, 'of copies from pageable memory', 'memcpy.pageable_fraction', doc.memcpy.pageable_fraction, 'percent');
    if (doc.warnings && doc.warnings.length) {
      var w = section(root, 'Warnings', 'warnings');
      var ul = el('ul', {}, w);
      doc.warnings.forEach(function (x) { el('li', {}, ul, x); });
    }
  }

  // ---- search ----
  function describeConfig(c) {
    var changes = Object.keys(c.changes || {}).map(function (k) { return k + '=' + JSON.stringify(c.changes[k]); });
    return c.system + (c.nodes ? ' x' + c.nodes + ' node' + (c.nodes > 1 ? 's' : '') : '') +
           (typeof c.layout === 'string' ? ' [' + c.layout + ']' : '') + (changes.length ? ': ' + changes.join(', ') : '');
  }
  function search(root, doc) {
    root.textContent = '';
    var h = el('header', {}, root);
    el('h1', {}, h, 'ftbound search');
    if (doc.objective) el('p', { 'class': 'sub' }, h, 'best by ' + doc.objective + (doc.job ? ': ' + doc.job : ''));
    var f = figures(root);
    figure(f, 'configurations planned', 'evaluated', doc.evaluated, 'count');
    figure(f, 'feasible', 'feasible', doc.feasible, 'count');
    var top = doc.top || [], front = doc.front || [];
    if (doc.best) {
      var b = section(root, 'Best', 'best');
      el('p', { 'class': 'sentence' }, b, describeConfig(doc.best));
      var bf = figures(b);
      figure(bf, 'time to train', 'best.time_to_train_seconds', doc.best.time_to_train_seconds, 'seconds');
      figure(bf, 'step', 'best.step.seconds', get(doc.best, 'step.seconds'), 'seconds');
      figure(bf, 'cost', 'best.cost', doc.best.cost, 'money');
      figure(bf, 'kWh', 'best.energy_kwh', doc.best.energy_kwh, 'number');
      if (doc.best.why) el('p', { 'class': 'note' }, b, doc.best.why);
    }
    if (doc.bound_by) {
      var n = section(root, 'Nothing feasible', 'bound-by');
      el('p', { 'class': 'sentence error', 'data-key': 'bound_by.reason' }, n, doc.bound_by.reason || '');
      if (doc.bound_by.nearest) el('p', { 'class': 'note' }, n, 'nearest: ' + describeConfig(doc.bound_by.nearest));
    }
    var key = function (c) { return JSON.stringify([c.system, c.nodes, c.layout, c.changes]); };
    var onFront = {};
    front.forEach(function (c) { onFront[key(c)] = true; });
    var all = top.concat(front.filter(function (c) { return !top.some(function (t) { return key(t) === key(c); }); }));
    // The front's axes as the document names them (time, then cost or GPU-hours); else cost when known, else energy.
    var xKey = all.every(function (c) { return isNum(c.time_to_train_seconds); }) ? 'time_to_train_seconds' : 'step.seconds';
    var yKey = doc.front_axes && doc.front_axes[1] ? doc.front_axes[1]
             : all.some(function (c) { return isNum(c.cost); }) ? 'cost' : 'energy_kwh';
    var yName = { cost: 'cost', gpu_hours: 'GPU-hours', energy_kwh: 'kWh' }[yKey] || yKey;
    var pts = all.filter(function (c) { return isNum(get(c, xKey)) && isNum(get(c, yKey)); }).map(function (c) {
      return { x: get(c, xKey), y: get(c, yKey), label: describeConfig(c), front: !!onFront[key(c)] };
    });
    if (pts.length) {
      var s = section(root, 'Time against ' + yName + ' (the Pareto front joined)', 'front');
      charts.scatter(s, { name: 'search-front', points: pts, xLabel: xKey === 'step.seconds' ? 'step time' : 'time to train',
                          yLabel: yName, fx: fmt.seconds, fy: yKey === 'cost' ? fmt.money : fmt.number,
                          description: 'configurations by time and ' + yName + '; the Pareto front highlighted' });
    }
    var t = section(root, 'Top configurations', 'top');
    table(t, 'search-top', ['#', 'configuration', 'memory', 'step', 'tokens/s', 'time to train', 'cost', 'kWh', 'bottleneck'],
      top.map(function (c, i) {
        var b = 'top.' + i;
        return [String(i + 1), describeConfig(c), verdictText[verdictOf(c.memory)], cell(c, 'step.seconds', 'seconds', b),
                cell(c, 'throughput.tokens_per_second', 'count', b), cell(c, 'time_to_train_seconds', 'seconds', b),
                cell(c, 'cost', 'money', b), cell(c, 'energy_kwh', 'number', b),
                c.bottleneck ? c.bottleneck.resource : ''];
      }));
  }

  return { plan: plan, compare: compare, diagnose: diagnose, search: search, el: el, table: table, figure: figure };
})();
