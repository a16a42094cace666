"""The promises an agent acts on, each pinned through the official MCP SDK against the real binary.

Usage: mcp_contract.py KNOWCODE_BIN REPO_DIR SCENARIO   (exit 0 = every check passed)
Scenarios: publish, payloads, legacy, vector_plane, legacy_store, job_panic, bad_config,
shared_root, shared_s3, shared_s3_lease, shared_s3_elsewhere, dependency_scope.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import traceback

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN, REPO, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
# The store the servers are started on: the repository itself, or a shared store's URI.
STORE = os.environ.get("KNOWCODE_TEST_STORE", REPO)
QUESTION = "apply a percentage discount to an amount"


def body_of(result):
    assert len(result.content) == 1, result
    return json.loads(result.content[0].text)


def size(body):
    return len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())


async def ok(session, tool, **arguments):
    result = await session.call_tool(tool, arguments)
    body = body_of(result)
    assert not result.is_error, f"{tool} {arguments}: {body}"
    return body


async def error(session, tool, code, **arguments):
    result = await session.call_tool(tool, arguments)
    body = body_of(result)
    assert result.is_error, f"{tool} {arguments} should fail: {body}"
    assert body["code"] == code, f"{tool} {arguments}: expected {code}, got {body}"
    assert body["hint"], body
    return body


async def finished_job(session, **arguments):
    job = await ok(session, "knowcode_lifecycle", **arguments)
    for _ in range(600):
        status = await ok(session, "knowcode_inspect", action="job_status", job_id=job["job_id"])
        if status["state"] != "running":
            return status
        await asyncio.sleep(0.5)
    raise AssertionError("job did not finish")


class Server:
    """One `knowcode mcp` process with an initialized client session."""

    def __init__(self, *extra_args, env=None, cwd=None):
        self.params = StdioServerParameters(
            command=BIN, args=["mcp", "--store", STORE, *extra_args], env=dict(os.environ, **(env or {})),
            cwd=cwd)

    async def __aenter__(self):
        self.stdio = stdio_client(self.params)
        read, write = await self.stdio.__aenter__()
        self.session_cm = ClientSession(read, write)
        self.session = await self.session_cm.__aenter__()
        self.init = await self.session.initialize()
        return self

    async def __aexit__(self, *exc):
        if exc[0] is not None:
            # A failed check: report it and leave at once (closing the SDK's stdio tasks
            # after an exception can hang).
            traceback.print_exception(*exc)
            sys.stdout.flush()
            os._exit(1)
        await self.session_cm.__aexit__(*exc)
        await self.stdio.__aexit__(*exc)


def write_config(text):
    with open(os.path.join(REPO, "aimodels.yaml"), "w") as f:
        f.write(text)


async def publish():
    """`published` is true only when the job made a new generation current; `temporal` builds."""
    subprocess.run(["git", "init", "-q", REPO], check=True)
    subprocess.run(["git", "-C", REPO, "-c", "user.name=t", "-c", "user.email=t@e", "add", "-A"], check=True)
    subprocess.run(["git", "-C", REPO, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm",
                    "shop: carts and prices"], check=True)
    async with Server() as s:
        first = await finished_job(s.session, action="build")
        assert first["state"] == "succeeded", first
        assert first["result"]["published"] is True and first["result"]["kind"] == "full", first
        assert "reason" not in first["result"], first
        full_id = first["result"]["generation_id"]

        kept = await finished_job(s.session, action="build", no_embed=True)
        assert kept["state"] == "succeeded", kept
        result = kept["result"]
        assert result["published"] is False, kept
        assert result["reason"] == "no_embed", kept
        assert result["generation_id"] == full_id and result["kind"] == "full", kept
        assert full_id in result["note"], kept
        stats = await ok(s.session, "knowcode_inspect", action="stats")
        assert stats["generation_id"] == full_id, stats

        await error(s.session, "knowcode_inspect", "missing_history", action="history")
        temporal = await finished_job(s.session, action="build", temporal=True)
        assert temporal["state"] == "succeeded" and temporal["result"]["published"] is True, temporal
        history = await ok(s.session, "knowcode_inspect", action="history", target="shop/cart.py")
        assert "carts and prices" in json.dumps(history), history


# Byte caps per action on the fixture, at the defaults (measured 2026-11-30: query 645, search
# 249, context 587, trace 308, semantic_search 3,314; a cap catches a field that starts to
# grow, not a few bytes).
CAPS = {"query": 1000, "search": 500, "context": 1000, "trace": 600, "semantic_search": 4500}
MINIMAL_KEYS = {"context_text", "sufficiency_score", "total_tokens", "freshness"}
MINIMAL_OPTIONAL = {"also", "errors", "reduction_summary", "source_included"}


async def payloads():
    """Minimal payload key set, the query defaults, the threshold an agent sees, byte caps."""
    write_config("config:\n  sufficiency_threshold: 0.7\n")
    async with Server() as s:
        assert "0.7" in (s.init.instructions or ""), s.init.instructions
        assert (await finished_job(s.session, action="build"))["state"] == "succeeded"
        stats = await ok(s.session, "knowcode_inspect", action="stats")
        assert stats["sufficiency_threshold"] == 0.7, stats
        doctor = await ok(s.session, "knowcode_inspect", action="doctor")
        assert doctor["sufficiency_threshold"] == 0.7, doctor

        answer = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
        keys = set(answer)
        assert MINIMAL_KEYS <= keys <= MINIMAL_KEYS | MINIMAL_OPTIONAL, sorted(keys)
        assert answer["total_tokens"] <= 1500, answer
        # one entity, no dependency expansion: a single section, no neighbours' sections
        assert answer["context_text"].count("\n## ") + answer["context_text"].startswith("## ") == 1, answer
        standard = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION, verbosity="standard")
        assert len(standard["entities"]) == 1, standard
        assert standard["entities"][0] == "shop/pricing.py::apply_discount", standard
        assert "evidence" not in standard, standard
        sized = {
            "query": answer,
            "search": await ok(s.session, "knowcode_retrieve", action="search", query="round_cents"),
            "context": await ok(s.session, "knowcode_retrieve", action="context", target="Cart.total"),
            "trace": await ok(s.session, "knowcode_retrieve", action="trace", target="apply_discount"),
            "semantic_search": await ok(s.session, "knowcode_retrieve", action="semantic_search", query=QUESTION),
        }
        for action, body in sized.items():
            print(f"{action}: {size(body)} bytes (cap {CAPS[action]})")
            assert size(body) <= CAPS[action], (action, size(body), body)

        # outside a git checkout, a temporal build fails with the history reader's own typed
        # error (not a generic build_failed), and its hint says what --temporal needs
        history = await finished_job(s.session, action="build", temporal=True)
        assert history["state"] == "failed" and history["error"]["code"] == "invalid_argument", history
        assert "git" in history["error"]["hint"], history


async def legacy():
    """The five flat tools route to the right action with their predecessor's defaults."""
    async with Server("--legacy-tools") as s:
        names = {t.name for t in (await s.session.list_tools()).tools}
        legacy_names = {"search_codebase", "get_entity_context", "trace_calls",
                        "retrieve_context_for_query", "assess_codebase_quality"}
        assert legacy_names <= names and len(names) == 8, names
        assert (await finished_job(s.session, action="build"))["state"] == "succeeded"
        found = await ok(s.session, "search_codebase", query="round_cents")
        assert found["results"][0]["id"] == "shop/pricing.py::round_cents", found
        context = await ok(s.session, "get_entity_context", target="Cart.total")
        assert "Cart.total" in context["context_text"], context
        trace = await ok(s.session, "trace_calls", target="apply_discount")
        assert any(n["id"] == "shop/cart.py::Cart.total" for n in trace["nodes"]), trace
        full = await ok(s.session, "retrieve_context_for_query", query=QUESTION)
        consolidated = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
        # the predecessor's 4,000 tokens and 3 entities, against the MCP action's 1,500 and 1
        assert "summary of 3 entities" in full.get("reduction_summary", ""), full
        assert "summary of 1 entity" in consolidated.get("reduction_summary", ""), consolidated
        narrow = await ok(s.session, "retrieve_context_for_query", query=QUESTION, limit_entities=1)
        assert "summary of 1 entity" in narrow.get("reduction_summary", ""), narrow
        quality = await ok(s.session, "assess_codebase_quality")
        assert quality["overall"]["grade"] in "ABCDF", quality


async def vector_plane():
    """No usable vectors: semantic_search refuses with a code, query says it fell back."""
    async with Server() as s:
        assert (await finished_job(s.session, action="build"))["state"] == "succeeded"
        semantic = await ok(s.session, "knowcode_retrieve", action="semantic_search", query=QUESTION)
        assert semantic["retrieval_mode"] == "hybrid", semantic
    write_config("embedding:\n  max_length: 256\n")
    async with Server() as s:
        refused = await error(s.session, "knowcode_retrieve", "model_mismatch", action="semantic_search", query=QUESTION)
        assert "max_length" in refused["error"], refused
        for verbosity in ["minimal", "standard"]:
            answer = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION, verbosity=verbosity)
            assert any("model_mismatch" in e for e in answer.get("errors", [])), answer
        doctor = await ok(s.session, "knowcode_inspect", action="doctor")
        check = next(c for c in doctor["checks"] if c["name"] == "model_match")
        assert check["status"] == "fail" and "max_length" in check["message"], doctor
    os.remove(os.path.join(REPO, "aimodels.yaml"))
    empty = os.path.join(REPO, "no-model-here")
    os.makedirs(empty)
    async with Server(env={"KNOWCODE_MODEL_DIR": empty}) as s:
        await error(s.session, "knowcode_retrieve", "missing_semantic_index", action="semantic_search", query=QUESTION)
        answer = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
        assert any("missing_semantic_index" in e for e in answer.get("errors", [])), answer
        assert "apply_discount" in answer["context_text"], answer


async def legacy_store():
    """A legacy flat knowcode_knowledge.json counts as ready everywhere a reader looks."""
    async with Server() as s:
        assert (await finished_job(s.session, action="build"))["state"] == "succeeded"
        assert (await finished_job(s.session, action="export", output="export"))["state"] == "succeeded"
    flat = os.path.join(REPO, "flat")
    os.makedirs(flat)
    shutil.copytree(os.path.join(REPO, "shop"), os.path.join(flat, "shop"))
    shutil.copy(os.path.join(REPO, "export", "knowcode_knowledge.json"), flat)
    params = StdioServerParameters(command=BIN, args=["mcp", "--store", flat], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            answer = await ok(session, "knowcode_retrieve", action="query", query=QUESTION)
            assert "apply_discount" in answer["context_text"], answer
            quality = await ok(session, "knowcode_inspect", action="quality")
            assert quality["overall"]["grade"] in "ABCDF", quality
            doctor = await ok(session, "knowcode_inspect", action="doctor")
            store = next(c for c in doctor["checks"] if c["name"] == "store")
            assert store["status"] != "fail" and "legacy" in store["message"], doctor
            stats = await ok(session, "knowcode_inspect", action="stats")
            assert stats["files"] >= 1, stats


async def job_panic():
    """A job whose work panics ends failed (internal, with a hint); the next one can start."""
    async with Server(env={"KNOWCODE_FAIL_STAGE": "parse:panic"}) as s:
        for _ in range(2):
            done = await finished_job(s.session, action="build")
            assert done["state"] == "failed", done
            assert done["error"]["code"] == "internal" and done["error"]["hint"], done
            assert "injected panic" in done["error"]["error"], done
        stats = await s.session.call_tool("knowcode_inspect", {"action": "stats"})
        assert body_of(stats)["code"] == "missing_knowledge_store", stats


async def bad_config():
    """A bad aimodels.yaml: the server starts and every call names the key."""
    write_config("config:\n  sufficiency_threshold: 7\n")
    async with Server() as s:
        assert "aimodels.yaml" in (s.init.instructions or ""), s.init.instructions
        assert len((await s.session.list_tools()).tools) == 3
        for tool, arguments in [
            ("knowcode_retrieve", {"action": "query", "query": QUESTION}),
            ("knowcode_lifecycle", {"action": "build"}),
            ("knowcode_inspect", {"action": "stats"}),
        ]:
            failed = await error(s.session, tool, "invalid_config", **arguments)
            assert "sufficiency_threshold" in failed["error"], failed


async def shared_root():
    """A store built from one checkout, served for another (`--root`): freshness is the
    other tree's; identical files are current; a file added or edited later is indexed into
    the overlay at the next request and answers; `--watch` is refused."""
    async with Server() as s:
        assert (await finished_job(s.session, action="build", no_embed=True))["state"] == "succeeded"
    clone = REPO.rstrip("/") + "-clone"
    shutil.copytree(REPO, clone, ignore=shutil.ignore_patterns(".knowcode"))
    async with Server("--root", clone) as s:
        fresh = await ok(s.session, "knowcode_inspect", action="freshness")
        assert fresh["is_stale"] is False, fresh
        with open(os.path.join(clone, "shop", "extra.py"), "w") as f:
            f.write("def extra():\n    pass\n")
        await asyncio.sleep(2.1)  # past the freshness cache
        answer = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
        assert answer["freshness"]["is_stale"] is False, answer
        assert answer["freshness"]["overlay_files"] == 1, answer
        found = await ok(s.session, "knowcode_retrieve", action="search", query="extra")
        assert "shop/extra.py::extra" in [r["id"] for r in found["results"]], found
        with open(os.path.join(clone, "shop", "extra.py"), "w") as f:
            f.write("def extra_renamed(count):\n    return count\n")
        await asyncio.sleep(2.1)
        found = await ok(s.session, "knowcode_retrieve", action="search", query="extra_renamed")
        ids = [r["id"] for r in found["results"]]
        assert "shop/extra.py::extra_renamed" in ids and "shop/extra.py::extra" not in ids, found
    refused = subprocess.run([BIN, "mcp", "--store", REPO, "--root", clone, "--watch"],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert refused.returncode != 0 and "--root" in refused.stderr, refused.stderr
    shutil.rmtree(clone)


async def shared_s3():
    """An agent on a shared store (`--store s3://… --root REPO`): nothing published yet is
    `missing_knowledge_store`; a build over MCP publishes to the bucket and the next query
    answers from it; a file added to the tree answers through the overlay; doctor passes."""
    assert STORE.startswith("s3://"), STORE
    async with Server("--root", REPO) as s:
        await error(s.session, "knowcode_retrieve", "missing_knowledge_store",
                    action="query", query=QUESTION)
        done = await finished_job(s.session, action="build", no_embed=True)
        assert done["state"] == "succeeded" and done["result"]["published"] is True, done
        answer = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
        assert answer["freshness"]["generation_id"] == done["result"]["generation_id"], answer
        assert "apply_discount" in answer["context_text"], answer
        with open(os.path.join(REPO, "shop", "extra.py"), "w") as f:
            f.write("def extra_fee():\n    return 1\n")
        await asyncio.sleep(2.1)  # past the freshness cache
        found = await ok(s.session, "knowcode_retrieve", action="search", query="extra_fee")
        assert "shop/extra.py::extra_fee" in [r["id"] for r in found["results"]], found
        fresh = await ok(s.session, "knowcode_inspect", action="freshness")
        assert fresh["overlay_files"] == 1 and fresh["is_stale"] is False, fresh
        doctor = await ok(s.session, "knowcode_inspect", action="doctor")
        store = [c for c in doctor["checks"] if c["name"] == "store"][0]
        assert store["status"] == "pass", doctor


async def shared_s3_lease():
    """A build submitted over MCP keeps its shared-store lease while it works, though its job
    runtime has one thread that the pipeline keeps busy: with a two-second lease and the build
    held where it would publish, a CLI build five seconds later is told `store_locked`."""
    assert STORE.startswith("s3://"), STORE
    held = {"KNOWCODE_FAIL_STAGE": "share:hang", "KNOWCODE_LEASE_SECONDS": "2"}
    async with Server("--root", REPO, env=held) as s:
        job = await ok(s.session, "knowcode_lifecycle", action="build", no_embed=True)
        await asyncio.sleep(5)
        status = await ok(s.session, "knowcode_inspect", action="job_status", job_id=job["job_id"])
        assert status["state"] == "running", status
        second = subprocess.run([BIN, "index", REPO, "--store", STORE, "--no-embed", "--json"],
                                capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert second.returncode != 0, second.stdout
        assert json.loads(second.stdout)["code"] == "store_locked", second.stdout


async def shared_s3_elsewhere():
    """A server on a shared store started by a client in some other folder (no --root): an
    empty folder and a folder of 40 unrelated files answer from the index with the overlay's
    absence explained; a checkout with more new files than `index.overlay_max_files` answers
    from the index at once and through its overlay once the background build is done."""
    import tempfile
    assert STORE.startswith("s3://"), STORE
    built = subprocess.run([BIN, "index", REPO, "--store", STORE, "--no-embed", "--json"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert built.returncode == 0, built.stderr
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as unrelated:
        for i in range(40):
            with open(os.path.join(unrelated, f"notes_{i}.py"), "w") as f:
                f.write(f"def note_{i}():\n    return {i}\n")
        for folder in (empty, unrelated):
            async with Server(cwd=folder) as s:
                answer = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
                assert "apply_discount" in answer["context_text"], answer
                note = answer["freshness"]["overlay"]
                assert note["reason"] == "not_a_checkout" and "--root" in note["hint"], answer
                assert any("--root" in e for e in answer["errors"]), answer
                found = await ok(s.session, "knowcode_retrieve", action="search", query="note_3")
                assert all(not r["id"].startswith("notes_") for r in found["results"]), found
    # A checkout: the fixture copied with three files edited, the bound set below that.
    with tempfile.TemporaryDirectory() as checkout, tempfile.TemporaryDirectory() as cache:
        shutil.copytree(REPO, checkout, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".knowcode"))
        for rel in ("shop/cart.py", "shop/pricing.py", "shop/__init__.py"):
            with open(os.path.join(checkout, rel), "a") as f:
                f.write(f"\n\ndef branch_helper_{len(rel)}():\n    return 1\n")
        with open(os.path.join(checkout, "aimodels.yaml"), "w") as f:
            f.write("index:\n  overlay_max_files: 2\n")
        async with Server(cwd=checkout, env={"KNOWCODE_CACHE": cache}) as s:
            first = await ok(s.session, "knowcode_retrieve", action="query", query=QUESTION)
            overlay_files = first["freshness"].get("overlay_files", 0)
            if overlay_files == 0:  # the background build may already be done
                note = first["freshness"]["overlay"]
                assert note["reason"] == "too_many_files" and note["building"] is True, first
                assert "apply_discount" in first["context_text"], first
            for _ in range(120):
                fresh = await ok(s.session, "knowcode_inspect", action="freshness")
                if fresh.get("overlay_files") == 3:
                    break
                await asyncio.sleep(0.5)
            assert fresh.get("overlay_files") == 3 and "overlay" not in fresh, fresh
            found = await ok(s.session, "knowcode_retrieve", action="search", query="branch_helper_12")
            assert "shop/cart.py::branch_helper_12" in [r["id"] for r in found["results"]], found


async def dependency_scope():
    """`scope` over MCP on a project whose dependency (click, from the virtualenv) is indexed:
    `search` by a qualified name answers from the package with `package` set and a path inside
    it; the default scope is the project; `query scope=all` answers a question about the
    project from the project; `semantic_search` skips a package without vectors and says so; an
    unknown scope is `invalid_argument`."""
    async with Server() as s:
        found = await ok(s.session, "knowcode_retrieve", action="search",
                         query="click.Command.invoke", scope="dependencies")
        first = found["results"][0]
        assert first["id"] == "click/core.py::Command.invoke", found
        assert first["package"].startswith("click@"), found
        # A package the project does not depend on answers nothing and says which are indexed.
        absent = await ok(s.session, "knowcode_retrieve", action="search",
                          query="itoa::Buffer::format", scope="dependencies")
        assert absent["results"] == [], absent
        assert "no dependency named `itoa`" in absent["hint"], absent
        assert "click@" in absent["hint"], absent
        own = await ok(s.session, "knowcode_retrieve", action="search", query="checkout")
        assert own["results"] and all("package" not in r for r in own["results"]), own
        answer = await ok(s.session, "knowcode_retrieve", action="query",
                          query="check the cart out and print the total", scope="all")
        assert "package" not in answer and "checkout" in answer["context_text"], answer
        # click is indexed on the lexical plane: a ranking by similarity does not load it and
        # says how to add vectors.
        ranked = await ok(s.session, "knowcode_retrieve", action="semantic_search",
                          query="invoke the command's callback", scope="dependencies")
        assert ranked["results"] == [] and ranked["packages_searched"] == 0, ranked
        assert "knowcode deps" in ranked["hint"], ranked
        await error(s.session, "knowcode_retrieve", "invalid_argument", action="query",
                    query="checkout", scope="everything")


asyncio.run(globals()[SCENARIO]())
print(f"{SCENARIO}: all checks passed")
