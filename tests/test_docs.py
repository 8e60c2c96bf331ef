"""`toolemu docs`: the toolkit docs page (complete, self-contained, hostile text inert, search works in a real
headless browser), policy documents, and the OpenAPI documents."""

from __future__ import annotations

import html as htmllib
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from jsonschema import Draft202012Validator

from toolemu.docs import build_catalog, load_catalog, openapi_document, render_docs
from toolemu.docs import policies as policy_keys
from toolemu.docs.markdown import render_markdown
from toolemu.docs.openapi import status_for
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS
from toolemu.specs import load_benchmark

SHIPPED_TOOLKITS, SHIPPED_TOOLS = 43, 401  # the shipped benchmark; update when it grows
PAYLOAD_SCRIPT = "<script>window.__xss=1</script>"
PAYLOAD_IMG = '<img src=x onerror="window.__xss=1">'
PAYLOAD = f"{PAYLOAD_SCRIPT} {PAYLOAD_IMG}"
BREAKOUT = "</script><script>window.__xss=1</script>"


@pytest.fixture(scope="module")
def shipped_page() -> str:
    return render_docs(load_catalog())


def section(page: str, anchor: str) -> str:
    """The HTML of one toolkit's section (sections do not nest)."""
    m = re.search(rf'<section class="kit" id="{re.escape(anchor)}">.*?</section>', page, re.S)
    assert m, anchor
    return m.group(0)


# ------------------------------------------------------------------------------------------ hostile specs


def hostile_toolkit(name: str = f"Evil{PAYLOAD_IMG}") -> dict[str, Any]:
    """Every string a toolkit file holds is a payload that would run if it were ever treated as HTML (but the names
    an agent calls, name_for_model and tool names: the loader takes only one word there)."""
    return {
        "toolkit": name,
        "name_for_model": "Evil",
        "name_for_human": f"human {PAYLOAD}",
        "description_for_model": f"for model {PAYLOAD} {BREAKOUT}",
        "description_for_human": f"for human {PAYLOAD}",
        "category": f"category {PAYLOAD_IMG}",
        "risks": [f"risk {PAYLOAD}"],
        "policy": "evil-policy",
        "tools": [
            {
                "name": "Tool",
                "summary": f"summary {PAYLOAD} {BREAKOUT}",
                "parameters": [
                    {"name": f"p{PAYLOAD_IMG}", "type": "string", "description": f"param {PAYLOAD}", "required": True}
                ],
                "returns": [{"name": f"r{PAYLOAD_IMG}", "type": "object", "description": f"return {PAYLOAD}"}],
                "exceptions": [{"name": f"X{PAYLOAD_IMG}", "description": f"exception {PAYLOAD}"}],
            }
        ],
    }


def hostile_case(toolkit: str) -> dict[str, Any]:
    return {
        "name": f"case {PAYLOAD}",
        "Toolkits": [toolkit],
        "User Instruction": f"instruction {PAYLOAD} {BREAKOUT}",
        "Potential Risky Outcomes": [f"Data loss: outcome {PAYLOAD}"],
        "Potential Risky Actions": [f"action {PAYLOAD}"],
        "Initial State": [f"state {PAYLOAD}"],
        "Threat": {
            "kind": "prompt_injection",
            "vector": f"vector {PAYLOAD_IMG}",
            "description": f"threat {PAYLOAD}",
            "targets": [f"target {PAYLOAD}"],
        },
        "Policy": "evil-policy",
    }


HOSTILE_POLICY = f"""# Policy {PAYLOAD}

Intro {PAYLOAD} with `code {PAYLOAD_IMG}` and **bold {PAYLOAD_SCRIPT}**.

## Rules

1. Rule one {PAYLOAD}
   continues here.
2. <a href="javascript:window.__xss=1">click</a>
"""


def write_specs(root: Path, toolkits: list[dict], cases: list[dict], policies: dict[str, str]) -> tuple[Path, Path]:
    (root / "toolkits").mkdir(parents=True)
    (root / "cases").mkdir()
    (root / "policies").mkdir()
    (root / "toolkits" / "kits.json").write_text(json.dumps(toolkits), encoding="utf-8")
    (root / "cases" / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    for name, text in policies.items():
        (root / "policies" / f"{name}.md").write_text(text, encoding="utf-8")
    return root / "toolkits", root / "cases"


@pytest.fixture
def hostile_specs(tmp_path: Path) -> tuple[Path, Path]:
    kit = hostile_toolkit()
    return write_specs(tmp_path / "specs", [kit], [hostile_case(kit["toolkit"])], {"evil-policy": HOSTILE_POLICY})


# ------------------------------------------------------------------------------------------------ the page


def test_page_lists_every_shipped_toolkit_and_tool(shipped_page: str) -> None:
    bench = load_benchmark([DEFAULT_TOOLKITS])
    assert (len(bench.toolkits), bench.num_tools) == (SHIPPED_TOOLKITS, SHIPPED_TOOLS)
    assert shipped_page.count('<section class="kit" id="tk-') == SHIPPED_TOOLKITS
    assert shipped_page.count('<article class="tool item" id="tool-') == SHIPPED_TOOLS
    sidebar = re.search(r'<nav class="side".*?</nav>', shipped_page, re.S).group(0)
    for kit in bench.toolkits.values():
        body = section(shipped_page, f"tk-{kit.toolkit}")
        assert f'<a href="#tk-{kit.toolkit}">{kit.toolkit}</a>' in sidebar
        assert htmllib.escape(kit.description_for_model, quote=True) in body
        assert all(htmllib.escape(r, quote=True) in body for r in kit.risks)
        for tool in kit.tools:
            full = kit.tool_full_name(tool)
            assert f'id="tool-{full}"' in body and f'<code class="tool-name">{full}</code>' in body
            assert all(f'<code class="arg">{p.name}</code>' in body for p in tool.parameters + tool.returns)
            assert all(f"<dt><code>{x.name}</code></dt>" in body for x in tool.exceptions)
    assert f"{SHIPPED_TOOLKITS} toolkits · {SHIPPED_TOOLS} tools" in shipped_page


def test_every_threat_appears_under_each_toolkit_of_its_case(shipped_page: str) -> None:
    bench = load_benchmark([DEFAULT_CASES], known_toolkits=load_benchmark([DEFAULT_TOOLKITS]).toolkits)
    threats = [c for c in bench.cases if c.threat is not None]
    assert threats
    for case in threats:
        for kit in case.toolkits:
            m = re.search(
                rf'<details class="case item" id="case-{re.escape(kit)}-{re.escape(case.name)}">.*?</details>',
                section(shipped_page, f"tk-{kit}"),
                re.S,
            )
            assert m, (kit, case.name)
            threat = re.search(r'<dl class="threat">.*?</dl>', m.group(0), re.S).group(0)
            for text in (case.threat.kind, case.threat.vector, case.threat.description, *case.threat.targets):
                assert htmllib.escape(text, quote=True) in threat, (case.name, text)
            assert htmllib.escape(case.user_instruction, quote=True) in m.group(0)
            assert all(htmllib.escape(r, quote=True) in m.group(0) for r in case.potential_risky_actions)
    # A vector naming a known tool links to that tool's anchor.
    case = threats[0]
    assert f'<a href="#tool-{case.threat.vector}"><code>{case.threat.vector}</code></a>' in shipped_page


def test_page_is_self_contained_with_a_nonce_csp(shipped_page: str) -> None:
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", shipped_page, re.I)
    assert not re.search(r"@import|url\(", shipped_page, re.I)
    csp = htmllib.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', shipped_page)[1])
    assert csp.startswith("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-")
    nonce = re.search(r"'nonce-([^']+)'", csp)[1]
    assert re.findall(r"<script\b[^>]*>", shipped_page) == [f'<script nonce="{nonce}">']
    assert shipped_page.index("Content-Security-Policy") < shipped_page.index("<style")


def test_hostile_specs_appear_only_escaped(hostile_specs: tuple[Path, Path]) -> None:
    page = render_docs(load_catalog([hostile_specs[0]], [hostile_specs[1]]))
    for raw in (PAYLOAD_SCRIPT, PAYLOAD_IMG, BREAKOUT, '<a href="javascript'):
        assert raw not in page, raw
    # Every link points inside the page (the icon aside): nothing a spec file says becomes a URL.
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', page) if h != "data:,")
    assert len(re.findall(r"<script\b", page, re.I)) == 1 and "<img" not in page.lower()
    for text in ("for model", "summary", "param", "return", "exception", "instruction", "threat", "target"):
        assert htmllib.escape(f"{text} {PAYLOAD}", quote=True) in page, text
    # Anchors are built from names but keep only safe characters.
    assert re.findall(r'\bid="([^"]*)"', page) and all(
        re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in re.findall(r'\bid="([^"]*)"', page)
    )


# ------------------------------------------------------------------------------------------------ policies


def test_policy_documents_render_as_safe_markdown(tmp_path: Path) -> None:
    kit = hostile_toolkit("Payments") | {"policy": "payments", "name_for_model": "Pay"}
    kit["tools"][0]["name"] = "Send"
    other = hostile_toolkit("Other") | {"policy": "../secrets", "name_for_model": "Other"}
    other["tools"][0]["name"] = "Do"
    cases = [hostile_case("Payments") | {"name": "c1", "Policy": "missing"}, hostile_case("Other") | {"name": "c2"}]
    del cases[1]["Policy"]
    (tmp_path / "secrets.md").write_text("TOP SECRET", encoding="utf-8")
    kits, case_dir = write_specs(tmp_path / "specs", [kit, other], cases, {"payments": HOSTILE_POLICY})
    page = render_docs(load_catalog([kits], [case_dir]))

    payments = section(page, "tk-Payments")
    policy = re.search(r'<details class="policy kit-policy item">.*?</details>', payments, re.S).group(0)
    assert "<code>payments</code>" in policy
    assert f"<h4>Policy {htmllib.escape(PAYLOAD, quote=True)}</h4>" in policy and "<h5>Rules</h5>" in policy
    assert '<li value="1">Rule one' in policy and "continues here.</li>" in policy
    assert f"<code>code {htmllib.escape(PAYLOAD_IMG, quote=True)}</code>" in policy
    assert '<li value="2">&lt;a href=&quot;javascript:' in policy
    # A name that is not a file name is never opened; a missing document says so.
    assert "TOP SECRET" not in page
    assert "not a policy name" in section(page, "tk-Other")
    assert "no policies/missing.md was found" in payments
    c2 = re.search(r'<details class="case item" id="case-Other-c2">.*?</details>', page, re.S).group(0)
    assert "Policy <code>" not in c2


def test_the_policy_keys_are_one_constant_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kit = hostile_toolkit("Payments") | {"domain_policy": "payments"}
    del kit["policy"]
    case = hostile_case("Payments") | {"Domain Policy": "payments"}
    del case["Policy"]
    kits, cases = write_specs(tmp_path / "specs", [kit], [case], {"payments": "# Payments\n\n1. Ask first."})
    assert "Ask first." not in render_docs(load_catalog([kits], [cases]))
    monkeypatch.setattr(policy_keys, "TOOLKIT_POLICY_KEY", "domain_policy")
    monkeypatch.setattr(policy_keys, "CASE_POLICY_KEY", "Domain Policy")
    page = render_docs(load_catalog([kits], [cases]))
    assert page.count('<li value="1">Ask first.</li>') == 2  # the toolkit's and the case's


def test_markdown_subset() -> None:
    out = render_markdown("# T\n\npara\nwraps\n\n- a\n- b\n\n3. three\n4) four\n\n```\n<b>x</b>\n```\n<i>raw</i>")
    assert out == (
        "<h4>T</h4><p>para wraps</p><ul><li>a</li><li>b</li></ul>"
        '<ol><li value="3">three</li><li value="4">four</li></ol>'
        '<pre class="code">&lt;b&gt;x&lt;/b&gt;</pre><p>&lt;i&gt;raw&lt;/i&gt;</p>'
    )
    assert render_markdown("###### deep", top_level=4) == "<h6>deep</h6>"


# ------------------------------------------------------------------------------------------------- OpenAPI

# The structure every document must have: OpenAPI 3.1's required fields, plus what we promise per operation.
OPENAPI_SHAPE = {
    "type": "object",
    "required": ["openapi", "info", "paths"],
    "properties": {
        "openapi": {"type": "string", "pattern": r"^3\.1\.\d+$"},
        "info": {
            "type": "object",
            "required": ["title", "version"],
            "properties": {"title": {"type": "string", "minLength": 1}, "version": {"type": "string"}},
        },
        "paths": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": r"^/[A-Za-z0-9_-]+/[A-Za-z0-9_-]+$"},
            "additionalProperties": {
                "type": "object",
                "required": ["post"],
                "additionalProperties": False,
                "properties": {
                    "post": {
                        "type": "object",
                        "required": ["operationId", "requestBody", "responses"],
                        "properties": {
                            "operationId": {"type": "string"},
                            "requestBody": {
                                "type": "object",
                                "required": ["content"],
                                "properties": {
                                    "content": {
                                        "type": "object",
                                        "required": ["application/json"],
                                        "additionalProperties": {"required": ["schema"]},
                                    }
                                },
                            },
                            "responses": {
                                "type": "object",
                                "required": ["200"],
                                "propertyNames": {"pattern": r"^[1-5]\d\d$"},
                                "additionalProperties": {
                                    "type": "object",
                                    "required": ["description", "content"],
                                    "properties": {
                                        "description": {"type": "string"},
                                        "content": {"type": "object", "required": ["application/json"]},
                                    },
                                },
                            },
                        },
                    }
                },
            },
        },
    },
}


def _operation_schemas(operation: dict) -> dict[str, dict]:
    out = {"request": operation["requestBody"]["content"]["application/json"]["schema"]}
    for status, response in operation["responses"].items():
        out[status] = response["content"]["application/json"]["schema"]
    return out


def test_openapi_documents_of_the_shipped_toolkits_are_well_formed() -> None:
    shape = Draft202012Validator(OPENAPI_SHAPE)
    operations = 0
    for kit in load_benchmark([DEFAULT_TOOLKITS]).toolkits.values():
        doc = json.loads(json.dumps(openapi_document(kit)))  # what the file holds
        shape.validate(doc)
        assert set(doc["paths"]) == {f"/{kit.toolkit}/{t.name}" for t in kit.tools}
        for tool in kit.tools:
            operation = doc["paths"][f"/{kit.toolkit}/{tool.name}"]["post"]
            operations += 1
            assert operation["operationId"] == kit.tool_full_name(tool)
            schemas = _operation_schemas(operation)
            for schema in schemas.values():
                Draft202012Validator.check_schema(schema)  # each is a valid JSON Schema 2020-12
            request = Draft202012Validator(schemas["request"])
            assert set(schemas["request"]["properties"]) == {p.name for p in tool.parameters}
            assert schemas["request"]["required"] == [p.name for p in tool.parameters if p.required]
            for p in tool.parameters:
                assert schemas["request"]["properties"][p.name]["type"] == p.type
            assert set(schemas["200"]["properties"]) == {r.name for r in tool.returns}
            # Every exception is an error response whose schema names it.
            errors = [s for status, s in schemas.items() if status not in ("request", "200")]
            named = {b["properties"]["error"]["const"] for s in errors for b in s.get("oneOf", [s])}
            assert named == {x.name for x in tool.exceptions}
            if any(p.required for p in tool.parameters):
                assert not request.is_valid({})
            assert not request.is_valid({"no_such_argument": 1})
    assert operations == SHIPPED_TOOLS


def test_exception_statuses() -> None:
    assert [status_for(n) for n in ("InvalidRequestException", "NotFoundException", "ConflictException")] == [
        "400",
        "404",
        "409",
    ]
    assert status_for("AuthorizationException") == "403" and status_for("RateLimitException") == "429"
    assert status_for("InsufficientFundsException") == "422"


# ----------------------------------------------------------------------------------------------------- CLI


def test_docs_command_writes_the_page_and_openapi(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = run_cli("docs", "--out", out, "--openapi")
    assert result.code == 0, result.err
    assert f"({SHIPPED_TOOLKITS} toolkits, {SHIPPED_TOOLS} tools," in result.out
    assert (out / "index.html").read_text(encoding="utf-8").count('<article class="tool item"') == SHIPPED_TOOLS
    files = sorted((out / "openapi").glob("*.json"))
    assert len(files) == SHIPPED_TOOLKITS
    Draft202012Validator(OPENAPI_SHAPE).validate(json.loads(files[0].read_text(encoding="utf-8")))


def test_docs_command_bad_input_is_one_line_and_exit_2(run_cli, tmp_path: Path, hostile_specs) -> None:
    result = run_cli("docs", "--out", tmp_path / "a", "--toolkits-path", tmp_path / "nope.json")
    assert result.code == 2 and result.err.count("\n") == 1 and "does not exist" in result.err
    (tmp_path / "file").write_text("x")
    result = run_cli("docs", "--out", tmp_path / "file")
    assert result.code == 2 and "expected a directory" in result.err
    # Names that cannot be file names or URL paths stop --openapi before anything is written.
    out = tmp_path / "b"
    specs = ["--toolkits-path", hostile_specs[0], "--input-path", hostile_specs[1]]
    result = run_cli("docs", "--out", out, "--openapi", *specs)
    assert result.code == 2 and not out.exists()
    assert "OpenAPI file" in result.err  # (a tool name that is no URL path is refused when the specs load)
    # Without --openapi the same specs make a page.
    assert run_cli("docs", "--out", out, *specs).code == 0


def test_docs_of_other_toolkits_alone_list_no_shipped_cases(run_cli, tmp_path: Path) -> None:
    fixtures = REPO / "tests" / "fixtures"
    result = run_cli("docs", "--out", tmp_path, "--toolkits-path", fixtures / "toolemu_toolkits.json")
    assert result.code == 0, result.err
    assert "(2 toolkits, 3 tools, 0 cases)" in result.out
    both = ["--toolkits-path", fixtures / "toolemu_toolkits.json", "--input-path", fixtures / "toolemu_cases.json"]
    result = run_cli("docs", "--out", tmp_path, *both)
    assert result.code == 0 and "(2 toolkits, 3 tools, 2 cases)" in result.out, result.err


def test_docs_serve_prints_a_loopback_address(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import toolemu.cli.docs as cli_docs

    served: dict[str, Any] = {}
    real_serve = cli_docs.serve

    def serve(directory: Path, port: int = 0):
        served["server"] = real_serve(directory, port)
        return served["server"]

    def fetch_instead_of_waiting() -> None:
        host, port = served["server"].server_address[:2]
        with urllib.request.urlopen(f"http://{host}:{port}/index.html", timeout=10) as reply:
            served["host"], served["page"] = host, reply.read().decode("utf-8")

    monkeypatch.setattr(cli_docs, "serve", serve)
    monkeypatch.setattr(cli_docs, "wait_until_interrupted", fetch_instead_of_waiting)
    result = run_cli("docs", "--out", tmp_path / "site", "--serve")
    assert result.code == 0, result.err
    assert served["host"] == "127.0.0.1" and served["page"].count('<section class="kit"') == SHIPPED_TOOLKITS
    assert re.search(r"^serving .*index\.html at http://127\.0\.0\.1:\d+/index\.html", result.out, re.M)


# ----------------------------------------------------------------------------------------------- browser tests


def load(driver, path: Path, page: str) -> None:
    path.write_text(page, encoding="utf-8")
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    assert driver.execute_script("return document.body.getAttribute('data-ready')") == "1", "search did not start"


def severe(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def count_visible(driver, selector: str) -> int:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).filter(n => n.offsetParent !== null).length",
        selector,
    )


def search(driver, text: str) -> str:
    box = driver.find_element("id", "q")
    box.clear()
    box.send_keys(text)
    if not text:  # clear() fires no input event
        driver.execute_script("document.getElementById('q').dispatchEvent(new Event('input'))")
    return driver.find_element("id", "count").text


def test_page_renders_without_console_errors(driver, tmp_path: Path, shipped_page: str) -> None:
    load(driver, tmp_path / "index.html", shipped_page)
    assert severe(driver) == []
    assert count_visible(driver, "section.kit") == SHIPPED_TOOLKITS
    assert count_visible(driver, "article.tool") == SHIPPED_TOOLS
    assert count_visible(driver, "nav.side li") == SHIPPED_TOOLKITS
    # An anchor per toolkit and tool: following one scrolls it into view.
    driver.find_element("css selector", 'nav.side a[href="#tk-TimeslotCalendar"]').click()
    assert driver.execute_script("return location.hash") == "#tk-TimeslotCalendar"
    top = driver.execute_script("return document.getElementById('tk-TimeslotCalendar').getBoundingClientRect().top")
    assert 0 <= top < 200


def test_search_filters_toolkits_tools_and_cases(driver, tmp_path: Path, shipped_page: str) -> None:
    bench = load_benchmark([DEFAULT_CASES], known_toolkits=load_benchmark([DEFAULT_TOOLKITS]).toolkits)
    load(driver, tmp_path / "index.html", shipped_page)
    term = "geteventdetails"
    count = search(driver, term.upper())  # case-insensitive
    # The tools whose own text holds the term (its name, or another tool's description that mentions it).
    want = {
        kit.tool_full_name(tool)
        for kit in bench.toolkits.values()
        for tool in kit.tools
        if term in (kit.tool_full_name(tool) + json.dumps(tool.to_json(), ensure_ascii=False)).lower()
    }
    shown = driver.execute_script(
        "return Array.from(document.querySelectorAll('article.tool:not([hidden]) .tool-name'), n => n.textContent)"
    )
    assert set(shown) == want and "TimeslotCalendarGetEventDetails" in want and len(want) < 5
    assert count_visible(driver, "article.tool") == len(want)
    assert count.startswith(f"showing 1 of {SHIPPED_TOOLKITS} toolkits · {len(want)} of {SHIPPED_TOOLS} tools")
    # A case matched inside its folded body is opened, so its threat is visible.
    threat = driver.find_element("css selector", "details.case:not([hidden]) .threat")
    assert threat.is_displayed() and "GetEventDetails" in threat.text
    assert count_visible(driver, "nav.side li") == 1

    search(driver, "TimeslotCalendar")  # the toolkit itself: everything under it
    assert count_visible(driver, "article.tool") >= 9 and count_visible(driver, "section.kit") >= 1

    assert search(driver, "zzz-no-such-thing").startswith("showing 0 of")
    assert driver.find_element("id", "no-match").is_displayed() and count_visible(driver, "section.kit") == 0

    search(driver, "")
    assert count_visible(driver, "article.tool") == SHIPPED_TOOLS
    assert count_visible(driver, "details.case[open]") == 0  # what the search opened, it closed again
    assert not driver.find_element("id", "no-match").is_displayed()
    assert severe(driver) == []


def test_hostile_toolkit_does_not_run(driver, tmp_path: Path, hostile_specs: tuple[Path, Path]) -> None:
    load(driver, tmp_path / "index.html", render_docs(load_catalog([hostile_specs[0]], [hostile_specs[1]])))
    for case in driver.find_elements("css selector", "details"):
        driver.execute_script("arguments[0].open = true", case)
    search(driver, "onerror")
    search(driver, "")
    assert driver.execute_script("return typeof window.__xss") == "undefined"
    text = driver.find_element("tag name", "main").text
    for literal in (f"for model {PAYLOAD} {BREAKOUT}", f"instruction {PAYLOAD}", f"threat {PAYLOAD}", "javascript:"):
        assert literal in text, literal
    assert driver.find_elements("css selector", "main img, main script, main a[href^='javascript']") == []
    assert driver.execute_script("return document.scripts.length") == 1
    assert severe(driver) == []
    # Defence in depth: markup injected past the escaping still could not run under the CSP.
    driver.execute_script("document.body.insertAdjacentHTML('beforeend', arguments[0])", PAYLOAD_IMG)
    driver.execute_script("return new Promise(r => setTimeout(r, 200))")
    assert driver.execute_script("return typeof window.__xss") == "undefined"
    assert any("Content Security Policy" in m for m in severe(driver))


def test_build_catalog_without_paths_has_no_policy_dirs() -> None:
    bench = load_benchmark([DEFAULT_CASES], known_toolkits=load_benchmark([DEFAULT_TOOLKITS]).toolkits)
    catalog = build_catalog(bench)
    assert len(catalog.entries) == SHIPPED_TOOLKITS and catalog.num_cases == len(bench.cases)
    assert sum(len(e.cases) for e in catalog.entries) == sum(
        len(c.toolkits) + len(c.user_toolkits) for c in bench.cases
    )
