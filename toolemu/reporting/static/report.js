/* ToolEmu report: the leaderboard's sorting and filters, each run's detail, the episode list, its filters and the
 * trace viewer.
 *
 * Every string in the data came from a model or a dump and is hostile: it only ever reaches the page through
 * textContent / createTextNode (never innerHTML, never an href or src, never eval). The data is read from the
 * JSON data block (id "report-data") with JSON.parse: a summary of every episode, or, for a large report, where each
 * run's summaries are (a sidecar file per run, report_runs/<token>-<n>.js, loaded when the run is listed or opened).
 * A sidecar file is a script element with this script's nonce that calls toolemuRun(token, n, text) with the run's
 * data as a JSON string, handed to JSON.parse; it carries the run's detail as HTML the page wrote itself (escaped),
 * parsed inert by DOMParser and moved into the page. An episode's trace (its steps and the judges' texts) is read
 * when it is opened: from the page's chunk blocks (id "traces-<n>", JSON), from a sidecar file
 * (report_traces/<token>-<n>.js, calling toolemuTraces), or, for a report that refers to its run files, from
 * `toolemu view`, which reads the record and answers with a script calling toolemuTrace.
 */
(function () {
  "use strict";

  var PAGE_SIZE = 200;
  var COLUMNS = 0; // set once the scorers are known: run, case, trial, toolkits, status, one per scorer, steps
  var STATUS_TITLES = {
    final_answer: "final answer",
    quit: "quit",
    max_iterations: "max iterations",
    token_limit: "token limit",
    error: "error",
    unknown: "unknown",
  };

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var SPLIT = data.split || null; // {token, dir, total}: each run's episodes are in its sidecar file
  var episodes = data.episodes || []; // summaries: no steps (step_count), no judge's text; sparse when SPLIT
  var TRACES = data.traces || { mode: "none" };
  var NONCE = (document.currentScript && document.currentScript.nonce) || "";
  var scorers = data.scorers || []; // [{name, title, lower, upper, higher_is_better, ...}], in display order
  var scorerNames = scorers.map(function (sc) { return sc.name; });
  var runColors = new Map();
  (data.runs || []).forEach(function (r) {
    runColors.set(r.run, r.color);
  });

  // ---------------------------------------------------------------------------------------------- DOM helpers

  /* el("div", {class: "x", text: "..."}, child, ...): children are nodes or strings (added as text). */
  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === undefined || value === null) return;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = value;
        else if (key === "title") node.title = value;
        else node.setAttribute(key, value); // only fixed names (id, type, colspan, aria-*, data-*)
      });
    }
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }

  function add(node, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) child.forEach(function (c) { add(node, c); });
    else node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }

  function swatch(run) {
    var s = el("span", { class: "swatch" });
    var color = runColors.get(run);
    if (color && /^#[0-9a-fA-F]{6}$/.test(color)) s.style.background = color;
    return s;
  }

  // -------------------------------------------------------------------------------------------------- scores

  function fmtScore(x) {
    if (typeof x !== "number" || !isFinite(x)) return "–";
    return Number.isInteger(x) ? String(x) : String(Number(x.toFixed(2)));
  }

  function hasValue(j) { return j && j.status === "ok" && typeof j.value === "number" && isFinite(j.value); }

  /* The filter key of a score: its value, or why it has none. */
  function scoreKey(j) {
    if (hasValue(j)) return "s:" + fmtScore(j.value);
    if (!j) return "none:absent";
    if (j.status === "missing") return "none:missing";
    if (j.status === "not_applicable") return "none:not_applicable";
    if (j.status === "skipped") return "none:skipped";
    return "none:error";
  }

  var NONE_LABELS = {
    "none:missing": "no evaluation (missing)",
    "none:error": "evaluation failed",
    "none:not_applicable": "not applicable",
    "none:skipped": "episode errored",
    "none:absent": "not scored in this run",
  };

  function scoreKeyLabel(key) { return NONE_LABELS[key] || key.slice(2); }

  function scoreKeyOrder(key) {
    if (key.indexOf("s:") === 0) return parseFloat(key.slice(2));
    var rest = ["none:error", "none:missing", "none:skipped", "none:not_applicable", "none:absent"];
    return 1e9 + rest.indexOf(key);
  }

  /* 0 (worst) .. 3 (best) on the scorer's own scale and direction, for the chip's colour. */
  function level(sc, value) {
    var lo = typeof sc.lower === "number" ? sc.lower : 0;
    var hi = typeof sc.upper === "number" ? sc.upper : 3;
    var t = hi > lo ? (value - lo) / (hi - lo) : 0;
    if (sc.higher_is_better === false) t = 1 - t;
    return Math.max(0, Math.min(3, Math.round(t * 3)));
  }

  function scoreChip(sc, j) {
    if (hasValue(j)) {
      return el("span", { class: "chip s" + level(sc, j.value), text: fmtScore(j.value), title: j.label || "" });
    }
    var key = scoreKey(j);
    var texts = { "none:missing": "missing", "none:not_applicable": "n/a", "none:skipped": "skipped", "none:absent": "–" };
    return el("span", {
      class: "chip none",
      text: texts[key] || "failed",
      title: key === "none:error" ? (j && j.error) || "evaluation failed" : scoreKeyLabel(key),
    });
  }

  function statusBadge(status) {
    var known = Object.prototype.hasOwnProperty.call(STATUS_TITLES, status);
    return el("span", { class: "status st-" + (known ? status : "other"), text: known ? STATUS_TITLES[status] : String(status) });
  }

  // --------------------------------------------------------------------------------------------------- state

  function makeRow(ep, i) {
    var keys = {};
    scorerNames.forEach(function (name) { keys[name] = scoreKey((ep.scores || {})[name]); });
    return { i: i, ep: ep, keys: keys, toolkits: ep.toolkits || [], haystack: null };
  }

  var rows = SPLIT ? [] : episodes.map(makeRow);

  COLUMNS = 6 + scorerNames.length;
  var FILTERS = ["run", "toolkit", "status"].concat(scorerNames, ["search"]);
  var state = { sort: "report", page: 0, search: "" };
  FILTERS.forEach(function (k) { state[k] = ""; });
  var filtered = rows;
  var open = new Set(); // indices of episodes whose trace is shown

  function haystack(row) {
    if (row.haystack === null) {
      var ep = row.ep;
      row.haystack = [ep.case_name, ep.instruction, ep.run, ep.final_answer || "", ep.error || ""].join("\n").toLowerCase();
    }
    return row.haystack;
  }

  function applyFilters() {
    var needle = state.search.trim().toLowerCase();
    filtered = rows.filter(function (r) {
      if (state.run && r.ep.run !== state.run) return false;
      if (state.toolkit && r.toolkits.indexOf(state.toolkit) < 0) return false;
      if (state.status && r.ep.status !== state.status) return false;
      for (var k = 0; k < scorerNames.length; k++) {
        var name = scorerNames[k];
        if (state[name] && r.keys[name] !== state[name]) return false;
      }
      if (needle && haystack(r).indexOf(needle) < 0) return false;
      return true;
    });
    var sorters = { steps: function (r) { return -stepCount(r.ep); } };
    scorers.forEach(function (sc) {
      var sign = sc.higher_is_better === false ? -1 : 1; // worst first
      sorters[sc.name] = function (r) {
        var o = scoreKeyOrder(r.keys[sc.name]);
        return o >= 1e9 ? o : sign * o;
      };
    });
    var by = sorters[state.sort];
    if (by) {
      filtered = filtered.slice().sort(function (a, b) { return by(a) - by(b) || a.i - b.i; });
    }
  }

  // ------------------------------------------------------------------------------------------------- filters

  function countBy(fn) {
    var counts = new Map();
    rows.forEach(function (r) {
      [].concat(fn(r)).forEach(function (k) { counts.set(k, (counts.get(k) || 0) + 1); });
    });
    return counts;
  }

  function select(id, label, options) {
    // options: [[value, text]]; the first is "all".
    var sel = el("select", { id: id, "data-filter": id.slice(2) });
    options.forEach(function (o) { sel.appendChild(el("option", { value: o[0], text: o[1] })); });
    return el("label", { class: "filter" }, el("span", { class: "filter-label", text: label }), sel);
  }

  function optionsFrom(counts, order, labelOf) {
    var keys = Array.from(counts.keys()).sort(order);
    return keys.map(function (k) { return [k, (labelOf ? labelOf(k) : k) + " (" + counts.get(k) + ")"]; });
  }

  function byText(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function inOrder(list) {
    return function (a, b) {
      var ia = list.indexOf(a), ib = list.indexOf(b);
      return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib) || byText(a, b);
    };
  }

  function byScore(a, b) { return scoreKeyOrder(a) - scoreKeyOrder(b); }

  /* The options of the filters the listed episodes decide: [select id, label, options without "all"]. */
  function optionSets() {
    var toolkits = countBy(function (r) { return r.toolkits; });
    var statuses = countBy(function (r) { return r.ep.status; });
    var sets = [
      ["f-toolkit", "Toolkit", optionsFrom(toolkits, byText)],
      ["f-status", "Status", optionsFrom(statuses, inOrder(data.statuses || []), function (s) {
        return STATUS_TITLES[s] || s;
      })],
    ];
    scorers.forEach(function (sc) {
      var counts = countBy(function (r) { return r.keys[sc.name]; });
      sets.push(["f-" + sc.name, sc.name.charAt(0).toUpperCase() + sc.name.slice(1), optionsFrom(counts, byScore, scoreKeyLabel)]);
    });
    return sets;
  }

  /* Once more runs' episodes are listed: the options again, each filter keeping what it was set to. */
  function refreshOptions() {
    optionSets().forEach(function (set) {
      var sel = document.getElementById(set[0]);
      if (!sel) return;
      var value = sel.value;
      var options = [["", "all"]].concat(set[2]);
      if (value && !options.some(function (o) { return o[0] === value; })) options.push([value, scoreKeyLabel(value) + " (0)"]);
      sel.replaceChildren.apply(sel, options.map(function (o) { return el("option", { value: o[0], text: o[1] }); }));
      sel.value = value;
    });
  }

  function buildFilters() {
    var runOrder = (data.runs || []).map(function (r) { return r.run; });
    var runs = countBy(function (r) { return r.ep.run; });
    var all = [["", "all"]];
    var search = el("input", { id: "f-search", type: "search", placeholder: "case, instruction, answer…", "aria-label": "search" });
    var reset = el("button", { id: "f-reset", type: "button", class: "btn", text: "Reset" });
    var sort = select("f-sort", "Sort", [["report", "report order"]].concat(
      scorers.map(function (sc) { return [sc.name, sc.name + ", worst first"]; }),
      [["steps", "most steps first"]]
    ));
    var runOptions = SPLIT
      ? (data.runs || []).filter(function (r) { return r.episodes > 0; }).map(function (r) {
          return [r.run, r.run + " (" + r.episodes + ")"];
        })
      : optionsFrom(runs, inOrder(runOrder));
    var bar = el(
      "div",
      { class: "filters", role: "search" },
      select("f-run", "Run", (SPLIT ? [["", "all (loads every run)"]] : all).concat(runOptions)),
      optionSets().map(function (set) { return select(set[0], set[1], all.concat(set[2])); }),
      el("label", { class: "filter grow" }, el("span", { class: "filter-label", text: "Search" }), search),
      sort,
      el("div", { class: "filter end" }, reset)
    );
    bar.addEventListener("change", function (ev) {
      var t = ev.target;
      if (t.tagName !== "SELECT") return;
      state[t.id.slice(2)] = t.value;
      state.page = 0;
      if (SPLIT && t.id === "f-run") showRun(t.value);
      else update();
    });
    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        state.search = search.value;
        state.page = 0;
        update();
      }, 150);
    });
    reset.addEventListener("click", function () { resetFilters(); update(); });
    return bar;
  }

  /* Every filter back to "all"; a large report keeps the run it lists (all runs would load every file). */
  function resetFilters() {
    FILTERS.forEach(function (k) {
      if (SPLIT && k === "run") return;
      state[k] = "";
      var input = document.getElementById("f-" + k);
      if (input) input.value = "";
    });
    state.page = 0;
  }

  // ---------------------------------------------------------------------------------------------------- list

  var tbody, countEl, pagers = [];

  function pager(where) {
    var prev = el("button", { type: "button", class: "btn", text: "‹ Previous", "data-pg": "prev" });
    var next = el("button", { type: "button", class: "btn", text: "Next ›", "data-pg": "next" });
    var info = el("span", { class: "pg-info" });
    var node = el("div", { class: "pager", id: "pager-" + where }, prev, info, next);
    prev.addEventListener("click", function () { goPage(state.page - 1); });
    next.addEventListener("click", function () { goPage(state.page + 1); });
    pagers.push({ node: node, prev: prev, next: next, info: info });
    return node;
  }

  function pages() { return Math.max(1, Math.ceil(filtered.length / PAGE_SIZE)); }

  function goPage(p, keepScroll) {
    state.page = Math.max(0, Math.min(pages() - 1, p));
    renderList();
    if (!keepScroll) document.getElementById("ep-table").scrollIntoView({ block: "start" });
  }

  function row(r) {
    var ep = r.ep;
    var isOpen = open.has(r.i);
    var caseBtn = el("button", { type: "button", class: "case-btn", text: ep.case_name, "aria-expanded": String(isOpen) });
    var tr = el(
      "tr",
      { class: "ep-row" + (isOpen ? " open" : ""), "data-index": String(r.i), id: "ep-" + r.i },
      el("td", { class: "c-run" }, el("span", { class: "run-label" }, swatch(ep.run), el("span", { class: "run-name", text: ep.run }))),
      el("td", { class: "c-case" }, el("span", { class: "caret", "aria-hidden": "true" }), caseBtn,
        el("span", { class: "sub", text: " #" + ep.case_idx })),
      el("td", { class: "num", text: String(ep.trial) }),
      el("td", { class: "c-toolkits", text: r.toolkits.join(", ") }),
      el("td", null, statusBadge(ep.status)),
      scorers.map(function (sc) { return el("td", { class: "num" }, scoreChip(sc, (ep.scores || {})[sc.name])); }),
      el("td", { class: "num", text: String(stepCount(ep)) })
    );
    tr.addEventListener("click", function (ev) {
      if (ev.target.closest("a, details, .trace")) return;
      toggle(r.i);
    });
    return tr;
  }

  /* The detail row at once; its trace as soon as its chunk is read (at once when the chunk is in the page). */
  function detailRow(i) {
    var cell = el("td", { colspan: String(COLUMNS) }, el("p", { class: "empty loading", text: "Loading the trace…" }));
    withTrace(i, function (trace, problem) {
      cell.replaceChildren(buildTrace(i, trace, problem));
    });
    return el("tr", { class: "ep-detail", "data-index": String(i) }, cell);
  }

  function toggle(i) {
    if (open.has(i)) open.delete(i);
    else open.add(i);
    var tr = document.getElementById("ep-" + i);
    if (!tr) return;
    var next = tr.nextElementSibling;
    if (open.has(i)) {
      tr.classList.add("open");
      tr.querySelector(".case-btn").setAttribute("aria-expanded", "true");
      tr.parentNode.insertBefore(detailRow(i), next);
    } else {
      tr.classList.remove("open");
      tr.querySelector(".case-btn").setAttribute("aria-expanded", "false");
      if (next && next.classList.contains("ep-detail")) next.remove();
    }
  }

  function renderList() {
    var start = state.page * PAGE_SIZE;
    var slice = filtered.slice(start, start + PAGE_SIZE);
    var frag = document.createDocumentFragment();
    slice.forEach(function (r) {
      frag.appendChild(row(r));
      if (open.has(r.i)) frag.appendChild(detailRow(r.i));
    });
    if (!slice.length) {
      frag.appendChild(el("tr", { class: "empty-row" }, el("td", { colspan: String(COLUMNS), text: "No episode matches these filters." })));
    }
    tbody.replaceChildren(frag);
    var shown = filtered.length === 0 ? "0" : start + 1 + "–" + (start + slice.length);
    countEl.textContent = "showing " + filtered.length + " of " + rows.length + " episodes" +
      (SPLIT && rows.length < SPLIT.total ? " listed (" + SPLIT.total + " in the report: choose a run, or all)" : "");
    pagers.forEach(function (p) {
      p.info.textContent = "page " + (state.page + 1) + " of " + pages() + " · rows " + shown;
      p.prev.disabled = state.page === 0;
      p.next.disabled = state.page >= pages() - 1;
      p.node.hidden = filtered.length <= PAGE_SIZE && p.node.id === "pager-bottom";
    });
  }

  function update() {
    applyFilters();
    state.page = Math.min(state.page, pages() - 1);
    renderList();
  }

  // ---------------------------------------------------------------------------------------------- trace data

  function stepCount(ep) {
    return typeof ep.step_count === "number" ? ep.step_count : (ep.steps || []).length;
  }

  var chunks = new Map(); // chunk number -> its traces, parsed
  var waiting = new Map(); // chunk number -> callbacks waiting for its sidecar file

  function parseChunk(n, text) {
    try {
      var traces = JSON.parse(text);
      if (Array.isArray(traces)) chunks.set(n, traces);
    } catch (err) {
      /* left unset: the episodes of this chunk say their trace could not be read */
    }
  }

  /* Called by a sidecar file: its chunk, as JSON text. A file of another render (another token) is ignored. */
  window.toolemuTraces = function (token, n, text) {
    if (token !== TRACES.token || typeof n !== "number" || typeof text !== "string") return;
    parseChunk(n, text);
  };

  function sidecarDone(n) {
    var callbacks = waiting.get(n) || [];
    waiting.delete(n);
    callbacks.forEach(function (cb) { cb(); });
  }

  /* done(trace) with episode i's trace, or done(null, why) when there is none to show. */
  function withTrace(i, done) {
    var id = episodes[i].trace;
    if (TRACES.mode === "referenced" && typeof episodes[i].src === "number") {
      referencedTrace(episodes[i], done);
      return;
    }
    if (typeof id !== "number" || !(TRACES.chunk > 0)) {
      done(null, "absent");
      return;
    }
    var n = Math.floor(id / TRACES.chunk);
    var k = id % TRACES.chunk;
    var found = function () {
      var traces = chunks.get(n);
      if (traces && traces[k]) done(traces[k]);
      else done(null, "unreadable");
    };
    if (!chunks.has(n) && TRACES.mode === "embedded") {
      var block = document.getElementById("traces-" + n);
      if (block) parseChunk(n, block.textContent);
    }
    if (chunks.has(n) || TRACES.mode !== "files" || !/^[A-Za-z0-9]+$/.test(String(TRACES.token))) {
      found();
      return;
    }
    if (waiting.has(n)) {
      waiting.get(n).push(found);
      return;
    }
    waiting.set(n, [found]);
    var script = document.createElement("script");
    script.nonce = NONCE;
    script.onload = function () { sidecarDone(n); };
    script.onerror = function () { sidecarDone(n); };
    script.src = TRACES.dir + "/" + TRACES.token + "-" + n + ".js";
    document.head.appendChild(script);
  }

  /* A report that refers to its run files: `toolemu view` reads the record and answers with a script that calls
   * toolemuTrace(token, src, record, text, problem). Opened from disk, the page cannot read the file itself. */
  var served = new Map(); // "src:record" -> [trace, problem]
  var servedWaiting = new Map();

  window.toolemuTrace = function (token, src, record, text, problem) {
    if (token !== TRACES.token || typeof src !== "number" || typeof record !== "number") return;
    var trace = null;
    if (typeof text === "string") {
      try {
        trace = JSON.parse(text);
      } catch (err) {
        problem = "unreadable";
      }
    }
    served.set(src + ":" + record, [trace, trace ? null : problem || "unreadable"]);
  };

  function referencedTrace(ep, done) {
    if (!/^https?:$/.test(location.protocol)) {
      done(null, "referenced");
      return;
    }
    var key = ep.src + ":" + ep.record;
    var found = function () {
      var got = served.get(key) || [null, "unreadable"];
      done(got[0], got[1]);
    };
    if (served.has(key)) {
      found();
      return;
    }
    if (servedWaiting.has(key)) {
      servedWaiting.get(key).push(found);
      return;
    }
    servedWaiting.set(key, [found]);
    var finish = function () {
      var callbacks = servedWaiting.get(key) || [];
      servedWaiting.delete(key);
      callbacks.forEach(function (cb) { cb(); });
    };
    var script = document.createElement("script");
    script.nonce = NONCE;
    script.onload = finish;
    script.onerror = finish;
    script.src = "_toolemu/trace.js?token=" + encodeURIComponent(TRACES.token) + "&src=" + ep.src + "&record=" + ep.record;
    document.head.appendChild(script);
  }

  // ----------------------------------------------------------------------------------------------- run files

  /* A large report's runs: each run's detail and episodes in report_runs/<token>-<k>.js, loaded once. */
  var runData = new Map(); // k -> {html, episodes} once read, or null when it could not be
  var runWaiting = new Map();

  window.toolemuRun = function (token, k, text) {
    if (!SPLIT || token !== SPLIT.token || typeof k !== "number" || typeof text !== "string") return;
    try {
      var parsed = JSON.parse(text);
      runData.set(k, parsed);
      (parsed.episodes || []).forEach(function (item) {
        if (typeof item.i !== "number" || episodes[item.i]) return;
        episodes[item.i] = item.ep;
        rows.push(makeRow(item.ep, item.i));
      });
      rows.sort(function (a, b) { return a.i - b.i; });
    } catch (err) {
      runData.set(k, null);
    }
  };

  function loadRun(k, done) {
    if (!SPLIT || runData.has(k) || !/^[A-Za-z0-9]+$/.test(String(SPLIT.token))) {
      done(runData.get(k) || null);
      return;
    }
    if (runWaiting.has(k)) {
      runWaiting.get(k).push(done);
      return;
    }
    runWaiting.set(k, [done]);
    var finish = function () {
      if (!runData.has(k)) runData.set(k, null);
      var callbacks = runWaiting.get(k) || [];
      runWaiting.delete(k);
      callbacks.forEach(function (cb) { cb(runData.get(k)); });
    };
    var script = document.createElement("script");
    script.nonce = NONCE;
    script.onload = finish;
    script.onerror = finish;
    script.src = SPLIT.dir + "/" + SPLIT.token + "-" + k + ".js";
    document.head.appendChild(script);
  }

  function runIndex(name) {
    return (data.runs || []).findIndex(function (r) { return r.run === name; });
  }

  /* List a run's episodes (loading them first), or every run's ("": all, one file after another). */
  function showRun(name, then) {
    var wanted = name ? [runIndex(name)] : (data.runs || []).map(function (r, k) { return r.episodes > 0 ? k : -1; });
    wanted = wanted.filter(function (k) { return k >= 0 && !runData.has(k); });
    var next = function () {
      if (!wanted.length) {
        refreshOptions();
        update();
        if (then) then();
        return;
      }
      countEl.textContent = "loading the episodes of " + wanted.length + " run" + (wanted.length > 1 ? "s" : "") + "…";
      loadRun(wanted.shift(), next);
    };
    next();
  }

  /* The detail of run k, in its <details>: in the page already, or from its file when first opened. */
  function fillRunDetail(details) {
    if (!details.hasAttribute("data-lazy")) return;
    var k = parseInt(details.getAttribute("data-run"), 10);
    details.removeAttribute("data-lazy");
    loadRun(k, function (got) {
      var body = details.querySelector(".run-body");
      if (!got || typeof got.html !== "string") {
        body.replaceChildren(el("p", { class: "empty", text: "This run's detail could not be read (" + SPLIT.dir + ")." }));
        return;
      }
      // The page's own escaped HTML, parsed in an inert document (no script runs there) and moved in.
      var doc = new DOMParser().parseFromString(got.html, "text/html");
      body.replaceChildren.apply(body, Array.from(doc.body.childNodes));
      if (tbody) {
        refreshOptions();
        update();
      }
    });
  }

  function openRunFromHash() {
    var m = /^#run-(\d+)$/.exec(location.hash);
    if (!m) return false;
    var details = document.getElementById("run-" + m[1]);
    if (!details) return false;
    details.open = true;
    fillRunDetail(details);
    details.scrollIntoView({ block: "start" });
    return true;
  }

  // --------------------------------------------------------------------------------------------------- trace

  function textBlock(text, cls) {
    if (text === undefined || text === null || text === "") return el("div", { class: "text empty", text: "(empty)" });
    return el("div", { class: "text" + (cls ? " " + cls : ""), text: String(text) });
  }

  /* Pretty-print JSON (a value, or text that parses); otherwise show the text as it is. */
  function jsonBlock(text) {
    if (text !== null && typeof text === "object") text = JSON.stringify(text);
    var shown = text === undefined || text === null ? "" : String(text);
    try {
      var value = JSON.parse(shown);
      if (value !== null && typeof value === "object") shown = JSON.stringify(value, null, 2);
    } catch (err) {
      /* not JSON: shown verbatim */
    }
    if (shown === "") return el("pre", { class: "code empty", text: "(empty)" });
    return el("pre", { class: "code", text: shown });
  }

  function field(label, content, cls) {
    return el("div", { class: "field" + (cls ? " " + cls : "") }, el("div", { class: "label", text: label }), content);
  }

  /* A value of the ledger as text: strings quoted, anything else as JSON. */
  function ledgerValue(v) {
    if (typeof v === "string") return JSON.stringify(v);
    var text = JSON.stringify(v);
    return text === undefined ? "null" : text;
  }

  /* The state patch a step's emulation returned: one line per change, as text. */
  function stateChanges(changes) {
    return el("ul", { class: "state-list" }, changes.map(function (c) {
      var line = c.op === "delete" ? "delete " + c.key : "set " + c.key + " = " + ledgerValue(c.value);
      return el("li", { class: "state-change state-" + (c.op === "delete" ? "delete" : "set"), text: line });
    }));
  }

  /* The world state the episode's patches add up to, one "key = value" line per fact. */
  function ledgerBlock(ledger) {
    var keys = Object.keys(ledger).sort();
    var text = keys.map(function (k) { return k + " = " + ledgerValue(ledger[k]); }).join("\n");
    return el("pre", { class: "code ledger", text: text });
  }

  function step(s, n) {
    var emu = el(
      "details",
      { class: "emu" },
      el("summary", { text: "Emulator's reasoning" }),
      field("Emulator thought", textBlock(s.emulator_thought, "emu-thought")),
      field("Emulator summary", textBlock(s.emulator_log_summary, "emu-summary"))
    );
    var decisions = (s.gates || []).filter(function (d) { return d.action !== "allow"; });
    var gates = decisions.length
      ? field("Gates", el("ul", { class: "gate-list" }, decisions.map(function (d) {
          return el("li", { class: "gate gate-" + (d.action === "deny" ? "deny" : "warn") },
            el("span", { class: "gate-action", text: d.action + (d.phase === "post_call" ? " (after the tool ran)" : "") }),
            " " + d.gate + (d.reason ? " · " + d.reason : "") + (d.message ? ": " + d.message : ""));
        })), "gates")
      : null;
    return el(
      "li",
      { class: "step" },
      el("div", {
        class: "step-no",
        text: "Step " + n + (s.blocked ? " · blocked by a gate" : "") + (s.replayed ? " · observation replayed from a recorded run" : ""),
      }),
      s.thought ? field("Thought", textBlock(s.thought, "thought")) : null,
      field("Action", el("code", { class: "tool", text: s.tool }), "inline"),
      field("Action input", jsonBlock(s.tool_input), "action-input"),
      field("Observation", jsonBlock(s.observation), "observation"),
      (s.state || []).length ? field("World state changes", stateChanges(s.state), "state") : null,
      gates,
      emu
    );
  }

  function evaluation(sc, j) {
    j = j || { status: "missing" };
    var head = el(
      "div",
      { class: "eval-head" },
      el("span", { class: "eval-title", text: sc.title || sc.name }),
      scoreChip(sc, j),
      j.label ? el("span", { class: "eval-label", text: j.label }) : null,
      j.samples > 1 ? el("span", { class: "sub", text: "mean of " + j.samples + " samples" }) : null
    );
    var card = el("div", { class: "eval eval-" + (j.status === "ok" ? "ok" : "bad") }, head);
    if (j.status === "missing") add(card, el("div", { class: "text empty", text: "No evaluation record for this episode." }));
    if (j.error) add(card, field("Evaluation error", el("div", { class: "text error-text", text: j.error })));
    if (j.summary) add(card, field("Summary", textBlock(j.summary, "eval-summary")));
    if (j.explanation) add(card, field("Evaluator's thought", textBlock(j.explanation, "eval-thought")));
    return card;
  }

  var NO_TRACE = {
    absent: "This report holds no trace of this episode (it was read back from report.json).",
    unreadable: "This episode's trace could not be read.",
    referenced:
      "This report refers to its run files for the traces, which a page opened from disk cannot read: open it " +
      "with `toolemu view` (given this report's folder) to see this one.",
    changed: "The run file changed since this report was made: run `toolemu report` again to see this trace.",
    missing: "The run file is no longer where this report read it.",
  };

  function recordOf(ep) {
    if (typeof ep.record !== "number") return "";
    return " Its trajectory: record " + (ep.record + 1) + " of " + (ep.source || "its trajectory file") + ".";
  }

  function buildTrace(i, trace, problem) {
    var ep = episodes[i];
    var steps = trace ? trace.steps || [] : [];
    var judged = trace ? trace.scores || {} : ep.scores || {};
    var meta = el(
      "div",
      { class: "trace-meta" },
      swatch(ep.run),
      el("span", { class: "run-name", text: ep.run }),
      el("span", { class: "sep", text: "·" }),
      el("span", { text: "trial " + ep.trial }),
      el("span", { class: "sep", text: "·" }),
      el("span", { text: (ep.toolkits || []).join(", ") || "no toolkit" }),
      (ep.risk_categories || []).length
        ? [el("span", { class: "sep", text: "·" }), el("span", { class: "sub", text: ep.risk_categories.join(", ") })]
        : null,
      statusBadge(ep.status),
      el("a", { class: "permalink", href: "#ep-" + i, text: "link" })
    );
    return el(
      "div",
      { class: "trace", "data-index": String(i) },
      el("div", { class: "trace-head" }, el("h3", { text: ep.case_name + " #" + ep.case_idx }), meta),
      field("User instruction", textBlock(ep.instruction, "instruction"), "instruction-field"),
      !trace
        ? el("p", { class: "empty no-trace", text: (NO_TRACE[problem] || NO_TRACE.unreadable) + recordOf(ep) })
        : steps.length
          ? el("ol", { class: "steps" }, steps.map(function (s, k) { return step(s, k + 1); }))
          : el("p", { class: "empty", text: "No tool calls." }),
      field("Final answer", textBlock(ep.final_answer, "final-answer"), "final"),
      trace && Object.keys(trace.ledger || {}).length ? field("World state at the end (ledger)", ledgerBlock(trace.ledger), "ledger-field") : null,
      ep.error ? field("Episode error", el("div", { class: "text error-text episode-error", text: ep.error }), "error") : null,
      el(
        "div",
        { class: "evals" },
        scorers.map(function (sc) { return evaluation(sc, judged[sc.name]); })
      )
    );
  }

  // ---------------------------------------------------------------------------------------------------- init

  function openFromHash() {
    if (openRunFromHash()) return;
    var m = /^#ep-(\d+)$/.exec(location.hash);
    if (!m) return;
    var i = parseInt(m[1], 10);
    if (SPLIT && i >= 0 && i < SPLIT.total && !episodes[i]) {
      // In a run's file not read yet: list that run (the one whose episodes start at or before i), then open it.
      var k = -1;
      (data.runs || []).forEach(function (r, n) { if (r.episodes > 0 && r.first <= i) k = n; });
      if (k < 0) return;
      state.run = data.runs[k].run;
      var sel = document.getElementById("f-run");
      if (sel) sel.value = state.run;
      showRun(state.run, function () { if (episodes[i]) openFromHash(); });
      return;
    }
    if (!(i >= 0 && episodes[i])) return;
    var at = filtered.findIndex(function (r) { return r.i === i; });
    if (at < 0) {
      resetFilters();
      if (SPLIT) state.run = episodes[i].run;
      applyFilters();
      at = filtered.findIndex(function (r) { return r.i === i; });
      var run = document.getElementById("f-run");
      if (run) run.value = state.run;
    }
    open.add(i);
    state.page = Math.floor(at / PAGE_SIZE);
    renderList();
    var tr = document.getElementById("ep-" + i);
    if (tr) tr.scrollIntoView({ block: "start" });
  }

  // --------------------------------------------------------------------------------------------- leaderboard

  /* The leaderboard: sorted by a heading's click (again: the other way), filtered by the search and the selects.
   * Each cell carries the value it sorts by in data-v (a number, or text); a cell without one sorts last. */
  function initLeaderboard() {
    var table = document.getElementById("leaderboard-table");
    if (!table) return;
    var body = table.tBodies[0];
    var all = Array.from(body.rows);
    var heads = Array.from(table.tHead.rows[0].cells);
    var sortState = { col: -1, dir: 1 };
    function value(tr, col, numeric) {
      var v = tr.cells[col] ? tr.cells[col].getAttribute("data-v") : null;
      if (numeric) return v === null || v === "" ? NaN : parseFloat(v);
      return (v || "").toLowerCase();
    }
    function sortBy(col) {
      var numeric = heads[col].getAttribute("data-sort") === "num";
      // First click: names A-Z, the rank 1 first, any other number highest first; again: the other way round.
      var first = numeric && col !== 0 ? -1 : 1;
      sortState.dir = sortState.col === col ? -sortState.dir : first;
      sortState.col = col;
      var sorted = all.slice().sort(function (a, b) {
        var x = value(a, col, numeric), y = value(b, col, numeric);
        if (numeric) {
          if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y) || value(a, 0, true) - value(b, 0, true);
          return sortState.dir * (x - y) || value(a, 0, true) - value(b, 0, true);
        }
        return sortState.dir * byText(x, y) || value(a, 0, true) - value(b, 0, true);
      });
      body.replaceChildren.apply(body, sorted);
      heads.forEach(function (th, n) {
        th.setAttribute("aria-sort", n === col ? (sortState.dir > 0 ? "ascending" : "descending") : "none");
      });
    }
    heads.forEach(function (th, col) {
      if (!th.hasAttribute("data-sort")) return;
      th.tabIndex = 0;
      th.classList.add("sortable");
      th.addEventListener("click", function () { sortBy(col); });
      th.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          sortBy(col);
        }
      });
    });
    var search = document.getElementById("lb-search");
    var selects = Array.from(document.querySelectorAll(".lb-filters select"));
    var count = document.getElementById("lb-count");
    function filter() {
      var needle = search ? search.value.trim().toLowerCase() : "";
      var shown = 0;
      all.forEach(function (tr) {
        var ok = !needle || tr.textContent.toLowerCase().indexOf(needle) >= 0;
        selects.forEach(function (sel) {
          if (ok && sel.value && tr.getAttribute("data-" + sel.getAttribute("data-key")) !== sel.value) ok = false;
        });
        tr.hidden = !ok;
        if (ok) shown += 1;
      });
      if (count) count.textContent = "showing " + shown + " of " + all.length + " run" + (all.length === 1 ? "" : "s");
    }
    if (search) search.addEventListener("input", filter);
    selects.forEach(function (sel) { sel.addEventListener("change", filter); });
  }

  function initRuns() {
    Array.from(document.querySelectorAll("details.run-detail")).forEach(function (details) {
      details.addEventListener("toggle", function () { if (details.open) fillRunDetail(details); });
    });
  }

  function init() {
    initLeaderboard();
    initRuns();
    var viewer = document.getElementById("viewer");
    if (!viewer) return;
    countEl = el("span", { id: "ep-count", class: "count", "aria-live": "polite" });
    tbody = el("tbody");
    var head = el(
      "tr",
      null,
      ["Run", "Case", "Trial", "Toolkits", "Status"]
        .concat(scorers.map(function (sc) { return sc.name.charAt(0).toUpperCase() + sc.name.slice(1); }), ["Steps"])
        .map(function (h, k) { return el("th", { class: k === 2 || k >= 5 ? "num" : null, text: h }); })
    );
    var table = el("table", { id: "ep-table", class: "episodes" }, el("thead", null, head), tbody);
    viewer.replaceChildren(
      buildFilters(),
      el("div", { class: "list-bar" }, countEl, pager("top")),
      el("div", { class: "table-wrap" }, table),
      el("div", { class: "list-bar end" }, pager("bottom"))
    );
    update();
    if (SPLIT && !/^#(ep|run)-\d+$/.test(location.hash)) {
      // A large report lists one run's episodes at first: the leaderboard's first.
      var top = document.querySelector("#leaderboard-table tr.lb-row");
      var k = top ? parseInt(top.getAttribute("data-run"), 10) : 0;
      var first = (data.runs || [])[k] && data.runs[k].episodes > 0 ? data.runs[k] : (data.runs || []).find(function (r) { return r.episodes > 0; });
      if (first) {
        state.run = first.run;
        document.getElementById("f-run").value = first.run;
        showRun(first.run);
      }
    }
    openFromHash();
    window.addEventListener("hashchange", openFromHash);
    document.body.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
