"""What does one offline request cost, answered directly or through the SDK's own client?

The offline clients answer a plain ``messages.create`` directly and send every
other call (streams, ``count_tokens``, ``with_raw_response``, ``beta``) through
a real ``anthropic.Anthropic`` whose HTTP requests are answered in-process.
This prints, side by side in one run, the cost of one ``create`` both ways for
a short and a long history, and the ratio: the reason a plain ``create`` takes
the direct path.

    python benchmarks/offline_clients.py
"""

from __future__ import annotations

import time

from agentlab.fakeapi.offline import ScriptedClient, make_message

REPLY = make_message("ok")


def history(turns: int) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(turns):
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "noop", "input": {}}],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}],
            }
        )
    return messages


def per_call(create, params: dict, n: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            create(**params)
        best = min(best, (time.perf_counter() - start) / n)
    return best


def main() -> None:
    for turns, n in ((1, 400), (500, 10)):
        client = ScriptedClient(lambda params: REPLY, check=False)
        params = {"model": "m", "max_tokens": 8, "messages": history(turns), "system": "s"}
        direct = per_call(client.messages.create, params, n)
        via_sdk = per_call(client._sdk.messages.create, params, n)
        print(f"history of {2 * turns + 1} messages, ScriptedClient(check=False), best of 5")
        print(f"  create answered directly        : {direct * 1e6:9.1f} µs")
        print(f"  create through the SDK's client : {via_sdk * 1e6:9.1f} µs")
        print(f"  ratio SDK / direct: {via_sdk / direct:.0f}")


if __name__ == "__main__":
    main()
