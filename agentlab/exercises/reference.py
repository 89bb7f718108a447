"""Reference solutions: the one source of the exercise notebooks.

``tools/make_exercises.py`` copies each function below into
``notebooks/solutions/`` as it is, and into ``notebooks/exercises/`` with the
lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` replaced by a
stub, exactly as ``nbgrader generate_assignment`` does. So the notebooks cannot
drift from what the checker accepts: the tests check these functions pass.

They are written the way the lesson writes them: plain dicts, one loop, no
helpers from agentlab.
"""

# The model name sent with each request (the offline clients accept any name).
MODEL = "claude-sonnet-5-5"
MAX_TOKENS = 8000  # as in the lesson


def first_message(query):
    """Return the first message of the history: the user's task."""
    ### BEGIN SOLUTION
    return {"role": "user", "content": query}
    ### END SOLUTION


def decide(response):
    """Return "execute" (run the tools), "continue" (ask again) or "stop"."""
    ### BEGIN SOLUTION
    if response.stop_reason == "tool_use":
        return "execute"  # the only stop reason that runs anything
    if response.stop_reason == "pause_turn":
        return "continue"  # a server tool paused the turn: send it back as it is
    return "stop"  # end_turn, max_tokens, refusal, ... and any reason we do not know yet
    ### END SOLUTION


def tool_result(block, output):
    """Return the tool_result block that answers one tool_use block."""
    ### BEGIN SOLUTION
    return {"type": "tool_result", "tool_use_id": block.id, "content": output}
    ### END SOLUTION


def run_tools(response, run_bash):
    """Run every tool_use block of the reply; return one tool_result per call, in order."""
    ### BEGIN SOLUTION
    results = []
    for block in response.content:
        if block.type != "tool_use":
            continue  # text blocks are the model's words, not requests
        if block.name != "bash":
            error = f"Unknown tool {block.name!r}: this harness only has bash."
            results.append(
                {"type": "tool_result", "tool_use_id": block.id, "content": error, "is_error": True}
            )
            continue
        try:
            output = run_bash(block.input["command"])
        except Exception as e:  # a failing tool is an observation for the model, not a crash
            error = f"Error: {type(e).__name__}: {e}"
            results.append(
                {"type": "tool_result", "tool_use_id": block.id, "content": error, "is_error": True}
            )
            continue
        results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
    return results
    ### END SOLUTION


def append_results(messages, results):
    """Add the results to the history (in place) as one user message."""
    ### BEGIN SOLUTION
    messages.append({"role": "user", "content": results})
    ### END SOLUTION


def agent_loop(client, messages, tools, run_bash):
    """The lesson's loop: request, save the reply, stop unless tool_use, run, append, repeat."""
    ### BEGIN SOLUTION
    while True:
        response = client.messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, messages=messages, tools=tools
        )
        messages.append({"role": "assistant", "content": response.content})

        if response.stop_reason != "tool_use":
            return

        results = []
        for block in response.content:
            if block.type == "tool_use":
                output = run_bash(block.input["command"])
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})
    ### END SOLUTION


def limited_loop(client, messages, tools, run_bash, max_turns):
    """Step 1 of exercise 7: the lesson's loop with a turn limit, pause_turn sent
    back, and a call cut off by max_tokens answered but never run."""
    ### BEGIN SOLUTION
    for _ in range(max_turns):  # max_turns counts model requests
        response = client.messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, messages=messages, tools=tools
        )
        messages.append({"role": "assistant", "content": response.content})
        calls = [block for block in response.content if block.type == "tool_use"]

        if response.stop_reason == "pause_turn":
            continue  # send the paused turn back as it is; the model carries on
        if response.stop_reason != "tool_use":
            if calls:  # cut off by max_tokens: never run it, but answer it
                reason = f"Not run: the reply was cut off ({response.stop_reason})."
                results = [
                    {
                        "type": "tool_result",
                        "tool_use_id": b.id,
                        "content": reason,
                        "is_error": True,
                    }
                    for b in calls
                ]
                messages.append({"role": "user", "content": results})
            return

        results = []
        for block in calls:
            output = run_bash(block.input["command"])
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})
    ### END SOLUTION


def guarded_loop(client, messages, tools, run_bash, max_turns, approve):
    """The loop with the guards a real harness needs: a turn limit, approval,
    errors as results, pause_turn, and calls cut off by max_tokens."""

    ### BEGIN SOLUTION
    def answer(block, content, is_error=False):
        result = {"type": "tool_result", "tool_use_id": block.id, "content": content}
        if is_error:
            result["is_error"] = True
        return result

    for _ in range(max_turns):  # max_turns counts model requests
        response = client.messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, messages=messages, tools=tools
        )
        messages.append({"role": "assistant", "content": response.content})
        calls = [block for block in response.content if block.type == "tool_use"]

        if response.stop_reason == "pause_turn":
            continue  # send the paused turn back as it is; the model carries on
        if response.stop_reason != "tool_use":
            if calls:  # cut off by max_tokens: never run it, but answer it
                reason = f"Not run: the reply was cut off ({response.stop_reason})."
                messages.append(
                    {"role": "user", "content": [answer(b, reason, True) for b in calls]}
                )
            return

        results = []
        for block in calls:
            if block.name != "bash":
                results.append(answer(block, f"Unknown tool {block.name!r}.", True))
            elif not approve(block.input):
                results.append(answer(block, "Denied: the user did not allow this command.", True))
            else:
                try:
                    results.append(answer(block, run_bash(block.input["command"])))
                except Exception as e:
                    results.append(answer(block, f"Error: {type(e).__name__}: {e}", True))
        messages.append({"role": "user", "content": results})
    ### END SOLUTION


def todo_update(items, update):
    """Return the todo list after one update; refuse a bad one with ValueError."""
    ### BEGIN SOLUTION
    new = [dict(item) for item in items]  # a copy: a refused update changes nothing
    if "id" not in update:  # {"text": ...} adds a pending item with the next id
        if len(new) >= 20:
            raise ValueError("The list is full (20 items): finish some first.")
        new.append({"id": str(len(new) + 1), "text": update["text"], "status": "pending"})
        return new
    if update.get("status") not in ("pending", "in_progress", "completed"):
        raise ValueError(f"Unknown status {update.get('status')!r}.")
    found = [item for item in new if item["id"] == update["id"]]
    if not found:
        raise ValueError(f"No item with id {update['id']!r}.")
    busy = [item for item in new if item["status"] == "in_progress" and item is not found[0]]
    if update["status"] == "in_progress" and busy:
        raise ValueError(f"Item {busy[0]['id']} is already in progress: finish it first.")
    found[0]["status"] = update["status"]
    return new
    ### END SOLUTION


def todo_reminder(results, rounds_since_todo):
    """Return the next user message's content: the results, then a reminder after 3 rounds."""
    ### BEGIN SOLUTION
    content = list(results)  # every tool_result first, unchanged and in order
    if rounds_since_todo >= 3:
        content.append({"type": "text", "text": "Reminder: update your todo list."})
    return content
    ### END SOLUTION


def subagent(client, prompt, tools):
    """Run a child loop on a fresh history; return only its final text."""
    ### BEGIN SOLUTION
    child = {name: pair for name, pair in tools.items() if name != "task"}  # no recursion
    definitions = [definition for definition, run in child.values()]
    messages = [{"role": "user", "content": prompt}]  # a fresh history: the prompt alone
    response = None
    for _ in range(30):  # at most 30 rounds
        response = client.messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, messages=messages, tools=definitions
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            break
        results = []
        for block in response.content:
            if block.type != "tool_use":
                continue
            if block.name in child:
                output, error = child[block.name][1](block.input), False
            else:
                output, error = f"Unknown tool {block.name!r}.", True
            result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
            if error:
                result["is_error"] = True
            results.append(result)
        messages.append({"role": "user", "content": results})
    words = [b.text for b in response.content if b.type == "text"] if response else []
    return "".join(words) or "(no summary)"  # only the final text goes back
    ### END SOLUTION
