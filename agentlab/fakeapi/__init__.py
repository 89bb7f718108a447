"""The API emulator: everything that stands in for Anthropic's servers offline.

- ``offline``: ``ScriptedClient``, ``DemoClient`` and ``connect()``, answered in-process;
- ``checks``: each request checked per model and API version, in the API's wording;
- ``thinking``, ``streaming``, ``controls``: thinking blocks, server-sent events,
  ``max_tokens``/``stop_sequences``/``tool_choice``;
- ``recording``: ``record()`` and ``ReplayClient``;
- ``demo/``: the demo model, a table of intents a student can read;
- ``server/``: the Messages API over HTTP (``agentlab serve``, ``FakeMessagesServer``).

It imports the core (``agentlab.history``, ``agentlab.models``...); the core never imports it.
"""
