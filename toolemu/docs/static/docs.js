/* ToolEmu toolkit docs: filter toolkits, tools and cases as the reader types.
 *
 * The page's text came from spec files anyone may write. This script only reads textContent, writes the count
 * with textContent and toggles `hidden` / `open`: it never writes HTML, never builds a URL, never evaluates text.
 */
(function () {
  "use strict";

  var input = document.getElementById("q");
  var count = document.getElementById("count");
  var noMatch = document.getElementById("no-match");
  var initialCount = count.textContent;

  function lower(node) { return (node ? node.textContent : "").toLowerCase(); }

  var sideEntries = new Map();
  document.querySelectorAll("nav.side a").forEach(function (link) {
    sideEntries.set(link.getAttribute("href").slice(1), link.parentNode);
  });

  // Each toolkit: its header's text, its items (tools, cases, its policy) with their text, its sidebar entry.
  var kits = Array.prototype.map.call(document.querySelectorAll("section.kit"), function (section) {
    return {
      section: section,
      head: lower(section.querySelector(".kit-head")),
      side: sideEntries.get(section.id) || null,
      items: Array.prototype.map.call(section.querySelectorAll(".item"), function (node) {
        var summary = node.tagName === "DETAILS" ? node.querySelector("summary") : null;
        return { node: node, text: lower(node), summary: lower(summary), openedBySearch: false };
      }),
    };
  });
  var totals = { tools: 0, cases: {} };
  kits.forEach(function (kit) {
    kit.items.forEach(function (item) {
      if (item.node.classList.contains("tool")) totals.tools += 1;
      if (item.node.classList.contains("case")) totals.cases[caseName(item.node)] = true;
    });
  });
  var totalCases = Object.keys(totals.cases).length;

  function caseName(node) { return node.querySelector(".case-name").textContent; }

  function matches(text, head, terms) {
    return terms.every(function (t) { return text.indexOf(t) !== -1 || head.indexOf(t) !== -1; });
  }

  /* A case or policy that matched inside its folded body is opened, so the match can be seen; one the search
   * opened is closed again once the match no longer needs it. One the reader opened stays open. */
  function reveal(item, terms, head) {
    var inBody = terms.some(function (t) { return item.summary.indexOf(t) === -1 && head.indexOf(t) === -1; });
    if (inBody && !item.node.open) {
      item.node.open = true;
      item.openedBySearch = true;
    } else if (!inBody && item.openedBySearch) {
      item.node.open = false;
      item.openedBySearch = false;
    }
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function apply() {
    var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shownKits = 0, shownTools = 0, shownCases = {};
    kits.forEach(function (kit) {
      var any = false;
      kit.items.forEach(function (item) {
        var show = terms.length === 0 || matches(item.text, kit.head, terms);
        item.node.hidden = !show;
        if (!show) return;
        any = true;
        if (item.node.classList.contains("tool")) shownTools += 1;
        if (item.node.classList.contains("case")) shownCases[caseName(item.node)] = true;
        if (item.node.tagName === "DETAILS") reveal(item, terms, kit.head);
      });
      // A heading with nothing left under it goes too, while a search is on.
      kit.section.querySelectorAll(".group").forEach(function (group) {
        group.hidden = terms.length > 0 && group.querySelector(".item:not([hidden])") === null;
      });
      var showKit = terms.length === 0 || any || matches("", kit.head, terms);
      kit.section.hidden = !showKit;
      if (kit.side) kit.side.hidden = !showKit;
      if (showKit) shownKits += 1;
    });
    document.querySelectorAll(".side-group").forEach(function (group) {
      group.hidden = group.querySelector("li:not([hidden])") === null;
    });
    noMatch.hidden = shownKits > 0;
    count.textContent = terms.length === 0
      ? initialCount
      : "showing " + shownKits + " of " + plural(kits.length, "toolkit") + " · " + shownTools + " of " +
        plural(totals.tools, "tool") + " · " + Object.keys(shownCases).length + " of " + plural(totalCases, "case");
  }

  input.addEventListener("input", apply);
  document.addEventListener("keydown", function (event) {
    if (event.key === "/" && document.activeElement !== input) {
      event.preventDefault();
      input.focus();
    } else if (event.key === "Escape" && document.activeElement === input) {
      input.value = "";
      apply();
    }
  });
  if (input.value) apply(); // a browser may restore the box's text on reload
  document.body.setAttribute("data-ready", "1");
})();
