"""How much does agentlab's loop cost on top of the lesson's bare loop?

Runs 1,000 turns with a ScriptedClient and a no-op tool, once through
``agentlab.agent_loop`` and once through the lesson's loop, on the same kind
of client, and prints the ratio (target <= 1.3) and the cost of turn 1,000
against turn 10 (target: flat, about 1.0).

Two runs: with the ScriptedClient as students use it (it checks every
request like the API, looking only at messages it has not seen), and with
``check=False``, a client that does no work at all, which shows agentlab's own
cost per turn in microseconds. A last run goes through the real SDK over
HTTP to the local Messages-API server, where a request costs what it really
costs to build, send and parse.

    python benchmarks/loop_overhead.py
"""

from __future__ import annotations

import statistics
import time

import agentlab as al
from agentlab.offline import ScriptedClient, make_message, text, tool_use

TURNS = 1000


@al.tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def script() -> list:
    replies = [make_message([tool_use("noop", {}, id=f"toolu_{i:04d}")]) for i in range(TURNS - 1)]
    return replies + [make_message([text("done")])]


def bare_loop(client, messages, stamps):
    """The lesson's loop, unchanged but for the tool."""
    while True:
        stamps.append(time.perf_counter())
        response = client.messages.create(
            model="m", system="s", messages=messages, tools=[noop.definition], max_tokens=8000
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        results = []
        for block in response.content:
            if block.type == "tool_use":
                output = noop.fn()
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})


def agentlab_loop(client, messages, stamps):
    create = client.messages.create

    def timed_create(**params):  # note the time of each request, as the bare loop does
        stamps.append(time.perf_counter())
        return create(**params)

    client.messages.create = timed_create
    al.agent_loop(messages, client, tools=[noop], max_turns=TURNS, system="s", model="m")


def per_turn(stamps, around):
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    window = gaps[max(0, around - 6) : around + 4]
    return statistics.median(window)


def measure(run, check=True):
    client = ScriptedClient(script(), check=check)
    messages = [{"role": "user", "content": "go"}]
    stamps: list[float] = []
    start = time.perf_counter()
    run(client, messages, stamps)
    return time.perf_counter() - start, stamps, messages


def compare(check: bool) -> None:
    measure(agentlab_loop, check)  # warm up imports and caches
    bare = [measure(bare_loop, check) for _ in range(3)]
    ours = [measure(agentlab_loop, check) for _ in range(3)]
    t_bare = min(b[0] for b in bare)
    best = min(ours, key=lambda o: o[0])
    t_ours, stamps = best[0], best[1]
    assert len(best[2]) == 2 * TURNS  # every turn ran
    early, late = per_turn(stamps, 10), per_turn(stamps, TURNS - 1)
    label = "checking ScriptedClient (default)" if check else "ScriptedClient(check=False)"
    print(f"{TURNS} turns on a {label}, best of 3")
    print(f"  lesson's bare loop : {t_bare * 1000:8.1f} ms ({t_bare / TURNS * 1e6:6.1f} µs/turn)")
    print(f"  agentlab.agent_loop: {t_ours * 1000:8.1f} ms ({t_ours / TURNS * 1e6:6.1f} µs/turn)")
    print(f"  ratio agent_loop / bare loop: {t_ours / t_bare:.2f}   (target <= 1.3)")
    print(f"  agentlab's turn {TURNS} vs turn 10: {late / early:.2f}   (target: flat, ~1.0)")


def over_http(turns: int = 100) -> None:
    """The same comparison through the real SDK and the local Messages-API server."""
    import anthropic

    from agentlab.testing import FakeMessagesServer

    def reply(body):  # a no-op tool call until the last turn
        done = len(body["messages"]) >= 2 * turns - 1
        return [text("done")] if done else [tool_use("noop", {})]

    def timed(run):
        with FakeMessagesServer(reply, check=False) as server:
            client = anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=0)
            messages = [{"role": "user", "content": "go"}]
            start = time.perf_counter()
            run(client, messages, [])
            return time.perf_counter() - start

    def ours(client, messages, stamps):
        al.agent_loop(messages, client, tools=[noop], max_turns=turns, system="s", model="m")

    timed(ours)  # warm up
    t_bare = min(timed(bare_loop) for _ in range(2))
    t_ours = min(timed(ours) for _ in range(2))
    print(f"{turns} turns through the real SDK and the local server (HTTP), best of 2")
    print(f"  lesson's bare loop : {t_bare * 1000:8.1f} ms ({t_bare / turns * 1e3:6.2f} ms/turn)")
    print(f"  agentlab.agent_loop: {t_ours * 1000:8.1f} ms ({t_ours / turns * 1e3:6.2f} ms/turn)")
    print(f"  ratio agent_loop / bare loop: {t_ours / t_bare:.2f}   (target <= 1.3)")


def main() -> None:
    compare(check=True)
    compare(check=False)
    over_http()


if __name__ == "__main__":
    main()
