"""End-to-end MCP test: the official Python SDK drives the real `knowcode mcp` binary over stdio.

Usage: mcp_client.py KNOWCODE_BIN REPO_DIR   (exit 0 = every check passed; prints what it did)
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN, REPO = sys.argv[1], sys.argv[2]


def payload(result):
    assert len(result.content) == 1, result
    text = result.content[0].text
    body = json.loads(text)
    assert text == json.dumps(body, separators=(",", ":"), ensure_ascii=False), f"not compact JSON: {text[:200]}"
    return body


async def call(session, tool, **arguments):
    return await session.call_tool(tool, arguments)


async def ok(session, tool, **arguments):
    result = await call(session, tool, **arguments)
    body = payload(result)
    assert not result.is_error, f"{tool} {arguments}: {body}"
    return body


async def error(session, tool, code, **arguments):
    result = await call(session, tool, **arguments)
    body = payload(result)
    assert result.is_error, f"{tool} {arguments} should fail: {body}"
    assert body["code"] == code, f"{tool} {arguments}: expected {code}, got {body}"
    assert body["hint"], body
    return body


async def wait_for_job(session, job_id):
    for _ in range(600):
        status = await ok(session, "knowcode_inspect", action="job_status", job_id=job_id)
        if status["state"] != "running":
            return status
        await asyncio.sleep(0.5)
    raise AssertionError("job did not finish")


async def main():
    env = dict(os.environ, RUST_LOG="info")
    params = StdioServerParameters(command=BIN, args=["mcp", "--store", REPO], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            assert names == ["knowcode_inspect", "knowcode_lifecycle", "knowcode_retrieve"], names
            listed = json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in tools.tools], separators=(",", ":"))
            print(f"schema cost: {len(listed) // 4} tokens")
            annotations = {t.name: t.annotations for t in tools.tools}
            assert annotations["knowcode_retrieve"].read_only_hint and annotations["knowcode_inspect"].read_only_hint
            assert annotations["knowcode_lifecycle"].read_only_hint is False

            await error(session, "knowcode_retrieve", "missing_knowledge_store", action="query", query="discount")
            await error(session, "knowcode_inspect", "no_jobs", action="job_status")

            job = await ok(session, "knowcode_lifecycle", action="build")
            assert job["job_id"].startswith("j-") and len(job["job_id"]) == 10, job
            assert job["state"] == "running", job
            busy = await error(session, "knowcode_lifecycle", "job_already_running", action="index")
            assert job["job_id"] in busy["error"], busy
            done = await wait_for_job(session, job["job_id"])
            assert done["state"] == "succeeded", done
            assert done["result"]["published"] is True and done["result"]["kind"] == "full", done
            await error(session, "knowcode_inspect", "unknown_job", action="job_status", job_id="j-00000000")

            answer = await ok(session, "knowcode_retrieve", action="query", query="apply a percentage discount to an amount")
            assert set(answer) >= {"context_text", "sufficiency_score", "total_tokens", "freshness"}, answer
            assert "apply_discount" in answer["context_text"], answer
            assert answer["total_tokens"] <= 1500
            # Every query answer points further: `path:line qualified_name` lines (the answer's
            # runner-up in its own file when one ranks right behind it, then up to 4 more, other
            # files first), the same at every verbosity.
            assert 1 <= len(answer["also"]) <= 5, answer
            assert all(re.fullmatch(r"[\w./-]+:\d+ [\w.]+", p) for p in answer["also"]), answer
            assert answer["also"][0].startswith("shop/cart.py:"), answer
            for verbosity in ["standard", "verbose", "diagnostic"]:
                richer = await ok(session, "knowcode_retrieve", action="query",
                                  query="apply a percentage discount to an amount", verbosity=verbosity)
                assert richer["also"] == answer["also"], (verbosity, richer)
            report = await ok(session, "knowcode_retrieve", action="query", query=(
                "checkout fails\n```\nTraceback (most recent call last):\n"
                '  File "/site-packages/shop/cart.py", line 31, in total\n'
                '  File "/site-packages/shop/pricing.py", line 7, in apply_discount\n'
                "ValueError: percent out of range\n```\n"), verbosity="standard")
            assert report["entities"][0] == "shop/pricing.py::apply_discount", report
            assert any(p.startswith("shop/cart.py:") for p in report["also"]), report
            found = await ok(session, "knowcode_retrieve", action="search", query="round_cents")
            assert found["results"][0]["id"] == "shop/pricing.py::round_cents", found
            context = await ok(session, "knowcode_retrieve", action="context", target="Cart.total")
            assert "Cart.total" in context["context_text"], context
            trace = await ok(session, "knowcode_retrieve", action="trace", target="apply_discount", direction="callers")
            assert any(n["id"] == "shop/cart.py::Cart.total" for n in trace["nodes"]), trace
            await error(session, "knowcode_retrieve", "entity_not_found", action="trace", target="nothing_like_this")
            semantic = await ok(session, "knowcode_retrieve", action="semantic_search", query="sum of subtotals", limit=3)
            assert 0 < len(semantic["results"]) <= 3 and "text" in semantic["results"][0], semantic

            await error(session, "knowcode_inspect", "missing_history", action="history")
            for action in ["job_status", "doctor", "freshness", "quality", "stats", "preflight", "telemetry"]:
                body = await ok(session, "knowcode_inspect", action=action)
                print(f"inspect {action}: {len(json.dumps(body, separators=(',', ':')))} bytes")
            stats = await ok(session, "knowcode_inspect", action="stats")
            assert len(json.dumps(stats, separators=(",", ":"))) <= 600, stats
            telemetry = await ok(session, "knowcode_inspect", action="telemetry")
            assert telemetry["events"]["knowcode_retrieve:query"]["count"] >= 2, telemetry
            quality = await ok(session, "knowcode_inspect", action="quality")
            assert quality["overall"]["grade"] in "ABCDF", quality

            missing = await error(session, "knowcode_retrieve", "invalid_argument")
            assert "action" in missing["error"], missing
            unknown = await error(session, "knowcode_retrieve", "invalid_argument", action="explode")
            assert "semantic_search" in unknown["error"], unknown
            wrong = await error(session, "knowcode_retrieve", "invalid_argument", action="query", query="x", max_tokens="many")
            assert "max_tokens" in wrong["error"], wrong
            extra = await error(session, "knowcode_inspect", "invalid_argument", action="stats", bogus=1)
            assert "bogus" in extra["error"], extra
            await error(session, "knowcode_lifecycle", "invalid_argument", action="export")
            for escape in ["../outside", "/tmp", "shop/../../x"]:
                await error(session, "knowcode_lifecycle", "path_outside_root", action="export", output=escape)
            exported = await ok(session, "knowcode_lifecycle", action="export", output="export")
            assert (await wait_for_job(session, exported["job_id"]))["state"] == "succeeded"
            assert os.path.isfile(os.path.join(REPO, "export", "knowcode_knowledge.json"))
            result = await session.call_tool("no_such_tool", {"action": "x"})
            assert result.is_error

            before = answer["freshness"]["generation_id"]
            with open(os.path.join(REPO, "shop", "coupons.py"), "w") as f:
                f.write('def redeem_coupon(code):\n    """Redeem a coupon code for a voucher."""\n    return code.upper()\n')
            subprocess.run([BIN, "index", REPO], check=True, capture_output=True)
            later = await ok(session, "knowcode_retrieve", action="query", query="redeem_coupon", verbosity="standard")
            assert later["freshness"]["generation_id"] != before, later
            assert later["entities"][0] == "shop/coupons.py::redeem_coupon", later
    print("mcp e2e: all checks passed")


asyncio.run(main())
