import pytest

import agentlab as al
from agentlab.offline import ScriptedClient, tool_use
from agentlab.tools.policy import Policy, Verdict, as_verdict, lesson_blocklist


def call(command):
    return {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": command}}


def test_modes():
    assert Policy("auto")(call("ls")).action == "approve"
    assert Policy("deny")(call("ls")).action == "deny"
    asked = []
    p = Policy("confirm", ask_user=lambda c: asked.append(c) or "not now")
    v = p(call("ls"))
    assert v == Verdict.deny("not now") and len(asked) == 1
    assert Policy("confirm")(call("ls")).action == "deny"  # nobody to ask: refuse, never run
    with pytest.raises(ValueError):
        Policy("maybe")  # type: ignore[arg-type]


def test_patterns_deny_then_ask_then_allow_first_match_wins():
    asked = []
    p = Policy(
        "deny",
        allow=["ls*", "git *"],
        ask=["git push*"],
        deny=["*rm -rf*"],
        ask_user=lambda c: asked.append(1) or True,
    )
    assert p(call("ls -la")).action == "approve"
    assert p(call("ls; rm -rf /")).action == "deny"  # deny beats allow
    assert p(call("git push origin")).action == "approve" and asked == [1]  # ask beats allow
    assert p(call("git status")).action == "approve" and asked == [1]
    assert p(call("cat x")).action == "deny"  # no match: the mode decides


def test_as_verdict():
    assert as_verdict(True).action == "approve"
    assert as_verdict(False).action == "deny"
    assert as_verdict("why") == Verdict.deny("why")
    assert as_verdict({"command": "ls"}) == Verdict.edit({"command": "ls"})
    with pytest.raises(TypeError):
        as_verdict(3)


def test_lesson_blocklist_is_only_a_teaching_aid():
    assert lesson_blocklist(call("rm -rf /")).action == "deny"
    assert lesson_blocklist(call("sudo reboot")).action == "deny"
    # It is bypassable: the same command, spelt differently, slips past.
    assert lesson_blocklist(call("rm -r -f /")).action == "approve"


def test_denial_reaches_the_model():
    client = ScriptedClient([[tool_use("bash", {"command": "rm -r -f /tmp/x"})], "ok, I will not"])
    messages = [{"role": "user", "content": "clean up"}]
    al.agent_loop(messages, client, approve=Policy("deny"))
    sent = client.requests[1]["messages"][-1]["content"][0]
    assert sent["is_error"] is True and "approval mode 'deny'" in sent["content"]
