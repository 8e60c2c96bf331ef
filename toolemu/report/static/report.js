/* ToolEmu report: the episode list, its filters and the trace viewer.
 *
 * Every string in the data came from a model or a dump and is hostile: it only ever reaches the page through
 * textContent / createTextNode (never innerHTML, never an href or src, never eval). The data is read from the
 * JSON data block (id "report-data") with JSON.parse.
 */
(function () {
  "use strict";

  var PAGE_SIZE = 200;
  var STATUS_TITLES = {
    final_answer: "final answer",
    quit: "quit",
    max_iterations: "max iterations",
    error: "error",
    unknown: "unknown",
  };

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var episodes = data.episodes || [];
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

  /* The filter key of a judgement: its score, or why it has none. */
  function scoreKey(j) {
    if (j && typeof j.score === "number" && isFinite(j.score)) return "s:" + fmtScore(j.score);
    return "none:" + (j && j.status === "missing" ? "missing" : "error");
  }

  function scoreKeyLabel(key) {
    if (key === "none:missing") return "no evaluation (missing)";
    if (key === "none:error") return "evaluation failed";
    return key.slice(2);
  }

  function scoreKeyOrder(key) {
    return key.indexOf("s:") === 0 ? parseFloat(key.slice(2)) : key === "none:error" ? 1e9 : 1e9 + 1;
  }

  function scoreChip(j) {
    if (j && typeof j.score === "number" && isFinite(j.score)) {
      var level = Math.max(0, Math.min(3, Math.round(j.score)));
      return el("span", { class: "chip s" + level, text: fmtScore(j.score), title: j.label || "" });
    }
    var missing = j && j.status === "missing";
    return el("span", {
      class: "chip none",
      text: missing ? "missing" : "failed",
      title: missing ? "no evaluation record" : (j && j.error) || "evaluation failed",
    });
  }

  function statusBadge(status) {
    var known = Object.prototype.hasOwnProperty.call(STATUS_TITLES, status);
    return el("span", { class: "status st-" + (known ? status : "other"), text: known ? STATUS_TITLES[status] : String(status) });
  }

  // --------------------------------------------------------------------------------------------------- state

  var rows = episodes.map(function (ep, i) {
    return {
      i: i,
      ep: ep,
      safety: scoreKey(ep.safety),
      helpfulness: scoreKey(ep.helpfulness),
      toolkits: ep.toolkits || [],
      haystack: null,
    };
  });

  var state = { run: "", toolkit: "", status: "", safety: "", helpfulness: "", search: "", sort: "report", page: 0 };
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
      if (state.safety && r.safety !== state.safety) return false;
      if (state.helpfulness && r.helpfulness !== state.helpfulness) return false;
      if (needle && haystack(r).indexOf(needle) < 0) return false;
      return true;
    });
    var sorters = {
      safety: function (r) { return scoreKeyOrder(r.safety); },
      helpfulness: function (r) { return scoreKeyOrder(r.helpfulness); },
      steps: function (r) { return -((r.ep.steps || []).length); },
    };
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

  function buildFilters() {
    var runOrder = (data.runs || []).map(function (r) { return r.run; });
    var statusOrder = data.statuses || [];
    var runs = countBy(function (r) { return r.ep.run; });
    var toolkits = countBy(function (r) { return r.toolkits; });
    var statuses = countBy(function (r) { return r.ep.status; });
    var safety = countBy(function (r) { return r.safety; });
    var helpfulness = countBy(function (r) { return r.helpfulness; });
    function inOrder(list) {
      return function (a, b) {
        var ia = list.indexOf(a), ib = list.indexOf(b);
        return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib) || byText(a, b);
      };
    }
    function byScore(a, b) { return scoreKeyOrder(a) - scoreKeyOrder(b); }
    var all = [["", "all"]];
    var search = el("input", { id: "f-search", type: "search", placeholder: "case, instruction, answer…", "aria-label": "search" });
    var reset = el("button", { id: "f-reset", type: "button", class: "btn", text: "Reset" });
    var sort = select("f-sort", "Sort", [
      ["report", "report order"],
      ["safety", "safety, lowest first"],
      ["helpfulness", "helpfulness, lowest first"],
      ["steps", "most steps first"],
    ]);
    var bar = el(
      "div",
      { class: "filters", role: "search" },
      select("f-run", "Run", all.concat(optionsFrom(runs, inOrder(runOrder)))),
      select("f-toolkit", "Toolkit", all.concat(optionsFrom(toolkits, byText))),
      select("f-status", "Status", all.concat(optionsFrom(statuses, inOrder(statusOrder), function (s) {
        return STATUS_TITLES[s] || s;
      }))),
      select("f-safety", "Safety", all.concat(optionsFrom(safety, byScore, scoreKeyLabel))),
      select("f-helpfulness", "Helpfulness", all.concat(optionsFrom(helpfulness, byScore, scoreKeyLabel))),
      el("label", { class: "filter grow" }, el("span", { class: "filter-label", text: "Search" }), search),
      sort,
      el("div", { class: "filter end" }, reset)
    );
    bar.addEventListener("change", function (ev) {
      var t = ev.target;
      if (t.tagName !== "SELECT") return;
      state[t.id.slice(2)] = t.value;
      state.page = 0;
      update();
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

  function resetFilters() {
    ["run", "toolkit", "status", "safety", "helpfulness", "search"].forEach(function (k) {
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
      el("td", { class: "num" }, scoreChip(ep.safety)),
      el("td", { class: "num" }, scoreChip(ep.helpfulness)),
      el("td", { class: "num", text: String((ep.steps || []).length) })
    );
    tr.addEventListener("click", function (ev) {
      if (ev.target.closest("a, details, .trace")) return;
      toggle(r.i);
    });
    return tr;
  }

  function detailRow(i) {
    return el("tr", { class: "ep-detail", "data-index": String(i) }, el("td", { colspan: "8" }, buildTrace(i)));
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
      frag.appendChild(el("tr", { class: "empty-row" }, el("td", { colspan: "8", text: "No episode matches these filters." })));
    }
    tbody.replaceChildren(frag);
    var shown = filtered.length === 0 ? "0" : start + 1 + "–" + (start + slice.length);
    countEl.textContent = "showing " + filtered.length + " of " + rows.length + " episodes";
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

  // --------------------------------------------------------------------------------------------------- trace

  function textBlock(text, cls) {
    if (text === undefined || text === null || text === "") return el("div", { class: "text empty", text: "(empty)" });
    return el("div", { class: "text" + (cls ? " " + cls : ""), text: String(text) });
  }

  /* Pretty-print JSON text when it parses; otherwise show it as it is. */
  function jsonBlock(text) {
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

  function step(s, n) {
    var emu = el(
      "details",
      { class: "emu" },
      el("summary", { text: "Emulator's reasoning" }),
      field("Emulator thought", textBlock(s.emulator_thought, "emu-thought")),
      field("Emulator summary", textBlock(s.emulator_summary, "emu-summary"))
    );
    return el(
      "li",
      { class: "step" },
      el("div", { class: "step-no", text: "Step " + n }),
      s.thought ? field("Thought", textBlock(s.thought, "thought")) : null,
      field("Action", el("code", { class: "tool", text: s.tool }), "inline"),
      field("Action input", jsonBlock(s.tool_input), "action-input"),
      field("Observation", jsonBlock(s.observation), "observation"),
      emu
    );
  }

  function evaluation(title, j) {
    j = j || { status: "missing" };
    var head = el(
      "div",
      { class: "eval-head" },
      el("span", { class: "eval-title", text: title }),
      scoreChip(j),
      j.label ? el("span", { class: "eval-label", text: j.label }) : null,
      j.samples > 1 ? el("span", { class: "sub", text: "mean of " + j.samples + " samples" }) : null
    );
    var card = el("div", { class: "eval eval-" + (j.status === "ok" ? "ok" : "bad") }, head);
    if (j.status === "missing") add(card, el("div", { class: "text empty", text: "No evaluation record for this episode." }));
    if (j.error) add(card, field("Evaluation error", el("div", { class: "text error-text", text: j.error })));
    if (j.summary) add(card, field("Summary", textBlock(j.summary, "eval-summary")));
    if (j.thought) add(card, field("Evaluator's thought", textBlock(j.thought, "eval-thought")));
    return card;
  }

  function buildTrace(i) {
    var ep = episodes[i];
    var steps = ep.steps || [];
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
      steps.length
        ? el("ol", { class: "steps" }, steps.map(function (s, k) { return step(s, k + 1); }))
        : el("p", { class: "empty", text: "No tool calls." }),
      field("Final answer", textBlock(ep.final_answer, "final-answer"), "final"),
      ep.error ? field("Episode error", el("div", { class: "text error-text episode-error", text: ep.error }), "error") : null,
      el(
        "div",
        { class: "evals" },
        evaluation("Safety (ToolCallRisk)", ep.safety),
        evaluation("Helpfulness", ep.helpfulness)
      )
    );
  }

  // ---------------------------------------------------------------------------------------------------- init

  function openFromHash() {
    var m = /^#ep-(\d+)$/.exec(location.hash);
    if (!m) return;
    var i = parseInt(m[1], 10);
    if (!(i >= 0 && i < rows.length)) return;
    var at = filtered.findIndex(function (r) { return r.i === i; });
    if (at < 0) {
      resetFilters();
      applyFilters();
      at = filtered.findIndex(function (r) { return r.i === i; });
    }
    open.add(i);
    state.page = Math.floor(at / PAGE_SIZE);
    renderList();
    var tr = document.getElementById("ep-" + i);
    if (tr) tr.scrollIntoView({ block: "start" });
  }

  function init() {
    var viewer = document.getElementById("viewer");
    if (!viewer) return;
    countEl = el("span", { id: "ep-count", class: "count", "aria-live": "polite" });
    tbody = el("tbody");
    var head = el(
      "tr",
      null,
      ["Run", "Case", "Trial", "Toolkits", "Status", "Safety", "Helpfulness", "Steps"].map(function (h, k) {
        return el("th", { class: k === 2 || k >= 5 ? "num" : null, text: h });
      })
    );
    var table = el("table", { id: "ep-table", class: "episodes" }, el("thead", null, head), tbody);
    viewer.replaceChildren(
      buildFilters(),
      el("div", { class: "list-bar" }, countEl, pager("top")),
      el("div", { class: "table-wrap" }, table),
      el("div", { class: "list-bar end" }, pager("bottom"))
    );
    update();
    openFromHash();
    window.addEventListener("hashchange", openFromHash);
    document.body.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
