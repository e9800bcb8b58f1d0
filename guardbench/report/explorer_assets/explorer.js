/* guardbench run explorer: every run of the report, filterable and sortable, and each run's story.
 * Hand-written, no framework, no network: the data are in this page (gzip + base64 in
 * <script type="application/gzip-base64"> elements), decoded with the browser's DecompressionStream.
 * Every text from a record goes into the page as a text node (textContent), never as HTML.
 * The filter is the one of guardbench/report/explorer_data.py (matches); the tests hold them equal. */
(function () {
  "use strict";
  var ROW_H = 24, BUFFER = 20, CACHE = 8;
  var root = document.getElementById("gbx");
  if (!root) return;
  var X = null;                 // the index, decoded
  var state = {filt: {}, sort: null, dir: 1, open: null, side: false};
  var view = new Int32Array(0); // the filtered, sorted row numbers
  var chunkCache = new Map();
  var api = window.gbExplorer = {ready: false, lastFilterMs: null, lastRenderMs: null, errors: []};

  // -- helpers --------------------------------------------------------------------------------
  function el(tag, props) {
    var e = document.createElement(tag);
    if (props) {
      for (var k in props) {
        var v = props[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") e.className = v;
        else if (k === "text") e.textContent = String(v);
        else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, String(v));
      }
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(e, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { add(e, x); }); return; }
    e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function bytesOf(b64) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64);
    var bin = atob(b64), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  function gunzip(b64) {
    var stream = new Blob([bytesOf(b64)]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  function label(tag) { return String(tag).replace(/_/g, " "); }
  function fmtInt(n) { return n < 0 ? "-" : String(n); }

  // -- the index --------------------------------------------------------------------------------
  function decodeIndex(ix) {
    var d = ix.dicts, c = ix.cols, n = ix.n;
    var x = {n: n, chunk: ix.chunk, ids: ix.ids, d: d, c: {}, lowIds: null};
    Object.keys(c).forEach(function (k) { x.c[k] = Int32Array.from(c[k]); });
    x.outcome = d.outcome.map(function (s) { return s ? s.split(" ") : []; });
    x.incident = d.incident.map(function (s) {
      var m = {}; if (s) s.split(" ").forEach(function (p) { var i = p.lastIndexOf(":"); m[p.slice(0, i)] = +p.slice(i + 1); });
      return m;
    });
    x.money = d.money.map(function (s) {
      var m = {}; if (s) s.split(" ").forEach(function (p) { var i = p.indexOf(":"); m[p.slice(0, i)] = p.slice(i + 1); });
      return m;
    });
    x.refusal = d.refusal.map(function (s) { return s ? s.split("\n") : []; });
    var cur = {}, tags = {}, kinds = {}, reasons = {};
    x.money.forEach(function (m) { Object.keys(m).forEach(function (k) { cur[k] = 1; }); });
    x.outcome.forEach(function (t) { t.forEach(function (k) { tags[k] = 1; }); });
    x.incident.forEach(function (m) { Object.keys(m).forEach(function (k) { kinds[k] = 1; }); });
    x.refusal.forEach(function (t) { t.forEach(function (k) { reasons[k] = 1; }); });
    x.currencies = Object.keys(cur).sort();
    x.tags = Object.keys(tags).sort();
    x.kinds = Object.keys(kinds).sort();
    x.reasons = Object.keys(reasons).sort();
    x.rank = {};
    ["src", "arm", "case", "family", "group", "status", "outcome", "incident", "refusal"].forEach(function (k) {
      var order = d[k].map(function (_, i) { return i; });
      if (k !== "src" && k !== "arm") order.sort(function (a, b) { return d[k][a] < d[k][b] ? -1 : d[k][a] > d[k][b] ? 1 : 0; });
      var r = new Int32Array(d[k].length); order.forEach(function (code, pos) { r[code] = pos; }); x.rank[k] = r;
    });
    x.byId = new Map(); ix.ids.forEach(function (id, i) { x.byId.set(x.c.src[i] + "\u0000" + id, i); });
    x.maxOf = function (k) { var a = x.c[k], m = -1; for (var i = 0; i < a.length; i++) if (a[i] > m) m = a[i]; return m; };
    return x;
  }

  // -- filtering (explorer_data.matches) ----------------------------------------------------------
  var TEXT_DIMS = {src: 1, arm: 1, "case": 1, family: 1, group: 1, status: 1};
  function entryMatches(dim, code, v) {
    if (dim === "family" && v === "attack") return X.d.family[code] !== "benign";
    if (TEXT_DIMS[dim]) return X.d[dim][code] === v;
    if (dim === "outcome") { var t = X.outcome[code]; return v.split("+").every(function (p) { return t.indexOf(p) >= 0; }); }
    if (dim === "incident") {
      var m = X.incident[code], any = Object.keys(m).length > 0;
      return v === "any" ? any : v === "none" ? !any : m.hasOwnProperty(v);
    }
    if (dim === "currency") {
      var mm = X.money[code], some = Object.keys(mm).length > 0;
      return v === "any" ? some : v === "none" ? !some : mm.hasOwnProperty(v);
    }
    if (dim === "refused") return (X.refusal[code].length > 0) === (v === "yes");
    if (dim === "refusal") return X.refusal[code].indexOf(v) >= 0;
    return false;
  }
  var CODED = {src: "src", arm: "arm", "case": "case", family: "family", group: "group", status: "status",
               outcome: "outcome", incident: "incident", currency: "money", refused: "refusal", refusal: "refusal"};
  function predicate(dim, vals) {
    if (CODED[dim]) {
      var col = X.c[CODED[dim]], dict = X.d[CODED[dim]], ok = new Uint8Array(dict.length);
      for (var c = 0; c < dict.length; c++) ok[c] = vals.some(function (v) { return entryMatches(dim, c, v); }) ? 1 : 0;
      return function (i) { return ok[col[i]] === 1; };
    }
    if (dim === "variant" || dim === "repeat") {
      var nums = vals.map(Number), a = X.c[dim];
      return function (i) { return nums.indexOf(a[i]) >= 0; };
    }
    if (dim === "q") {
      if (!X.lowIds) X.lowIds = X.ids.map(function (s) { return s.toLowerCase(); });
      var low = vals.map(function (v) { return v.toLowerCase(); });
      return function (i) { var s = X.lowIds[i]; return low.some(function (v) { return s.indexOf(v) >= 0; }); };
    }
    return function () { return false; };
  }
  function filterRows(filt) {
    var preds = Object.keys(filt).filter(function (k) { return filt[k].length; })
      .map(function (k) { return predicate(k, filt[k]); });
    var out = new Int32Array(X.n), m = 0;
    outer: for (var i = 0; i < X.n; i++) {
      for (var p = 0; p < preds.length; p++) if (!preds[p](i)) continue outer;
      out[m++] = i;
    }
    return out.slice(0, m);
  }
  api.count = function (hash) { return filterRows(parseHash(hash).filt).length; };

  // -- columns ------------------------------------------------------------------------------------
  function columns() {
    var cols = [];
    function text(k, lab) {
      return {key: k, label: lab, get: function (i) { return X.d[k][X.c[k][i]]; },
              key_: function (i) { return X.rank[k][X.c[k][i]]; }};
    }
    if (X.d.src.length > 1) cols.push(text("src", "run folder"));
    cols.push(text("arm", "arm"), text("case", "case"), text("family", "family"));
    cols.push({key: "variant", label: "variant", get: function (i) { return X.c.variant[i]; },
               key_: function (i) { return X.c.variant[i]; }});
    if (X.maxOf("repeat") > 0) cols.push({key: "repeat", label: "repeat", get: function (i) { return X.c.repeat[i]; },
                                          key_: function (i) { return X.c.repeat[i]; }});
    cols.push(text("group", "agent / model"));
    cols.push({key: "outcome", label: "outcome", cls: "gbx-outcome",
               get: function (i) { return X.outcome[X.c.outcome[i]].map(label).join(", "); },
               key_: function (i) { return X.rank.outcome[X.c.outcome[i]]; }});
    cols.push({key: "incident", label: "incidents", get: function (i) {
      var m = X.incident[X.c.incident[i]];
      return Object.keys(m).map(function (k) { return m[k] > 1 ? k + " \u00d7" + m[k] : k; }).join(", ");
    }, key_: function (i) {
      var m = X.incident[X.c.incident[i]], s = 0; Object.keys(m).forEach(function (k) { s += m[k]; }); return s;
    }});
    X.currencies.forEach(function (cur) {
      cols.push({key: "money." + cur, label: "at risk " + cur, num: true,
                 get: function (i) { var v = X.money[X.c.money[i]][cur]; return v === undefined ? "" : v; },
                 key_: function (i) { var v = X.money[X.c.money[i]][cur]; return v === undefined ? 0 : parseFloat(v); }});
    });
    cols.push({key: "steps", label: "steps", num: true, get: function (i) { return X.c.steps[i]; },
               key_: function (i) { return X.c.steps[i]; }});
    cols.push({key: "wire", label: "requests", num: true, get: function (i) { return X.c.wire[i]; },
               key_: function (i) { return X.c.wire[i]; }});
    if (X.maxOf("tokens") >= 0) cols.push({key: "tokens", label: "tokens", num: true,
      get: function (i) { return fmtInt(X.c.tokens[i]); }, key_: function (i) { return X.c.tokens[i]; }});
    cols.push(text("status", "status"));
    return cols;
  }
  var COLS = null;

  function sortRows(rows) {
    if (!state.sort) return rows;
    var col = COLS.filter(function (c) { return c.key === state.sort; })[0];
    if (!col) return rows;
    var keys = new Float64Array(X.n), dir = state.dir;
    for (var j = 0; j < rows.length; j++) keys[rows[j]] = col.key_(rows[j]);
    var arr = Array.prototype.slice.call(rows);
    arr.sort(function (a, b) { return (keys[a] - keys[b]) * dir || a - b; });
    return Int32Array.from(arr);
  }

  // -- the URL fragment: #runs?arm=control&outcome=blocked&sort=-steps&open=<run id> --------------
  function parseHash(h) {
    var out = {filt: {}, sort: null, dir: 1, open: null, side: false, src: null};
    h = String(h || "").replace(/^#/, "");
    var q = h.indexOf("?");
    if (h.slice(0, q < 0 ? h.length : q) !== "runs") return null;
    if (q < 0) return out;
    h.slice(q + 1).split("&").forEach(function (part) {
      if (!part) return;
      var e = part.indexOf("="), k = e < 0 ? part : part.slice(0, e), raw = e < 0 ? "" : part.slice(e + 1);
      var vals = raw.split(",").map(function (v) { try { return decodeURIComponent(v); } catch (err) { return v; } })
        .filter(function (v) { return v !== ""; });
      if (k === "sort") { var s = vals[0] || ""; out.dir = s.charAt(0) === "-" ? -1 : 1; out.sort = s.replace(/^-/, "") || null; }
      else if (k === "open") out.open = vals.join(",");
      else if (k === "side") out.side = vals[0] === "1";
      else if (k === "in") out.src = vals[0];
      else out.filt[k] = vals;
    });
    return out;
  }
  function makeHash(st) {
    var parts = [];
    Object.keys(st.filt).forEach(function (k) {
      if (st.filt[k].length) parts.push(k + "=" + st.filt[k].map(encodeURIComponent).join(","));
    });
    if (st.sort) parts.push("sort=" + (st.dir < 0 ? "-" : "") + encodeURIComponent(st.sort));
    if (st.open !== null) {
      var i = st.open;
      if (X.d.src.length > 1) parts.push("in=" + encodeURIComponent(X.d.src[X.c.src[i]]));
      parts.push("open=" + encodeURIComponent(X.ids[i]));
      if (st.side) parts.push("side=1");
    }
    return "#runs" + (parts.length ? "?" + parts.join("&") : "");
  }
  function findRun(id, src) {
    if (id === null) return null;
    for (var s = 0; s < X.d.src.length; s++) {
      if (src !== null && src !== undefined && X.d.src[s] !== src) continue;
      var i = X.byId.get(s + "\u0000" + id);
      if (i !== undefined) return i;
    }
    return null;
  }

  // -- the page --------------------------------------------------------------------------------
  var ui = {};
  var DIM_LABELS = [["src", "run folder"], ["group", "agent / model"], ["arm", "arm"], ["family", "family"],
                    ["case", "case"], ["variant", "variant"], ["repeat", "repeat"], ["outcome", "outcome"],
                    ["incident", "incident"], ["currency", "money at risk"], ["refused", "refused"],
                    ["refusal", "refusal"], ["status", "status"]];
  function options(dim) {
    var d = X.d;
    switch (dim) {
      case "family": return [["attack", "any attack"]].concat(d.family.map(function (f) { return [f, f]; }));
      case "variant": case "repeat":
        var n = X.maxOf(dim), o = []; for (var i = 0; i <= n; i++) o.push([String(i), String(i)]); return o;
      case "outcome": return X.tags.map(function (t) { return [t, label(t)]; });
      case "incident": return [["any", "any incident"], ["none", "no incident"]].concat(X.kinds.map(function (k) { return [k, k]; }));
      case "currency": return [["any", "any"], ["none", "none"]].concat(X.currencies.map(function (c) { return [c, c]; }));
      case "refused": return [["yes", "yes"], ["no", "no"]];
      case "refusal": return X.reasons.map(function (r) { return [r, r]; });
      default: return d[dim].map(function (v) { return [v, v]; });
    }
  }
  function shown(dim) {
    if (dim === "src" || dim === "group") return X.d[dim].length > 1;
    if (dim === "variant" || dim === "repeat") return X.maxOf(dim) > 0;
    if (dim === "refusal") return X.reasons.length > 0;
    return true;
  }
  function buildControls() {
    var bar = el("div", {class: "gbx-filters"});
    ui.selects = {};
    DIM_LABELS.forEach(function (p) {
      if (!shown(p[0])) return;
      var s = el("select", {"data-dim": p[0], "aria-label": p[1], onchange: function () {
        state.filt[p[0]] = s.value ? s.value.split("\u0001") : [];
        state.open = null; commit();
      }}, el("option", {value: "", text: p[1] + ": any"}));
      options(p[0]).forEach(function (o) { s.appendChild(el("option", {value: o[0], text: p[1] + ": " + o[1]})); });
      ui.selects[p[0]] = s;
      bar.appendChild(s);
    });
    ui.q = el("input", {type: "search", placeholder: "run id contains\u2026", "aria-label": "search run ids",
                        oninput: function () { state.filt.q = ui.q.value ? [ui.q.value] : []; commit(); }});
    bar.appendChild(ui.q);
    bar.appendChild(el("button", {type: "button", text: "clear filters", onclick: function () {
      state.filt = {}; state.open = null; state.sort = null; commit();
    }}));
    ui.count = el("span", {class: "gbx-count", id: "gbx-count"});
    bar.appendChild(ui.count);
    return bar;
  }
  function syncControls() {
    Object.keys(ui.selects).forEach(function (dim) {
      var s = ui.selects[dim], vals = state.filt[dim] || [], v = vals.join("\u0001");
      var known = Array.prototype.some.call(s.options, function (o) { return o.value === v; });
      if (!known && v) s.appendChild(el("option", {value: v, text: dim + ": " + vals.join(" or ")}));
      s.value = v;
    });
    var q = (state.filt.q || [])[0] || "";
    if (ui.q.value !== q) ui.q.value = q;
  }
  function buildTable() {
    ui.wrap = el("div", {class: "gbx-wrap", id: "gbx-wrap", onscroll: function () { renderRows(); }});
    ui.table = el("table", {class: "gbx-table"});
    var head = el("tr");
    COLS.forEach(function (c) {
      head.appendChild(el("th", {"data-key": c.key, class: c.num ? "num" : null, title: "sort by " + c.label,
                                 onclick: function () {
        if (state.sort === c.key) state.dir = -state.dir; else { state.sort = c.key; state.dir = 1; }
        commit();
      }}, c.label));
    });
    ui.head = head;
    ui.tbody = el("tbody");
    ui.table.appendChild(el("thead", null, head));
    ui.table.appendChild(ui.tbody);
    ui.wrap.appendChild(ui.table);
    return ui.wrap;
  }
  function renderRows() {
    var top = ui.wrap.scrollTop, h = ui.wrap.clientHeight || 600;
    var first = Math.max(0, Math.floor(top / ROW_H) - BUFFER);
    var last = Math.min(view.length, Math.ceil((top + h) / ROW_H) + BUFFER);
    if (ui.rendered && ui.rendered[0] === first && ui.rendered[1] === last && ui.rendered[2] === view) return;
    ui.rendered = [first, last, view];
    clear(ui.tbody);
    ui.tbody.appendChild(el("tr", {class: "gbx-spacer", style: "height:" + first * ROW_H + "px"}));
    for (var j = first; j < last; j++) {
      var i = view[j];
      var tr = el("tr", {"data-row": i, class: state.open === i ? "gbx-sel" : null, tabindex: 0, title: X.ids[i]});
      COLS.forEach(function (c) { tr.appendChild(el("td", {class: (c.num ? "num " : "") + (c.cls || "")}, c.get(i))); });
      tr.addEventListener("click", openFromRow);
      tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter") openFromRow.call(this); });
      ui.tbody.appendChild(tr);
    }
    ui.tbody.appendChild(el("tr", {class: "gbx-spacer", style: "height:" + (view.length - last) * ROW_H + "px"}));
  }
  function openFromRow() {
    state.open = +this.getAttribute("data-row"); state.side = false; ui.scrollToPanel = true; commit();
  }

  function commit() {
    var h = makeHash(state);
    if (location.hash !== h) history.replaceState(null, "", h);
    apply();
  }
  function apply() {
    var t0 = performance.now();
    view = sortRows(filterRows(state.filt));
    api.lastFilterMs = performance.now() - t0;
    ui.count.textContent = view.length + " of " + X.n + " runs";
    COLS.forEach(function (c, k) {
      var th = ui.head.children[k];
      th.className = (c.num ? "num " : "") + (state.sort === c.key ? (state.dir > 0 ? "gbx-asc" : "gbx-desc") : "");
    });
    syncControls();
    ui.wrap.style.height = Math.max(120, Math.min(Math.round(window.innerHeight * 0.6), (view.length + 1) * ROW_H + 40)) + "px";
    ui.rendered = null;
    renderRows();
    api.lastRenderMs = performance.now() - t0;
    showPanel();
  }
  function fromHash(scroll) {
    var p = parseHash(location.hash);
    if (!p) return;
    state.filt = p.filt; state.sort = p.sort; state.dir = p.dir; state.side = p.side;
    state.open = findRun(p.open, p.src);
    ui.wrap.scrollTop = 0;
    apply();
    if (scroll && state.open !== null) ui.scrollToPanel = true;
    else if (scroll) root.scrollIntoView({block: "start"});
  }

  /* explorer_story.js: a run's story (inlined here by guardbench/report/explorer.py) */

  // -- start ------------------------------------------------------------------------------------
  function start() {
    var node = document.getElementById("gbx-index");
    gunzip(node.textContent).then(function (text) {
      X = decodeIndex(JSON.parse(text));
      COLS = columns();
      clear(root);
      root.appendChild(buildControls());
      root.appendChild(buildTable());
      ui.panel = el("div", {class: "gbx-panel", id: "gbx-panel"});
      root.appendChild(ui.panel);
      window.addEventListener("hashchange", function () { fromHash(true); });
      if (parseHash(location.hash)) fromHash(true); else apply();
      api.ready = true;
      performance.mark("gbx-ready");
      // the frame that shows the table: the task after the next animation frame runs once it is painted
      requestAnimationFrame(function () { setTimeout(function () { performance.mark("gbx-painted"); }, 0); });
    }).catch(function (e) {
      api.errors.push(String(e));
      root.textContent = "The run explorer cannot start in this browser: " + e +
        " (it needs DecompressionStream: Chromium 80+, Firefox 113+, Safari 16.4+).";
    });
  }
  start();
})();
