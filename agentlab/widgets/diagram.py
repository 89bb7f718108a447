from agentlab.diagram import *  # noqa: F403  (moved: the SVG needs no ipywidgets)
from agentlab.diagram import __all__  # noqa: F401
