"""pytest setup for the lesson notebooks (run with ``pytest --nbval-lax notebooks``).

Fixtures do not reach nbval's notebook items, but ``pytest_configure`` does,
and the kernels nbval starts inherit this process's environment. So the
notebooks run offline, on the demo model, unless you ask for a real model
with ``AGENTLAB_LIVE=1`` (then ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL are kept).
"""

from __future__ import annotations

import os


def pytest_configure(config):
    if os.environ.get("AGENTLAB_LIVE") != "1":
        for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
            os.environ.pop(key, None)
