"""The generation controls moved to ``agentlab.controls`` (the offline clients use them too)."""

from agentlab.controls import CHARS_PER_TOKEN, apply, output_tokens

__all__ = ["CHARS_PER_TOKEN", "apply", "output_tokens"]
