"""Can one ``agentlab serve`` hold a class? Simulated students against one server.

Starts ``python -m agentlab.fakeapi.server`` (the demo model, as ``agentlab serve``
runs it) on 127.0.0.1 and runs two phases against it:

1. 100 students at once, each a loop of several turns (a task, the demo's
   tool call, a tool result, the answer; then the next task in the same
   conversation), half of them streaming, while 200 idle connections and 20
   slow senders (one header line every second, never finishing) stay open;
2. 500 students at once, fewer turns each, so the run stays within minutes
   on a 2-core machine.

3. the attacks a student could make on a shared server, one after another,
   each with its figure (what the server answered, how long it took, the
   server's peak memory), while one more student keeps asking and must be
   served: a chunk size of -1, one endless chunk (300 MB sent against the
   32 MB cap), ``Content-Length: ²``, a Content-Length larger than the body,
   invalid UTF-8 and a lone surrogate in JSON, 400 clients that never finish
   their headers, a thread grown past the store's bound, a student continuing
   another's thread, and 300 idle half-sent requests against a server whose
   open-file limit is 256.

For each phase it prints requests per second, p50/p99 latency, errors, and
the server's memory (resident set) before and after. Goals: 0 errors, p99 <
1 s at 100 students, memory back to within 10 MB of the start, and idle or
slow connections never keeping others out.

    python benchmarks/serve_load.py            # about a minute or two
    python benchmarks/serve_load.py --quick    # fewer students, for a smoke run
    python benchmarks/serve_load.py --attacks  # the attacks only

Only 127.0.0.1 is contacted; the server is stopped at the end, and every
phase has a time limit, so the script always ends by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-sonnet-5-5"
TASKS = ["How many .py files are here?", "List the files here", "What is the date?"]
BASH = {"name": "bash", "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                         "required": ["command"]}}  # fmt: skip
HEADERS = {"anthropic-version": "2026-10-21", "x-api-key": "student"}
PHASE_LIMIT = 150.0  # seconds: a phase that has not finished by then is cancelled


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(nofile: int | None = None, root: Path = ROOT) -> tuple[subprocess.Popen[str], str]:
    """``agentlab serve`` from ``root``'s code on a free port (``nofile``: its open-file
    limit)."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONUNBUFFERED": "1"}

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab.fakeapi.server", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE, text=True, env=env, cwd=root, preexec_fn=limit,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = line.split(" at ")[1].split(",")[0].split(" ")[0]
    assert url.startswith("http://127.0.0.1:"), line
    return proc, url


def message_from_stream(text: str) -> dict:
    """The assistant message rebuilt from SSE lines (what the SDK's stream helper does)."""
    message: dict = {}
    blocks: list[dict] = []
    partial: dict[int, str] = {}
    for line in text.splitlines():
        if not line.startswith("data: "):
            continue
        event = json.loads(line[6:])
        kind = event["type"]
        if kind == "message_start":
            message = event["message"]
        elif kind == "content_block_start":
            blocks.append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            delta, i = event["delta"], event["index"]
            if delta["type"] == "text_delta":
                blocks[i]["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                partial[i] = partial.get(i, "") + delta["partial_json"]
            elif delta["type"] == "thinking_delta":
                blocks[i]["thinking"] = blocks[i].get("thinking", "") + delta["thinking"]
            elif delta["type"] == "signature_delta":  # sent back unchanged, as the API requires
                blocks[i]["signature"] = delta["signature"]
        elif kind == "message_delta":
            message.update(event["delta"])
        elif kind == "error":
            raise RuntimeError(event["error"]["message"])
    for i, raw in partial.items():
        blocks[i]["input"] = json.loads(raw)
    return {**message, "content": blocks}


async def student(
    http: httpx2.AsyncClient, n: int, tasks: int, stream: bool, lat: list, errors: list
) -> None:
    """One student's loop: ``tasks`` tasks in one conversation, each until end_turn."""
    messages: list[dict] = []
    if True:  # each request takes a connection of its own from the shared pool
        for k in range(tasks):
            messages.append({"role": "user", "content": TASKS[(n + k) % len(TASKS)]})
            for _turn in range(4):
                body = {"model": MODEL, "max_tokens": 1000, "messages": messages,
                        "tools": [BASH], "stream": stream}  # fmt: skip
                start = time.perf_counter()
                try:
                    answer = await http.post("/v1/messages", json=body)
                    if answer.status_code != 200:
                        errors.append(f"{answer.status_code}: {answer.text[:120]}")
                        return
                    reply = message_from_stream(answer.text) if stream else answer.json()
                except Exception as e:  # a benchmark counts failures, whatever they are
                    errors.append(f"{type(e).__name__}: {e}")
                    return
                lat.append(time.perf_counter() - start)
                messages.append({"role": "assistant", "content": reply["content"]})
                if reply["stop_reason"] != "tool_use":
                    break
                results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "3"}
                           for b in reply["content"] if b["type"] == "tool_use"]  # fmt: skip
                messages.append({"role": "user", "content": results})


async def hold_idle(url: str, count: int, stop: asyncio.Event) -> None:
    """Open ``count`` connections and send nothing on them."""
    host, port = url.removeprefix("http://").split(":")
    pairs = [await asyncio.open_connection(host, int(port)) for _ in range(count)]
    await stop.wait()
    for _, writer in pairs:
        writer.close()


async def slow_sender(url: str, stop: asyncio.Event) -> None:
    """Send a request's headers one line a second, never finishing (reconnecting when cut)."""
    host, port = url.removeprefix("http://").split(":")
    while not stop.is_set():
        _, writer = await asyncio.open_connection(host, int(port))
        try:
            writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")
            while not stop.is_set():
                await asyncio.sleep(1.0)
                writer.write(b"x-slow: 1\r\n")
                await writer.drain()
        except (ConnectionError, OSError):
            pass  # the server cut it off: start again
        finally:
            writer.close()


async def phase(url: str, students: int, tasks: int, idle: int, slow: int) -> dict:
    lat: list[float] = []
    errors: list[str] = []
    stop = asyncio.Event()
    pests = [asyncio.create_task(hold_idle(url, idle, stop))] if idle else []
    pests += [asyncio.create_task(slow_sender(url, stop)) for _ in range(slow)]
    await asyncio.sleep(0.5)  # the idle and slow ones are in place first
    start, cpu = time.perf_counter(), time.process_time()
    limits = httpx2.Limits(max_connections=students, max_keepalive_connections=students)
    async with httpx2.AsyncClient(base_url=url, headers=HEADERS, timeout=60, limits=limits) as http:
        runs = [student(http, n, tasks, n % 2 == 0, lat, errors) for n in range(students)]
        try:
            await asyncio.wait_for(asyncio.gather(*runs), PHASE_LIMIT)
        except TimeoutError:
            errors.append(f"phase not finished after {PHASE_LIMIT:.0f} s")
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    stop.set()
    for task in pests:
        task.cancel()
    await asyncio.gather(*pests, return_exceptions=True)
    lat.sort()
    return {
        "requests": len(lat),
        "seconds": took,
        "rps": len(lat) / took,
        "p50": statistics.median(lat) if lat else float("nan"),
        "p99": lat[int(len(lat) * 0.99) - 1] if lat else float("nan"),
        "errors": errors,
        "client_cpu": cpu,
    }


async def big_beside_small(url: str) -> tuple[float, float]:
    """One 150 kB request sent together with 20 small ones: the slowest small one's
    latency, and the big one's."""
    big = {"model": MODEL, "max_tokens": 100, "tools": [BASH], "messages": [
        {"role": "user", "content": "List the files here"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_big", "name": "bash",
                                           "input": {"command": "ls -la"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big",
                                      "content": "x" * 150_000}]}]}  # fmt: skip
    small = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}

    async def timed(http: httpx2.AsyncClient, body: dict) -> float:
        start = time.perf_counter()
        answer = await http.post("/v1/messages", json=body)
        assert answer.status_code == 200, answer.text[:200]
        return time.perf_counter() - start

    limits = httpx2.Limits(max_connections=30)
    async with httpx2.AsyncClient(base_url=url, headers=HEADERS, timeout=60, limits=limits) as http:
        times = await asyncio.gather(timed(http, big), *[timed(http, small) for _ in range(20)])
    return max(times[1:]), times[0]


# ---------------------------------------------------------------------------
# Attacks
# ---------------------------------------------------------------------------

REQUEST = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
REQUEST += b"anthropic-version: 2026-10-21\r\nx-api-key: attacker\r\nconnection: close\r\n"
SMALL = json.dumps({"model": MODEL, "max_tokens": 10,
                    "messages": [{"role": "user", "content": "hi"}]}).encode()  # fmt: skip


async def exchange(url: str, data: bytes, wait: float = 40.0) -> tuple[str, float]:
    """Send raw bytes; the status line the server answered ("closed" if none), and when."""
    host, port = url.removeprefix("http://").split(":")
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(data)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), wait)
        answer = await asyncio.wait_for(reader.read(), 5)  # the server closes after an error
        error = json.loads(answer.partition(b"\r\n\r\n")[2] or b"{}").get("error", {})
        kind = (error.get("details") or {}).get("error_code") or error.get("type", "")
        status = line.decode().split(" ")[1] if line else "closed"
        return f"{status} {kind}".strip(), time.perf_counter() - start
    except (ConnectionError, TimeoutError):
        return "closed", time.perf_counter() - start
    finally:
        writer.close()


async def endless_chunk(url: str, total: int) -> tuple[str, int]:
    """One chunk that claims 4 GB, then ``total`` bytes of it: the answer and bytes sent."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(REQUEST + b"transfer-encoding: chunked\r\n\r\nffffffff\r\n")
    piece, sent, status = b"x" * (1 << 20), 0, "closed"
    answer = asyncio.ensure_future(reader.readline())
    try:
        while sent < total and not answer.done():
            writer.write(piece)
            await writer.drain()
            sent += len(piece)
        line = await asyncio.wait_for(answer, 10)
        status = line.decode().split(" ")[1] if line else "closed"
    except (ConnectionError, TimeoutError):
        pass
    finally:
        answer.cancel()
        writer.close()
    return status, sent


async def student_meanwhile(url: str, stop: asyncio.Event, lat: list[float], errors: list) -> None:
    """One more student asking every 0.2 s while an attack runs."""
    async with httpx2.AsyncClient(base_url=url, headers=HEADERS, timeout=30) as http:
        while not stop.is_set():
            start = time.perf_counter()
            try:
                answer = await http.post("/v1/messages", content=SMALL)
                if answer.status_code != 200:
                    errors.append(answer.status_code)
                lat.append(time.perf_counter() - start)
            except Exception as e:  # a benchmark counts failures, whatever they are
                errors.append(type(e).__name__)
            await asyncio.sleep(0.2)


async def never_finished(url: str, count: int, after: float) -> int:
    """``count`` clients that open and never finish their headers (half of them send
    some): how many are still connected ``after`` seconds."""
    host, port = url.removeprefix("http://").split(":")
    pairs = [await asyncio.open_connection(host, int(port)) for _ in range(count)]
    for _, writer in pairs[::2]:
        writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")
    await asyncio.sleep(after)
    still = 0
    for reader, writer in pairs:
        try:
            still += not (await asyncio.wait_for(reader.read(1), 0.01) == b"")
        except TimeoutError:
            still += 1  # nothing to read and not closed: still connected
        except ConnectionError:
            pass
        writer.close()
    return still


async def grown_thread(url: str, size: int, times: int) -> tuple[list[int], str]:
    """A thread continued ``times`` times with ``size`` bytes each: the statuses, and
    what the server answered a second student continuing the first one's thread."""
    beta = {**HEADERS, "anthropic-beta": "message-threads-2026-08-12"}
    statuses: list[int] = []
    async with httpx2.AsyncClient(base_url=url, timeout=60) as http:
        body = {"model": MODEL, "max_tokens": 10, "thread": {"type": "create"},
                "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
        first = (await http.post("/v1/messages", json=body, headers=beta)).json()["id"]
        other = {**body, "thread": {"type": "continue", "previous_message_id": first}}
        stolen = await http.post("/v1/messages", json=other, headers={**beta, "x-api-key": "b"})
        previous = first
        for _ in range(times):
            body = {**body, "thread": {"type": "continue", "previous_message_id": previous},
                    "messages": [{"role": "user", "content": "y" * size}]}  # fmt: skip
            answer = await http.post("/v1/messages", json=body, headers=beta)
            statuses.append(answer.status_code)
            if answer.status_code != 200:
                break
            previous = answer.json()["id"]
    code = stolen.json().get("error", {}).get("details", {}).get("error_code", "")
    return statuses, f"{stolen.status_code} {code}"


def peak_rss(pid: int, stop: threading.Event, peak: list[float]) -> None:
    while not stop.wait(0.02):
        peak[0] = max(peak[0], rss_mb(pid))


async def attack(url: str, pid: int, name: str, run: Any) -> None:
    """Run one attack beside a student; print its figure, the student's, and memory."""
    lat: list[float] = []
    errors: list = []
    stop = asyncio.Event()
    before, peak = rss_mb(pid), [rss_mb(pid)]
    watch, done = threading.Event(), None
    watcher = threading.Thread(target=peak_rss, args=(pid, watch, peak), daemon=True)
    watcher.start()
    beside = asyncio.create_task(student_meanwhile(url, stop, lat, errors))
    try:
        done = await run
    finally:
        stop.set()
        await beside
        watch.set()
        watcher.join()
    lat.sort()
    worst = f"{lat[-1] * 1000:.0f} ms" if lat else "-"
    print(f"  {name}: {done}")
    print(f"      student beside it: {len(lat)} requests, {len(errors)} errors, slowest {worst}; "
          f"server {before:.0f} MB before, peak {peak[0]:.0f} MB")  # fmt: skip


async def statuses(url: str, data: bytes, times: int) -> str:
    seen = [s for s, _ in await asyncio.gather(*[exchange(url, data) for _ in range(times)])]
    return ", ".join(f"{seen.count(s)} x {s}" for s in sorted(set(seen)))


async def attacks(url: str, pid: int) -> None:
    chunked = REQUEST + b"transfer-encoding: chunked\r\n\r\n"
    surrogate = SMALL.replace(b'"hi"', b'"\\ud800"')
    latin1 = SMALL.replace(b'"hi"', b'"caf\xe9"')

    def sized(body: bytes, length: str | int) -> bytes:
        return REQUEST + f"content-length: {length}\r\n\r\n".encode() + body

    async def timed(data: bytes) -> str:
        status, took = await exchange(url, data)
        return f"{status} after {took:.1f} s"

    async def crowd() -> str:
        still = await never_finished(url, 400, 15.0)
        return f"{still} of 400 still connected after 15 s"

    async def endless() -> str:
        status, sent = await endless_chunk(url, 300 << 20)
        return f"{status} after {sent >> 20} MB of 300 sent (cap 32 MB)"

    async def thread() -> str:
        codes, stolen = await grown_thread(url, 1 << 20, 50)
        return (f"{codes.count(200)} continues of 1 MB kept, then {codes[-1]} (a thread is "
                f"kept up to 8 MB, the store up to 64 MB; the SDK resends); another key "
                f"continuing it: {stolen}")  # fmt: skip

    print("\nattacks (each beside one more student asking every 0.2 s):")
    plan = [
        ("chunk size -1, 20 times", statuses(url, chunked + b"-1\r\n" + SMALL, 20)),
        ("one endless chunk, 300 MB", endless()),
        ("Content-Length: ², 20 times", statuses(url, sized(SMALL, "²"), 20)),
        ("Content-Length 50 bytes more than the body", timed(sized(SMALL, len(SMALL) + 50))),
        ("invalid UTF-8, 20 times", statuses(url, sized(latin1, len(latin1)), 20)),
        ("a lone surrogate, 20 times", statuses(url, sized(surrogate, len(surrogate)), 20)),
        ("400 clients that never finish their headers", crowd()),
        ("a thread grown by continue", thread()),
    ]
    for name, run in plan:
        await attack(url, pid, name, run)


async def crowd_at_the_file_limit() -> None:
    """300 idle half-sent requests against a server whose open-file limit is 256."""
    proc, url = start_server(nofile=256)
    try:
        host, port = url.removeprefix("http://").split(":")
        pairs = []
        for _ in range(300):
            pair = await asyncio.open_connection(host, int(port))
            pair[1].write(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")
            pairs.append(pair)
        lat: list[float] = []
        errors: list[str] = []
        await phase_students(url, 20, lat, errors)
        fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        lat.sort()
        print(f"  300 idle half-sent requests, open-file limit 256: 20 students served, "
              f"{len(errors)} errors, slowest {lat[-1] * 1000:.0f} ms; the server holds {fds} "
              "files")  # fmt: skip
        for _, writer in pairs:
            writer.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def phase_students(url: str, n: int, lat: list, errors: list) -> None:
    async with httpx2.AsyncClient(base_url=url, headers=HEADERS, timeout=60) as http:
        await asyncio.gather(*[student(http, k, 1, k % 2 == 0, lat, errors) for k in range(n)])


def against(other: Path, rounds: int = 3) -> None:
    """The 100-student phase on this checkout's server and on ``other``'s, taking turns,
    so that both see the same machine (a busy shared machine moves every figure)."""
    servers = {"this": start_server(), str(other): start_server(root=other)}
    runs: dict[str, list[dict]] = {name: [] for name in servers}
    try:
        for _, url in servers.values():
            asyncio.run(phase(url, 4, 1, 0, 0))  # warm up
        for _ in range(rounds):
            for name, (_, url) in servers.items():
                runs[name].append(asyncio.run(phase(url, 100, 3, 200, 20)))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=10)
    print(f"100 students, {rounds} turns each, taking turns (medians):")
    mid = {name: {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50", "p99")}
           for name, rs in runs.items()}  # fmt: skip
    for name, m in mid.items():
        errors = sum(len(r["errors"]) for r in runs[name])
        print(f"  {name}: {m['rps']:.0f} requests/s, p50 {m['p50'] * 1000:.0f} ms, "
              f"p99 {m['p99'] * 1000:.0f} ms, {errors} errors")  # fmt: skip
    this, that = mid["this"], mid[str(other)]
    print(f"  this / other: requests/s x{this['rps'] / that['rps']:.2f}, "
          f"p99 x{this['p99'] / that['p99']:.2f}")  # fmt: skip


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--quick", action="store_true", help="20 and 50 students")
    args.add_argument("--attacks", action="store_true", help="the attacks only")
    args.add_argument("--against", type=Path, metavar="DIR",
                      help="compare with another checkout's server (100 students, in turns)")  # fmt: skip
    options = args.parse_args()
    if options.against:
        against(options.against)
        return 0
    quick = options.quick
    plan = [("100 students", 100, 3, 200, 20), ("500 students", 500, 1, 0, 0)]
    if quick:
        plan = [("20 students", 20, 2, 20, 2), ("50 students", 50, 1, 0, 0)]
    proc, url = start_server()
    try:
        # Warm up: the first requests import the SDK's types and the demo model.
        asyncio.run(phase(url, 4, 1, 0, 0))
        start_mb = rss_mb(proc.pid)
        print(f"server {url}, pid {proc.pid}: {start_mb:.1f} MB after warm-up")
        if options.attacks:
            plan = []
        slowest, big = asyncio.run(big_beside_small(url))
        print(f"a 150 kB request beside 20 small ones: the big one {big * 1000:.0f} ms, "
              f"the slowest small one {slowest * 1000:.0f} ms")  # fmt: skip
        for name, students, tasks, idle, slow in plan:
            before, cpu = rss_mb(proc.pid), cpu_seconds(proc.pid)
            result = asyncio.run(phase(url, students, tasks, idle, slow))
            cpu = cpu_seconds(proc.pid) - cpu
            time.sleep(2.0)  # let finished connections close
            after = rss_mb(proc.pid)
            extra = f", with {idle} idle and {slow} slow connections open" if idle or slow else ""
            print(f"\n{name} ({tasks} task(s) each, half streaming{extra}):")
            print(f"  {result['requests']} requests in {result['seconds']:.1f} s: "
                  f"{result['rps']:.0f} requests/s")  # fmt: skip
            print(f"  CPU: server {cpu:.1f} s ({cpu / max(1, result['requests']) * 1000:.1f} ms a "
                  f"request), clients {result['client_cpu']:.1f} s; load average "
                  f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
            print(f"  latency p50 {result['p50'] * 1000:.0f} ms, p99 {result['p99'] * 1000:.0f} ms")
            print(f"  errors: {len(result['errors'])}" + "".join(
                f"\n    {e}" for e in sorted(set(result["errors"]))[:5]))  # fmt: skip
            print(f"  server memory: {before:.1f} MB before, {after:.1f} MB after "
                  f"({after - before:+.1f} MB)")  # fmt: skip
        asyncio.run(attacks(url, proc.pid))
        asyncio.run(crowd_at_the_file_limit())
        time.sleep(2.0)
        end_mb = rss_mb(proc.pid)
        print(f"\nserver memory at the end: {end_mb:.1f} MB ({end_mb - start_mb:+.1f} MB "
              "against the start after warm-up; goal: within 10 MB)")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
