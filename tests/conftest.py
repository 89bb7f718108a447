"""Shared test setup: never reach a real API from the default test run."""

from __future__ import annotations

import os


def pytest_configure(config):  # runs for nbval notebook items too
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        os.environ.pop(key, None)
