"""Turning a failed model request into a sentence a student can act on."""

from __future__ import annotations

__all__ = ["RequestError", "explain_error"]


class RequestError(RuntimeError):
    """A model request failed. The history is exactly as it was before it.

    ``explanation`` says what happened and what to do; ``cause`` is the SDK's
    exception (``anthropic.APIStatusError`` and friends).
    """

    def __init__(self, explanation: str, cause: BaseException | None = None):
        super().__init__(explanation)
        self.explanation = explanation
        self.cause = cause
        self.status_code: int | None = getattr(cause, "status_code", None)


def _api_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", "") or exc)


def explain_error(exc: BaseException) -> str:
    """One or two plain sentences for an exception raised by ``client.messages.create``."""
    import anthropic

    status = getattr(exc, "status_code", None)
    msg = _api_message(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return "The request timed out before the model answered. Try again, or raise the client's timeout."
    if isinstance(exc, anthropic.APIConnectionError):
        return (
            "Could not reach the API server (no connection). Check your network, or "
            "ANTHROPIC_BASE_URL if you set one; agentlab.connect(offline=True) works without one."
        )
    if status == 400:
        return f"The API rejected the request (400): {msg}"
    if status == 401:
        return "The API key is missing or wrong (401). Check ANTHROPIC_API_KEY."
    if status == 403:
        return f"This key may not do that (403 permission error): {msg}"
    if status == 404:
        return f"Not found (404), usually a misspelt model name: {msg}"
    if status == 413:
        return "The request is too large (413). Start a shorter conversation or trim the history."
    if status == 429:
        return "Too many requests (429, rate limit). Wait a little and try again; the SDK already retried."
    if status == 529:
        return "The API is overloaded (529). Try again in a moment; the SDK already retried."
    if isinstance(status, int) and status >= 500:
        return f"The API had an internal error ({status}). Try again; the SDK already retried."
    if status == 200:  # an error event in the middle of a stream
        return f"The stream broke off with an error: {msg}. Nothing was added to the history; try again."
    return f"The request failed: {type(exc).__name__}: {msg}"
