"""Shared test setup: never reach a real API from the default test run."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config):  # runs for nbval notebook items too
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        os.environ.pop(key, None)


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts with no language chosen (English, and the demo model
    answering in each task's language), whatever an earlier test set."""
    from agentlab.i18n import set_language

    set_language(None)
    yield
    set_language(None)


@pytest.fixture(autouse=True)
def _no_remembered_keys():
    """Each test starts with no client keys remembered for redaction (``secrets.remember``
    keeps them for the whole process), so a test sees only the keys it made."""
    from agentlab import secrets

    secrets._held.clear()
    yield
    secrets._held.clear()


@pytest.fixture(autouse=True)
def _no_folders_guarded():
    """Each test starts with no folder kept out of imports (``run_bash`` adds the
    folder it runs in for the whole process), so a test sees only its own."""
    from agentlab.tools import protect

    protect._written.clear()
    yield
    protect._written.clear()
