from agentlab.render import *  # noqa: F403  (moved: the HTML needs no ipywidgets)
from agentlab.render import __all__  # noqa: F401
