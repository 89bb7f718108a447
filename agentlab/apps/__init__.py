"""The apps built on the core: ``%agent`` (``magic``), the ``agentlab`` command (``cli``),
``agentlab lessons`` (``lessons``) and ``agentlab doctor`` (``doctor``)."""
