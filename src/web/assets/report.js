// Entry point of a saved report: draw the JSON document held in the page with the view its kind names.
'use strict';
(function () {
  var kind = document.body.getAttribute('data-kind');
  var doc = JSON.parse(document.getElementById('ftbound-data').textContent);
  var root = document.getElementById('report');
  try {
    FTB.views[kind](root, doc);
    document.body.setAttribute('data-rendered', kind);
  } catch (e) {
    root.textContent = 'This report could not be drawn: ' + e;
    root.className = 'error';
    throw e;
  }
})();
