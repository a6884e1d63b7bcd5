/* depyf report: renders the dump manifest embedded in this page. No network, no dependencies. */
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("depyf-data").textContent);
  var INDEX = DATA.index || {};
  var FILES = DATA.files || {};
  var META = DATA.meta || {};
  var FUNCS = INDEX.functions || [];
  var GRAPHS = INDEX.graphs || [];
  var STAGE_ORDER = ["captured_graph", "pre_grad", "joint_graph", "forward", "backward", "post_grad",
                     "kernel", "output_code"];
  var STAGE_LABEL = {
    captured_graph: "captured graph", pre_grad: "pre-grad", joint_graph: "joint graph",
    post_grad: "post-grad", forward: "forward", backward: "backward", kernel: "kernel",
    output_code: "kernel"
  };

  /* ---------- lookups ---------- */
  var graphByName = {};
  var graphByGlobal = {};  // the global the transformed code calls: __compiled_fn_<n>_<uuid>
  GRAPHS.forEach(function (g) {
    graphByName[g.name] = g;
    if (g.global_name) graphByGlobal[g.global_name] = g;
    g.files = (g.files || []).slice().sort(function (a, b) {
      return stageRank(a.stage) - stageRank(b.stage);
    });
  });
  var funcIndexByName = {};
  var entryByTransformed = {};
  var callersOfGraph = {};
  FUNCS.forEach(function (f, i) {
    if (!(f.name in funcIndexByName)) funcIndexByName[f.name] = i;
    (f.cache_entries || []).forEach(function (e, k) {
      if (e.transformed_name) entryByTransformed[e.transformed_name] = [i, k];
      (e.graphs || []).forEach(function (g) {
        (callersOfGraph[g] = callersOfGraph[g] || []).push([i, k]);
      });
    });
  });
  FUNCS.forEach(function (f, i) {
    (f.graph_breaks || []).forEach(function (b) { b._fn = i; });
    (f.recompilations || []).forEach(function (r) { r._fn = i; });
  });

  function stageRank(stage) {
    var i = STAGE_ORDER.indexOf(stage);
    return i < 0 ? STAGE_ORDER.length : i;
  }

  /* ---------- small DOM helpers ---------- */
  function esc(s) {
    return String(s == null ? "" : s).replace(/&/g, "&amp;").replace(/</g, "&lt;")
      .replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function link(route, text, cls) {
    return '<a href="#' + esc(route) + '" data-route="' + esc(route) + '"' +
      (cls ? ' class="' + cls + '"' : "") + ">" + text + "</a>";
  }
  function fnRoute(i, k) { return "fn/" + i + (k == null ? "" : "/entry/" + k); }
  function baseName(path) { return String(path).split(/[\\/]/).pop(); }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function badge(text, cls) { return '<span class="badge' + (cls ? " " + cls : "") + '">' + esc(text) + "</span>"; }

  /* ---------- Python highlighter (a small tokenizer; good enough for generated code) ---------- */
  var KEYWORDS = new Set(("and as assert async await break class continue def del elif else except finally " +
    "for from global if import in is lambda nonlocal not or pass raise return try while with yield match case")
    .split(" "));
  var CONSTS = new Set(["True", "False", "None", "NotImplemented", "Ellipsis", "__debug__"]);
  var BUILTINS = new Set(("abs all any bool bytes callable chr dict dir divmod enumerate filter float format " +
    "frozenset getattr globals hasattr hash id int isinstance issubclass iter len list locals map max min next " +
    "object print range repr reversed round set setattr slice sorted str sum super tuple type vars zip " +
    "Exception TypeError ValueError RuntimeError AssertionError StopIteration").split(" "));
  var TOKEN = new RegExp([
    "(#[^\\n]*)",
    "((?:[rRbBuUfF]{1,2})?(?:'''[\\s\\S]*?(?:'''|$)|\"\"\"[\\s\\S]*?(?:\"\"\"|$)|'(?:\\\\.|[^'\\\\\\n])*'?|\"(?:\\\\.|[^\"\\\\\\n])*\"?))",
    "((?:0[xXbBoO][0-9a-fA-F_]+|\\d[\\d_]*(?:\\.[\\d_]*)?(?:[eE][+-]?\\d+)?|\\.\\d[\\d_]*(?:[eE][+-]?\\d+)?)[jJlL]?)",
    "(@[A-Za-z_][\\w.]*)",
    "([A-Za-z_]\\w*)",
    "([\\s\\S])"
  ].join("|"), "g");

  // torch may add a unique suffix to the global it binds a graph to: __compiled_fn_1_42d2abba_1b1b_...
  var GRAPH_NAME = /^__compiled_fn_(\d+)(?:_[0-9a-f_]+)?$/;
  var GRAPH_IN_TEXT = /(__compiled_fn_\d+(?:_[0-9a-f_]+)?)/;

  function graphOf(name) {
    var m = GRAPH_NAME.exec(name);
    if (!m) return null;
    if (graphByName[name]) return name;
    if (graphByGlobal[name]) return graphByGlobal[name].name;
    return graphByName["__compiled_fn_" + m[1]] ? "__compiled_fn_" + m[1] : null;
  }

  function nameLink(name) {
    var g = graphOf(name);
    if (g) return "graph/" + g;
    if (entryByTransformed[name]) return fnRoute(entryByTransformed[name][0], entryByTransformed[name][1]);
    if (name in funcIndexByName) return fnRoute(funcIndexByName[name]);
    return null;
  }

  // Returns an array of lines, each an HTML string.
  function highlight(text, opts) {
    opts = opts || {};
    var lines = [""];
    var prevName = "";
    function piece(cls, text, route) {
      var h = esc(text);
      if (route) return '<a class="ref" href="#' + esc(route) + '" data-route="' + esc(route) + '">' + h + "</a>";
      return cls ? '<span class="' + cls + '">' + h + "</span>" : h;
    }
    function emit(cls, s, route) {
      var parts = s.split("\n");
      for (var i = 0; i < parts.length; i++) {
        if (i > 0) lines.push("");
        if (!parts[i]) continue;
        if (!route && opts.links !== false && parts[i].indexOf("__compiled_fn_") >= 0) {
          // graph names inside comments and strings (e.g. a dis listing of kept bytecode) link too
          lines[lines.length - 1] += parts[i].split(GRAPH_IN_TEXT).map(function (bit, k) {
            var g = k % 2 ? graphOf(bit) : null;
            return bit ? piece(g ? null : cls, bit, g ? "graph/" + g : null) : "";
          }).join("");
          continue;
        }
        lines[lines.length - 1] += piece(cls, parts[i], route);
      }
    }
    TOKEN.lastIndex = 0;
    var m;
    while ((m = TOKEN.exec(text)) !== null) {
      if (m[1] !== undefined) emit("t-com", m[1]);
      else if (m[2] !== undefined) emit("t-str", m[2]);
      else if (m[3] !== undefined) emit("t-num", m[3]);
      else if (m[4] !== undefined) emit("t-dec", m[4]);
      else if (m[5] !== undefined) {
        var w = m[5];
        var route = opts.links === false ? null : nameLink(w);
        if (route) emit(null, w, route);
        else if (prevName === "def" || prevName === "class") emit("t-def", w);
        else if (KEYWORDS.has(w)) emit("t-kw", w);
        else if (CONSTS.has(w)) emit("t-const", w);
        else if (BUILTINS.has(w)) emit("t-bi", w);
        else if (w === "self" || w === "cls") emit("t-self", w);
        else emit(null, w);
        prevName = w;
        continue;
      } else emit(null, m[6]);
      if (m[6] === undefined || !/\s/.test(m[6])) prevName = "";
    }
    if (lines.length > 1 && lines[lines.length - 1] === "" && /\n$/.test(text)) lines.pop();
    return lines;
  }

  // A code block with line numbers; opts.first: number of the first line, opts.marks: lines to highlight.
  function codeBlock(text, opts) {
    opts = opts || {};
    if (text == null) return '<div class="box muted">(file not in the dump)</div>';
    var first = opts.first || 1;
    var marks = opts.marks || [];
    var lines = highlight(text, opts);
    var out = [];
    for (var i = 0; i < lines.length; i++) {
      var no = first + i;
      var hl = marks.indexOf(no) >= 0;
      out.push('<div class="ln' + (hl ? " hl" : "") + '" data-line="' + no + '"><span class="no">' + no +
        '</span><span class="src">' + (lines[i] || " ") + "</span></div>");
    }
    return '<div class="code"' + (opts.id ? ' id="' + esc(opts.id) + '"' : "") + ">" + out.join("") + "</div>";
  }

  /* ---------- sidebar ---------- */
  var sidebar = document.getElementById("sidebar");
  var main = document.getElementById("main");
  var search = document.getElementById("search");

  function fnBadges(f) {
    var b = "";
    var nb = (f.graph_breaks || []).length, nr = (f.recompilations || []).length;
    if (nb) b += badge(nb + " break" + (nb > 1 ? "s" : ""), "bad");
    if (nr) b += badge(nr + " recompile" + (nr > 1 ? "s" : ""), "warn");
    return b;
  }

  function renderSidebar() {
    var children = {};
    var roots = [];
    FUNCS.forEach(function (f, i) {
      var parent = f.resumes && f.resumes.parent;
      if (f.kind === "resume" && parent in funcIndexByName && funcIndexByName[parent] !== i) {
        (children[funcIndexByName[parent]] = children[funcIndexByName[parent]] || []).push(i);
      } else roots.push(i);
    });
    var html = ['<div class="side-title">Report</div>',
      '<a class="nav-item" href="#overview" data-route="overview" data-search="overview"><span class="name">Overview</span></a>',
      '<div class="side-title">Compiled functions</div>'];
    var seen = {};
    function addFn(i, depth) {
      if (seen[i]) return;
      seen[i] = true;
      var f = FUNCS[i];
      var entries = f.cache_entries || [];
      html.push('<a class="nav-item depth-' + depth + '" href="#' + fnRoute(i) + '" data-route="' + fnRoute(i) +
        '" data-search="' + esc(f.qualname || f.name) + '" title="' + esc(f.qualname || f.name) + '">' +
        (f.kind === "resume" ? '<span class="muted">&#8627;</span>' : "") +
        '<span class="name">' + esc(shortName(f)) + "</span>" + fnBadges(f) + "</a>");
      entries.forEach(function (e, k) {
        var gs = (e.graphs || []).join(", ");
        html.push('<a class="nav-item depth-' + (depth + 1) + '" href="#' + fnRoute(i, k) + '" data-route="' +
          fnRoute(i, k) + '" data-search="' + esc((f.qualname || f.name) + " " + gs) + '">' +
          '<span class="name">entry ' + (e.index != null ? e.index : k) + "</span>" +
          (e.decompiled === false ? badge("bytecode", "warn") : "") +
          '<span class="muted name">' + esc(gs) + "</span></a>");
      });
      (children[i] || []).forEach(function (c) { addFn(c, depth + 1); });
    }
    roots.forEach(function (i) { addFn(i, 0); });
    FUNCS.forEach(function (f, i) { addFn(i, 0); });
    if (!FUNCS.length) html.push('<div class="nav-item muted">none recorded</div>');
    html.push('<div class="side-title">Graphs</div>');
    GRAPHS.forEach(function (g) {
      html.push('<a class="nav-item" href="#graph/' + esc(g.name) + '" data-route="graph/' + esc(g.name) +
        '" data-search="' + esc(g.name + " " + (g.function || "")) + '"><span class="name">' + esc(g.name) +
        '</span><span class="muted">' + esc((g.files || []).length) + "</span></a>");
    });
    var fileNames = Object.keys(FILES).sort();
    html.push('<details id="side-files"' + (fileNames.length <= 20 ? " open" : "") + '><summary class="side-title">Files (' +
      fileNames.length + ")</summary>");
    fileNames.forEach(function (name) {
      html.push('<a class="nav-item" href="#file/' + esc(name) + '" data-route="file/' + esc(name) +
        '" data-search="' + esc(name) + '" title="' + esc(name) + '"><span class="name">' + esc(name) + "</span></a>");
    });
    html.push("</details>");
    html.push('<div class="side-keys">Keys: <kbd>/</kbd> search &middot; <kbd>j</kbd>/<kbd>k</kbd> move &middot; ' +
      '<kbd>n</kbd>/<kbd>p</kbd> tabs &middot; <kbd>s</kbd> side by side &middot; <kbd>o</kbd> overview &middot; ' +
      '<kbd>?</kbd> help</div>');
    sidebar.innerHTML = html.join("");
  }

  // A resume function's full name repeats its parent's; the tree says where it resumes instead.
  function shortName(f) {
    if (f.kind === "resume" && f.resumes && f.resumes.at_line != null) return "resume at line " + f.resumes.at_line;
    return f.qualname || f.name;
  }

  function navItems() {  // the tree items on screen: not filtered out, not in a closed section
    return Array.prototype.filter.call(sidebar.querySelectorAll(".nav-item[data-route]"), function (a) {
      return !a.classList.contains("hidden") && a.getClientRects().length > 0;
    });
  }

  function markCurrent(route) {
    var items = sidebar.querySelectorAll(".nav-item[data-route]");
    var best = null;
    for (var i = 0; i < items.length; i++) {
      items[i].removeAttribute("aria-current");
      var r = items[i].getAttribute("data-route");
      if (r === route) best = items[i];
    }
    if (!best) {  // a sub-route (a graph stage, a file line): mark its parent item
      for (var j = 0; j < items.length; j++) {
        var rr = items[j].getAttribute("data-route");
        if (route.indexOf(rr + "/") === 0 && (!best || rr.length > best.getAttribute("data-route").length)) best = items[j];
      }
    }
    if (best) {
      var section = best.closest("details");
      if (section && !section.open) section.open = true;
      best.setAttribute("aria-current", "page");
      var top = best.offsetTop, bottom = top + best.offsetHeight;
      if (top < sidebar.scrollTop || bottom > sidebar.scrollTop + sidebar.clientHeight) {
        sidebar.scrollTop = top - sidebar.clientHeight / 3;
      }
    }
  }

  /* ---------- views ---------- */
  function sourceSnippet(fnObj, marks) {
    if (!fnObj || !fnObj.source) return "";
    return codeBlock(fnObj.source, {first: fnObj.firstlineno || 1, marks: marks, links: false});
  }

  function breakBox(b, withFn) {
    var f = FUNCS[b._fn];
    var where = esc((b.filename || (f && f.filename) || "?") + ":" + (b.lineno != null ? b.lineno : "?"));
    var shown = f;  // a resume function has no source of its own: show the function it resumes
    for (var hop = 0; hop < 8 && shown && !shown.source && shown.resumes && shown.resumes.parent in funcIndexByName; hop++) {
      shown = FUNCS[funcIndexByName[shown.resumes.parent]];
    }
    var sameFile = shown && shown.source && (!b.filename || b.filename === shown.filename);
    var snippet = sameFile && b.lineno ? sourceSnippet(shown, [b.lineno]) :
      (b.source_line ? codeBlock(b.source_line, {first: b.lineno || 1, marks: [b.lineno], links: false}) : "");
    return '<div class="box bad graph-break">' +
      (withFn && f ? "<h3>" + link(fnRoute(b._fn), esc(f.qualname || f.name)) + "</h3>" : "") +
      '<div class="reason">' + esc(b.reason || "(no reason recorded)") + "</div>" +
      '<div class="muted">at ' + where + (b.source_line ? ": <code>" + esc(b.source_line) + "</code>" : "") + "</div>" +
      snippet + "</div>";
  }

  function recompileBox(r, withFn) {
    var f = FUNCS[r._fn];
    var entryLink = r.cache_entry != null ? link(fnRoute(r._fn, r.cache_entry), "cache entry " + r.cache_entry) : "";
    return '<div class="box warn recompilation">' +
      (withFn && f ? "<h3>" + link(fnRoute(r._fn), esc(f.qualname || f.name)) + "</h3>" : "") +
      '<div class="muted">failing guard' + (entryLink ? " &rarr; recompiled as " + entryLink : "") + "</div>" +
      '<div class="reason">' + esc(r.reason || "(no reason recorded)") + "</div></div>";
  }

  function viewOverview() {
    var breaks = [], recs = [], entries = 0, fallbacks = 0;
    FUNCS.forEach(function (f) {
      breaks = breaks.concat(f.graph_breaks || []);
      recs = recs.concat(f.recompilations || []);
      (f.cache_entries || []).forEach(function (e) { entries++; if (e.decompiled === false) fallbacks++; });
    });
    var card = function (n, l) { return '<div class="card"><div class="num">' + n + '</div><div class="lbl">' + l + "</div></div>"; };
    var h = ["<h1>Overview</h1>",
      '<div class="sub">' + esc(META.dump_dir || "") + " &middot; torch " + esc(INDEX.torch_version || "?") +
      " &middot; Python " + esc(INDEX.python_version || "?") + " &middot; backend " + esc(INDEX.backend || "?") + "</div>",
      '<div class="cards">' + card(FUNCS.length, "functions compiled") + card(entries, "cache entries") +
      card(GRAPHS.length, "graphs") + card(breaks.length, "graph breaks") + card(recs.length, "recompilations") +
      (fallbacks ? card(fallbacks, "kept as bytecode") : "") + "</div>"];
    h.push("<h2>Compiled functions</h2>");
    if (!FUNCS.length) h.push('<div class="box muted">torch.compile compiled nothing while the dump was recorded.</div>');
    else {
      h.push('<table class="list"><tr><th>function</th><th>kind</th><th>cache entries</th><th>graphs</th>' +
        "<th>graph breaks</th><th>recompilations</th><th>defined at</th></tr>");
      FUNCS.forEach(function (f, i) {
        var gs = [];
        (f.cache_entries || []).forEach(function (e) { gs = gs.concat(e.graphs || []); });
        h.push("<tr><td>" + link(fnRoute(i), "<code>" + esc(f.qualname || f.name) + "</code>") + "</td><td>" +
          esc(f.kind || "user") + "</td><td>" + (f.cache_entries || []).length + "</td><td>" +
          gs.map(function (g) { return graphByName[g] ? link("graph/" + g, "<code>" + esc(g) + "</code>") : esc(g); }).join("<br>") +
          "</td><td>" + (f.graph_breaks || []).length + "</td><td>" + (f.recompilations || []).length +
          '</td><td class="muted where" title="' + esc(f.filename || "") + '">' +
          esc(baseName(f.filename || "?") + ":" + (f.firstlineno || "?")) + "</td></tr>");
      });
      h.push("</table>");
    }
    h.push("<h2>Graph breaks</h2>");
    h.push(breaks.length ? breaks.map(function (b) { return breakBox(b, true); }).join("") :
      '<div class="box muted">No graph breaks.</div>');
    h.push("<h2>Recompilations</h2>");
    h.push(recs.length ? recs.map(function (r) { return recompileBox(r, true); }).join("") :
      '<div class="box muted">No recompilations.</div>');
    var warnings = (INDEX.warnings || []).concat((INDEX.unavailable || []).map(function (u) { return u.feature + ": not available with this torch (" + u.reason + ")"; })).concat((META.truncated || []).map(function (n) { return n + ": cut in this report (too large)"; }))
      .concat((META.missing || []).map(function (n) { return n + ": listed in index.json but missing"; }));
    if (warnings.length) {
      h.push("<h2>Warnings</h2>");
      warnings.forEach(function (w) { h.push('<div class="box warn reason">' + esc(w) + "</div>"); });
    }
    h.push('<p class="muted">Generated ' + esc(META.generated_at || "") + " by depyf " + esc(META.depyf_version || "") + ".</p>");
    return h.join("");
  }

  var layoutStacked = false;

  function viewFunction(i, k) {
    var f = FUNCS[i];
    if (!f) return notFound("function #" + i);
    var entries = f.cache_entries || [];
    if (k == null || k >= entries.length) k = 0;
    var e = entries[k];
    var h = ["<h1>" + esc(f.qualname || f.name) + "</h1>"];
    var sub = [esc(f.kind || "user") + " function", esc((f.filename || "?") + ":" + (f.firstlineno || "?"))];
    if (f.resumes && f.resumes.parent) {
      var pi = funcIndexByName[f.resumes.parent];
      sub.push("resumes " + (pi != null ? link(fnRoute(pi), esc(f.resumes.parent)) : esc(f.resumes.parent)) +
        (f.resumes.at_line ? " after line " + esc(f.resumes.at_line) : ""));
    }
    if (f.full_code_file) sub.push(link("file/" + f.full_code_file, "full code"));
    h.push('<div class="sub">' + sub.join(" &middot; ") + "</div>");
    var breaks = f.graph_breaks || [], recs = f.recompilations || [];
    if (breaks.length) {
      h.push("<h2>Graph breaks (" + breaks.length + ")</h2>");
      breaks.forEach(function (b) { h.push(breakBox(b, false)); });
    }
    if (recs.length) {
      h.push("<h2>Recompilations (" + recs.length + ")</h2>");
      recs.forEach(function (r) { h.push(recompileBox(r, false)); });
    }
    h.push("<h2>Cache entries (" + entries.length + ")</h2>");
    if (!e) {
      h.push('<div class="box muted">No cache entries recorded.</div>');
      return h.join("");
    }
    h.push('<div class="tabs" role="tablist">' + entries.map(function (en, j) {
      return '<a class="tab' + (j === k ? " active" : "") + '" role="tab" href="#' + fnRoute(i, j) + '" data-route="' +
        fnRoute(i, j) + '"' + (en.compile_id ? ' title="compile ' + esc(en.compile_id) + '"' : "") + '>entry ' +
        (en.index != null ? en.index : j) + (en.decompiled === false ? " (bytecode)" : "") + "</a>";
    }).join("") + "</div>");
    if (e.decompiled === false) {
      h.push('<div class="box warn"><b>Kept as Dynamo bytecode:</b> <span class="reason">' +
        esc(e.fallback_reason || "decompilation failed") + "</span></div>");
    }
    var failing = recs.filter(function (r) { return r.cache_entry === k || r.cache_entry === e.index; });
    if (failing.length) {
      h.push('<div class="box warn">Compiled because this guard of an earlier entry failed: <span class="reason">' +
        esc(failing.map(function (r) { return r.reason; }).join("\n")) + "</span></div>");
    }
    var gs = e.graphs || [];
    h.push("<h3>Graphs</h3>");
    h.push(gs.length ? gs.map(function (g) {
      var gr = graphByName[g];
      if (!gr) return '<div class="chips"><span class="chip">' + esc(g) + '</span><span class="muted">(no files)</span></div>';
      var labels = stageLabels(gr.files);
      return '<div class="chips graph-chips">' + link("graph/" + g, "<code>" + esc(g) + "</code>") + " " +
        gr.files.map(function (fl, j) { return link("graph/" + g + "/" + j, esc(labels[j]), "chip"); }).join(" ") + "</div>";
    }).join("") : '<div class="muted">This entry calls no graph.</div>');
    var rs = e.resume_functions || [];
    if (rs.length) {
      h.push("<h3>Resume functions</h3><div class=\"chips\">" + rs.map(function (r) {
        return r in funcIndexByName ? link(fnRoute(funcIndexByName[r]), "<code>" + esc(r) + "</code>", "chip") :
          '<span class="chip">' + esc(r) + "</span>";
      }).join(" ") + "</div>");
    }
    h.push("<h3>Original and transformed code <span class=\"muted\">(<kbd>s</kbd>: " +
      (layoutStacked ? "side by side" : "stacked") + ")</span></h3>");
    var left;
    var marks = breaks.map(function (b) { return b.lineno; });
    if (f.source) {
      left = '<div class="pane-title"><span>original</span><span>' +
        esc((f.filename || "") + ":" + (f.firstlineno || "")) + "</span></div>" +
        codeBlock(f.source, {first: f.firstlineno || 1, marks: marks, links: false});
    } else {
      var parent = f.resumes && FUNCS[funcIndexByName[f.resumes.parent]];
      left = '<div class="pane-title"><span>original: ' + (f.kind === "resume" ? "generated by Dynamo" : "source not available") +
        (parent ? ", resumes " + esc(parent.qualname || parent.name) + " after line " + esc(f.resumes.at_line) : "") +
        "</span></div>" + (parent && parent.source ? codeBlock(parent.source, {first: parent.firstlineno || 1,
          marks: [f.resumes.at_line], links: false}) : '<div class="box muted">No source available' +
          (f.filename ? " for " + esc(f.filename + ":" + (f.firstlineno || "?")) : "") + ".</div>");
    }
    var right = '<div class="pane-title"><span>transformed</span><span>' +
      (e.transformed_code_file ? link("file/" + e.transformed_code_file, esc(e.transformed_code_file)) : "") +
      "</span></div>" + codeBlock(FILES[e.transformed_code_file], {id: "transformed-code"});
    h.push('<div class="split' + (layoutStacked ? " stacked" : "") + '"><div class="pane original">' + left +
      '</div><div class="pane transformed">' + right + "</div></div>");
    h.push("<h3>Guards (" + (e.guards || []).length + ")</h3>");
    // guard_details (when the dump has them) say which user line each guard protects
    var details = Array.isArray(e.guard_details) && e.guard_details.length ? e.guard_details :
      (e.guards || []).map(function (g) { return {expression: g}; });
    h.push('<div class="box" style="padding:0"><ul class="guards">' + details.map(function (d) {
      var from = [d.location, d.user_line].filter(Boolean).join(": ");
      return "<li>" + highlight(String(d.expression || ""), {links: false}).join("\n") +
        (d.kind || from || d.note ? '<div class="guard-from">' + (d.kind ? badge(d.kind, "kind") + " " : "") +
          esc(from) + (d.note ? " &middot; " + esc(d.note) : "") + "</div>" : "") + "</li>";
    }).join("") + "</ul></div>");
    return h.join("");
  }

  // Tab names for a graph's files: a stage written twice is numbered (Inductor's two output codes
  // are the forward's and the backward's).
  function stageLabels(files) {
    var counts = {}, seen = {};
    files.forEach(function (fl) { counts[fl.stage] = (counts[fl.stage] || 0) + 1; });
    return files.map(function (fl) {
      var nth = seen[fl.stage] = (seen[fl.stage] || 0) + 1;
      var label = STAGE_LABEL[fl.stage] || fl.stage;
      if (counts[fl.stage] === 2 && fl.stage === "output_code") return label + (nth === 2 ? " (backward)" : " (forward)");
      return counts[fl.stage] > 1 ? label + " " + (nth - 1) : label;
    });
  }

  function viewGraph(name, j) {
    var g = graphByName[name];
    if (!g) return notFound("graph " + name);
    var files = g.files || [];
    if (j == null || j >= files.length) j = 0;
    var h = ["<h1>" + esc(name) + "</h1>"];
    var callers = (callersOfGraph[name] || []).map(function (ik) {
      var f = FUNCS[ik[0]];
      return link(fnRoute(ik[0], ik[1]), esc(f.qualname || f.name) + " (cache entry " + ik[1] + ")");
    });
    h.push('<div class="sub">called from ' + (callers.length ? callers.join(", ") : esc(g.function || "?")) +
      (g.compile_id ? " &middot; compile " + esc(g.compile_id) : "") +
      (g.global_name ? ' &middot; <span title="the global the transformed code calls">' + esc(g.global_name) + "</span>" : "") +
      ((g.linked_files || []).length ? ' &middot; <span class="runs">&#9679;</span> marks the file the running code comes from' : "") + "</div>");
    if (!files.length) return h.join("") + '<div class="box muted">No files were written for this graph.</div>';
    var labels = stageLabels(files);
    var linked = g.linked_files || [];
    h.push('<div class="tabs" role="tablist">' + files.map(function (fl, x) {
      var label = labels[x];
      var runs = linked.indexOf(fl.file) >= 0;
      return '<a class="tab' + (x === j ? " active" : "") + '" role="tab" data-stage="' + esc(fl.stage) + '" href="#graph/' +
        esc(name) + "/" + x + '" data-route="graph/' + esc(name) + "/" + x + '"' +
        (runs ? ' title="the running code comes from this file: breakpoints in it are hit"' : "") + ">" + esc(label) +
        (runs ? ' <span class="runs">&#9679;</span>' : "") + "</a>";
    }).join("") + "</div>");
    var cur = files[j];
    h.push('<div class="pane-title"><span>' + esc(labels[j]) + "</span><span>" +
      link("file/" + cur.file, esc(cur.file)) + "</span></div>");
    h.push(codeBlock(FILES[cur.file], {id: "stage-code"}));
    return h.join("");
  }

  function viewFile(name, line) {
    if (!(name in FILES)) return notFound("file " + name);
    var marks = line ? [line] : [];
    return "<h1>" + esc(name) + '</h1><div class="sub">' + esc((META.dump_dir || "") + "/" + name) + "</div>" +
      codeBlock(FILES[name], {marks: marks, id: "file-code"});
  }

  function viewSearch(q) {
    var needle = q.toLowerCase();
    var hits = [], LIMIT = 300, total = 0;
    Object.keys(FILES).sort().forEach(function (name) {
      var lines = FILES[name].split("\n");
      for (var n = 0; n < lines.length; n++) {
        if (lines[n].toLowerCase().indexOf(needle) >= 0) {
          total++;
          if (hits.length < LIMIT) hits.push([name, n + 1, lines[n]]);
        }
      }
    });
    var h = ["<h1>Search: " + esc(q) + "</h1>", '<div class="sub">' + plural(total, "matching line") +
      (total > LIMIT ? " (first " + LIMIT + " shown)" : "") + "</div>", '<div class="results box" style="padding:0">'];
    hits.forEach(function (hit) {
      var line = hit[2], at = line.toLowerCase().indexOf(needle);
      var shown = esc(line.slice(0, at)) + "<mark>" + esc(line.slice(at, at + q.length)) + "</mark>" + esc(line.slice(at + q.length));
      h.push('<a class="hit" href="#file/' + esc(hit[0]) + "/L" + hit[1] + '" data-route="file/' + esc(hit[0]) + "/L" +
        hit[1] + '"><span class="where">' + esc(hit[0]) + ":" + hit[1] + "</span>" + shown + "</a>");
    });
    h.push("</div>");
    return h.join("");
  }

  function notFound(what) {
    return '<h1>Not found</h1><div class="box bad">' + esc(what) + " is not in this dump. " + link("overview", "Back to the overview") + "</div>";
  }

  /* ---------- routing ---------- */
  var current = "overview";

  function render(route) {
    current = route || "overview";
    var parts = current.split("/");
    var html, scrollLine = null;
    if (parts[0] === "fn") html = viewFunction(+parts[1], parts[2] === "entry" ? +parts[3] : null);
    else if (parts[0] === "graph") html = viewGraph(parts[1], parts.length > 2 ? +parts[2] : null);
    else if (parts[0] === "file") {
      var rest = parts.slice(1), line = null;
      if (rest.length > 1 && /^L\d+$/.test(rest[rest.length - 1])) line = +rest.pop().slice(1);
      html = viewFile(rest.join("/"), line);
      scrollLine = line;
    } else if (parts[0] === "search") html = viewSearch(decodeURIComponent(parts.slice(1).join("/")));
    else { current = "overview"; html = viewOverview(); }
    main.innerHTML = html;
    markCurrent(current);
    main.scrollTop = 0;
    if (scrollLine) {
      var el = main.querySelector('.ln[data-line="' + scrollLine + '"]');
      if (el) el.scrollIntoView({block: "center"});
    }
    document.title = "depyf: " + current.replace(/\//g, " / ");
  }

  function go(route) {
    if (route === current) return;
    render(route);
    try { history.pushState({route: route}, "", "#" + route); } catch (err) { /* srcdoc iframes may refuse */ }
  }

  function routeFromLocation() {
    var h = location.hash.replace(/^#/, "");
    try { return decodeURIComponent(h) || "overview"; } catch (err) { return h || "overview"; }
  }

  // Intercept internal links: inside a Jupyter srcdoc iframe "#..." would resolve against the notebook URL.
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[data-route]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    go(a.getAttribute("data-route"));
  });
  window.addEventListener("popstate", function () { render(routeFromLocation()); });
  window.addEventListener("hashchange", function () {
    var r = routeFromLocation();
    if (r !== current) render(r);
  });

  /* ---------- search box: filters the tree as you type, Enter searches all code ---------- */
  function filterTree() {
    var q = search.value.trim().toLowerCase();
    var items = sidebar.querySelectorAll(".nav-item[data-search]");
    for (var i = 0; i < items.length; i++) {
      var hay = items[i].getAttribute("data-search").toLowerCase();
      items[i].classList.toggle("hidden", !!q && hay.indexOf(q) < 0);
    }
  }
  search.addEventListener("input", filterTree);
  search.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && search.value.trim()) {
      ev.preventDefault();
      go("search/" + encodeURIComponent(search.value.trim()));
    } else if (ev.key === "Escape") {
      search.value = "";
      filterTree();
      search.blur();
    } else if (ev.key === "ArrowDown") {
      ev.preventDefault();
      search.blur();
      moveInTree(1);
    }
  });

  /* ---------- keyboard ---------- */
  var help = document.getElementById("help");
  document.getElementById("help-button").addEventListener("click", function () { help.hidden = !help.hidden; });

  function moveInTree(step) {
    var items = navItems();
    if (!items.length) return;
    var pos = -1;
    for (var i = 0; i < items.length; i++) if (items[i].getAttribute("aria-current") === "page") pos = i;
    var next = items[Math.max(0, Math.min(items.length - 1, pos + step))];
    go(next.getAttribute("data-route"));
    next.focus({preventScroll: true});
  }

  function moveTab(step) {
    var tabs = main.querySelectorAll(".tabs .tab");
    if (!tabs.length) return;
    var pos = 0;
    for (var i = 0; i < tabs.length; i++) if (tabs[i].classList.contains("active")) pos = i;
    var next = tabs[(pos + step + tabs.length) % tabs.length];
    go(next.getAttribute("data-route"));
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA") return;
    switch (ev.key) {
      case "/": ev.preventDefault(); search.focus(); search.select(); break;
      case "j": case "ArrowDown": ev.preventDefault(); moveInTree(1); break;
      case "k": case "ArrowUp": ev.preventDefault(); moveInTree(-1); break;
      case "n": moveTab(1); break;
      case "p": moveTab(-1); break;
      case "s": layoutStacked = !layoutStacked; render(current); break;
      case "o": go("overview"); break;
      case "?": help.hidden = !help.hidden; break;
      case "Escape": help.hidden = true; break;
      default: return;
    }
  });

  /* ---------- start ---------- */
  document.getElementById("dump-name").textContent = (META.dump_dir || "").split(/[\\/]/).pop() || "";
  var nBreaks = 0, nRecs = 0;
  FUNCS.forEach(function (f) { nBreaks += (f.graph_breaks || []).length; nRecs += (f.recompilations || []).length; });
  document.getElementById("stats").textContent = plural(FUNCS.length, "function") + " \u00b7 " +
    plural(GRAPHS.length, "graph") + " \u00b7 " + plural(nBreaks, "graph break") + " \u00b7 " +
    plural(nRecs, "recompilation");
  renderSidebar();
  render(routeFromLocation());
})();
