/* guardbench run explorer, part 2: a run's story, in the scope of explorer.js (where it is inlined, at
 * the marker). Every text from a record goes into the page as a text node, never as HTML. */
  // -- a run's story ----------------------------------------------------------------------------
  function chunkOf(i) {
    var c = Math.floor(i / X.chunk);
    if (chunkCache.has(c)) return chunkCache.get(c);
    var node = document.getElementById("gbx-c" + c);
    var p = node ? gunzip(node.textContent).then(JSON.parse) : Promise.reject(new Error("no data for chunk " + c));
    chunkCache.set(c, p);
    if (chunkCache.size > CACHE) chunkCache.delete(chunkCache.keys().next().value);
    return p;
  }
  function docOf(i) { return chunkOf(i).then(function (a) { return a[i % X.chunk]; }); }

  function pretty(text) {
    if (typeof text !== "string") return JSON.stringify(text, null, 2);
    var s = text.trim();
    if (!(s.charAt(0) === "{" || s.charAt(0) === "[")) return text;
    try { JSON.parse(s); } catch (e) { return text; }
    return reindent(s);
  }
  function reindent(s) {          // JSON re-indented token by token: numbers and escapes exactly as sent
    var out = [], depth = 0, inStr = false, esc = false;
    function nl() { out.push("\n" + "  ".repeat(depth)); }
    for (var i = 0; i < s.length; i++) {
      var ch = s.charAt(i);
      if (inStr) { out.push(ch); if (esc) esc = false; else if (ch === "\\") esc = true; else if (ch === '"') inStr = false; continue; }
      if (ch === '"') { inStr = true; out.push(ch); }
      else if (ch === "{" || ch === "[") {
        var j = i + 1; while (j < s.length && /\s/.test(s.charAt(j))) j++;
        if (s.charAt(j) === (ch === "{" ? "}" : "]")) { out.push(ch + s.charAt(j)); i = j; }
        else { out.push(ch); depth++; nl(); }
      }
      else if (ch === "}" || ch === "]") { depth--; nl(); out.push(ch); }
      else if (ch === ",") { out.push(","); nl(); }
      else if (ch === ":") out.push(": ");
      else if (!/\s/.test(ch)) out.push(ch);
    }
    return out.join("");
  }
  function block(title, text, cls) {
    return el("div", {class: "gbx-block " + (cls || "")}, el("div", {class: "gbx-label"}, title),
              el("pre", {class: "gbx-pre"}, text === null || text === undefined ? "(none)" : pretty(text)));
  }
  function headersTable(h) {
    if (!h || !h.length) return el("div", {class: "gbx-muted"}, "(no headers)");
    var t = el("table", {class: "gbx-headers"});
    h.forEach(function (p) { t.appendChild(el("tr", null, el("th", null, p[0]), el("td", null, p[1]))); });
    return t;
  }
  function incidentLine(inc) {
    var money = inc[3] ? " (" + inc[3] + " " + (inc[4] || "") + ")" : "";
    return el("li", {class: "gbx-incident"}, el("b", null, "detector " + inc[0]), " fired",
              inc[1] >= 0 ? " on request #" + inc[1] : " on the agent's output", ": ", inc[2] || "", money);
  }
  function exchange(ex, doc, compact) {
    var incs = doc.inc.filter(function (x) { return x[1] === ex[0]; });
    var status = ex[5] === null ? "no response" : String(ex[5]);
    var sum = el("summary", null, el("span", {class: "gbx-seq"}, "#" + ex[0]), " ", el("b", null, ex[1]), " ", ex[2],
                 " \u2192 ", el("span", {class: ex[5] >= 200 && ex[5] < 300 ? "gbx-ok" : "gbx-bad"}, status),
                 incs.map(function (x) { return el("span", {class: "gbx-badge"}, x[0]); }));
    var d = el("details", {class: "gbx-ex" + (incs.length ? " gbx-hit" : ""), "data-seq": ex[0]}, sum);
    d.open = !compact || incs.length > 0;
    if (incs.length) d.appendChild(el("ul", {class: "gbx-verdicts"}, incs.map(incidentLine)));
    d.appendChild(el("div", {class: "gbx-label"}, "request headers"));
    d.appendChild(headersTable(ex[3]));
    if (ex[4] !== null && ex[4] !== undefined) d.appendChild(block("request body", ex[4]));
    if (ex[5] !== null) {
      d.appendChild(el("div", {class: "gbx-label"}, "response " + ex[5] + " headers"));
      d.appendChild(headersTable(ex[6]));
      d.appendChild(block("response body", ex[7]));
    }
    if (ex[8]) d.appendChild(block("transport error", ex[8], "gbx-bad"));
    return d;
  }
  function decision(step, doc) {
    var out = [], r = null;
    try { r = JSON.parse(step[2]); } catch (e) { r = null; }
    if (r && typeof r === "object" && !Array.isArray(r)) {
      if (typeof r.status === "string") out.push(el("div", {class: "gbx-decision"}, "decision: ", el("b", null, r.status),
                                                    r.reason ? " \u2014 " + r.reason : ""));
      else if (typeof r.status === "number") out.push(el("div", {class: "gbx-decision"}, "HTTP ", el("b", null, String(r.status))));
      if (r.error) out.push(el("div", {class: "gbx-decision gbx-bad"}, "error: ", String(r.error)));
    }
    doc.att.forEach(function (a) {
      if (a[1] === step[0]) out.push(el("div", {class: "gbx-decision gbx-bad"}, "defence ", el("b", null, a[0]), " ",
                                        a[2], ": ", a[3] || ""));
    });
    return out;
  }
  function story(i, doc, compact) {
    var box = el("div", {class: "gbx-story", "data-row": i});
    var outcome = X.outcome[X.c.outcome[i]].map(label).join(", ") || "-";
    var money = X.money[X.c.money[i]], mtext = Object.keys(money).map(function (c) { return c + " " + money[c]; }).join("; ");
    box.appendChild(el("h3", {class: "gbx-title"}, X.ids[i]));
    box.appendChild(el("div", {class: "gbx-meta"},
      (X.d.src.length > 1 ? "run folder " + X.d.src[X.c.src[i]] + " \u00b7 " : "") +
      "arm " + X.d.arm[X.c.arm[i]] + " \u00b7 case " + X.d["case"][X.c["case"][i]] + " \u00b7 " + X.d.family[X.c.family[i]] +
      " \u00b7 variant " + X.c.variant[i] + " \u00b7 repeat " + X.c.repeat[i] + " \u00b7 " + X.d.group[X.c.group[i]] +
      " \u00b7 status " + X.d.status[X.c.status[i]]));
    var verdict = el("div", {class: "gbx-verdict"}, el("div", null, "outcome: ", el("b", {class: "gbx-outcome"}, outcome),
                     mtext ? " \u00b7 money at risk: " + mtext : ""));
    verdict.appendChild(doc.inc.length ? el("ul", {class: "gbx-verdicts"}, doc.inc.map(incidentLine))
                                       : el("div", {class: "gbx-muted"}, "no detector fired: no incident on the wire"));
    doc.att.forEach(function (a) {
      verdict.appendChild(el("div", {class: "gbx-decision gbx-bad"}, "refused by ", el("b", null, a[0]), " (" + a[1] + "): ",
                             a[2], a[3] ? " \u2014 " + a[3] : ""));
    });
    box.appendChild(verdict);
    box.appendChild(block("the user's message", doc.user, "gbx-user"));
    box.appendChild(block("untrusted data (what read_data returns)", doc.data === null ? "(no document)" : doc.data, "gbx-data"));
    var used = {};
    var setup = doc.wire.filter(function (ex) { return ex[0] < doc.setup; });
    if (setup.length) {
      var s = el("details", {class: "gbx-setup"}, el("summary", null, "operator setup before the agent (" + setup.length + " requests)"));
      setup.forEach(function (ex) { used[ex[0]] = 1; s.appendChild(exchange(ex, doc, true)); });
      box.appendChild(s);
    }
    doc.steps.forEach(function (st, k) {
      var step = el("div", {class: "gbx-step"}, el("div", {class: "gbx-label"}, "step " + (k + 1) + ": the agent calls ",
                                                  el("b", null, st[0])));
      var args = st[1];
      if (args && typeof args === "object" && !Array.isArray(args) && typeof args.body === "string") {
        var rest_ = {}; Object.keys(args).forEach(function (k) { rest_[k] = k === "body" ? "(below)" : args[k]; });
        step.appendChild(block("arguments", JSON.stringify(rest_, null, 2)));
        step.appendChild(block("arguments: body", args.body));
      } else step.appendChild(block("arguments", JSON.stringify(args, null, 2)));
      add(step, decision(st, doc));
      step.appendChild(block("tool result (what the agent saw)", st[2]));
      var r = st[3];
      doc.wire.forEach(function (ex) {
        if (r && ex[0] >= r[0] && ex[0] < r[1] && !used[ex[0]]) { used[ex[0]] = 1; step.appendChild(exchange(ex, doc, compact)); }
      });
      box.appendChild(step);
    });
    var rest = doc.wire.filter(function (ex) { return !used[ex[0]]; });
    if (rest.length) {
      var o = el("div", {class: "gbx-step"}, el("div", {class: "gbx-label"}, doc.ranges === false && doc.steps.length
        ? "requests after the operator's setup (this record does not say which step sent each)"
        : "requests not sent by an agent tool call"));
      rest.forEach(function (ex) { o.appendChild(exchange(ex, doc, compact)); });
      box.appendChild(o);
    }
    if (doc.model && doc.model.length) {       // an application's model calls, through guardbench's gateway
      var talk = el("details", {class: "gbx-setup"}, el("summary", null, "the application's model calls (" +
                                                                       doc.model.length + ")"));
      doc.model.forEach(function (c) { talk.appendChild(block(c[0], c[1])); });
      box.appendChild(talk);
    }
    box.appendChild(block("the agent's answer (" + (doc.tstatus || "-") + ")", doc.final, "gbx-final"));
    if (doc.error) box.appendChild(block("error", doc.error, "gbx-bad"));
    if (doc.meta && Object.keys(doc.meta).length) box.appendChild(block("record", JSON.stringify(doc.meta, null, 2), "gbx-muted"));
    return box;
  }
  function siblings(i) {          // the same case, variant, repeat, group and run folder in every arm
    var out = [];
    for (var j = 0; j < X.n; j++) {
      if (X.c["case"][j] === X.c["case"][i] && X.c.variant[j] === X.c.variant[i] && X.c.repeat[j] === X.c.repeat[i] &&
          X.c.group[j] === X.c.group[i] && X.c.src[j] === X.c.src[i]) out.push(j);
    }
    return out.sort(function (a, b) { return X.c.arm[a] - X.c.arm[b]; });
  }
  var panelToken = 0;
  function showPanel() {
    var token = ++panelToken, i = state.open;
    clear(ui.panel);
    if (i === null) { ui.panel.appendChild(el("p", {class: "gbx-muted"}, "Click a run to see its story.")); return; }
    var bar = el("div", {class: "gbx-bar"},
      el("button", {type: "button", id: "gbx-side", text: state.side ? "this run only" : "same case and variant in every arm",
                    onclick: function () { state.side = !state.side; commit(); }}),
      el("button", {type: "button", text: "close", onclick: function () { state.open = null; commit(); }}));
    ui.panel.appendChild(bar);
    var rows = state.side ? siblings(i) : [i];
    var holder = el("div", {class: state.side ? "gbx-side" : "gbx-one"});
    ui.panel.appendChild(holder);
    Promise.all(rows.map(docOf)).then(function (docs) {
      if (token !== panelToken) return;
      docs.forEach(function (d, k) { holder.appendChild(story(rows[k], d, state.side)); });
      api.lastOpened = X.ids[i];
      if (ui.scrollToPanel) { ui.scrollToPanel = false; ui.panel.scrollIntoView({block: "start"}); }
    }).catch(function (e) { api.errors.push(String(e)); holder.appendChild(el("p", {class: "gbx-bad"}, "cannot read this run: " + e)); });
  }
