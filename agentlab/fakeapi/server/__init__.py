"""A local HTTP server that speaks the Anthropic Messages API, for tests and classes.

    import anthropic
    from agentlab.fakeapi.server import FakeMessagesServer

    with FakeMessagesServer(["Hello!"]) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=0)
        client.messages.create(model="claude-sonnet-5-5", max_tokens=100,
                               messages=[{"role": "user", "content": "hi"}])

The real ``anthropic`` SDK talks to it over HTTP, so the SDK's own request
building, retries, streaming and message-thread code all run. The server

- answers ``POST /v1/messages`` with JSON, or with server-sent events when the
  request says ``"stream": true``; ``POST /v1/messages/count_tokens``;
  ``GET /v1/models`` and ``GET /v1/models/{id}``;
- checks every request as the API does, per model and API version
  (``agentlab.fakeapi.checks``): a broken one gets a 400 in the API's error shape and
  wording, an unknown model a 404 ``model: NAME`` (``any_model=True`` accepts
  any name);
- honours ``max_tokens`` (a cut reply ends with ``stop_reason: "max_tokens"``),
  ``stop_sequences`` and ``tool_choice`` (``controls``);
- keeps message threads (the SDK's ``tool_runner`` and ``.thread()``): a
  ``continue`` is rebuilt from a bounded store keyed by message id, an unknown
  id answers 404 ``thread_not_found`` so the SDK resends (``threads``);
- simulates prompt caching with the documented rules (``cache``);
- plays scripted replies, in the forms ``ScriptedClient`` takes (a string, a
  list of blocks, a message dict, a ``Message``, or a function of the request);
  with no script it is the offline demo model, so ``agentlab serve`` can serve
  a whole class without a key;
- fails on request: ``server.fail(529, times=3)``, ``server.drop()``,
  ``server.slow(2.0)``, ``server.break_stream(after=2)``, ``server.cut_stream()``;
- records requests (body, headers without any key, the SDK's retry count)
  in ``server.requests``;
- answers ``HEAD /`` with 200 (clients such as Claude Code check the server
  is up that way);
- holds a classroom's load on uvicorn (h11): limits on body size, nesting,
  connections (under the open-file limit) and slow or idle clients
  (``http``); threads bounded in bytes, with random ids, each continued only
  with the key that created it (``threads``).

Modules: ``server`` (FakeMessagesServer, the ASGI app), ``http`` (uvicorn's
connection with the limits, reading and writing),
``controls``, ``threads``, ``cache``, ``serve``
(the command line).
"""

from agentlab.fakeapi.server.http import Limits
from agentlab.fakeapi.server.serve import main
from agentlab.fakeapi.server.server import (
    Answer,
    FakeMessagesServer,
    Fault,
    RecordedRequest,
    error_body,
)
from agentlab.fakeapi.streaming import events

__all__ = [
    "Answer",
    "FakeMessagesServer",
    "Fault",
    "Limits",
    "RecordedRequest",
    "error_body",
    "events",
    "main",
]
