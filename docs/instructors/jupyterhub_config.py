# jupyterhub_config.py for an agentlab class: every student gets a Jupyter server with the lessons
# copied into their home folder, and talks to one shared `agentlab serve` (or a real model).
#
# benchmarks/classroom.py runs this very file on 127.0.0.1 to measure a class of 5 and 20
# students. For a real class, set the environment variables below (or edit the defaults) and
# replace the authenticator and spawner with your site's (see the notes at each setting).
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (JupyterHub defines get_config when it loads this file)

ROOT = Path(os.environ.get("AGENTLAB_HUB_ROOT", "/srv/agentlab-hub"))
MODEL_URL = os.environ.get("AGENTLAB_MODEL_URL", "http://127.0.0.1:8765")  # agentlab serve
MODEL_KEY = os.environ.get("AGENTLAB_MODEL_KEY", "class")  # agentlab serve accepts any key

c.JupyterHub.ip = os.environ.get("AGENTLAB_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("AGENTLAB_HUB_PORT", "8000"))
c.JupyterHub.hub_port = int(os.environ.get("AGENTLAB_HUB_API_PORT", "8081"))
c.JupyterHub.db_url = f"sqlite:///{ROOT / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(ROOT / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.api_url = (
    f"http://127.0.0.1:{os.environ.get('AGENTLAB_PROXY_API_PORT', '8001')}"
)
c.ConfigurableHTTPProxy.pid_file = str(ROOT / "jupyterhub-proxy.pid")
if os.environ.get("AGENTLAB_PROXY"):  # configurable-http-proxy installed with npm, if not on PATH
    c.ConfigurableHTTPProxy.command = [os.environ["AGENTLAB_PROXY"]]

# Who may log in. "dummy" accepts any name (a test or a closed lab); a real class uses its
# site's login, e.g. c.JupyterHub.authenticator_class = "oauthenticator.GitHubOAuthenticator".
c.JupyterHub.authenticator_class = os.environ.get("AGENTLAB_AUTHENTICATOR", "dummy")
c.Authenticator.allow_all = True

# How servers start. "simple" runs every student's server as the hub's own user, each in a
# folder of its own under ROOT/home: fine on one trusted machine, not isolation. A real class
# uses system users ("localprocess"), containers (dockerspawner) or Kubernetes (kubespawner).
c.JupyterHub.spawner_class = os.environ.get("AGENTLAB_SPAWNER", "simple")
c.SimpleLocalProcessSpawner.home_dir_template = str(ROOT / "home" / "{username}")
c.Spawner.default_url = "/lab/tree/01_the_agent_loop.ipynb"
c.Spawner.environment = {
    # Every notebook's al.connect() then talks to the shared server (or a real model).
    "ANTHROPIC_BASE_URL": MODEL_URL,
    "ANTHROPIC_API_KEY": MODEL_KEY,
    "LANG": os.environ.get("AGENTLAB_CLASS_LANG", "en_US.UTF-8"),  # zh_CN.UTF-8: Chinese views
}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
if hasattr(os, "geteuid") and os.geteuid() == 0:
    c.Spawner.args = ["--allow-root"]  # a container running as root; a real hub should not


def copy_lessons(spawner):
    """Before a student's server starts: copy the lessons into their home (never overwriting)."""
    from agentlab.apps.lessons import copy_lessons

    home = Path(spawner.home_dir_template.format(username=spawner.user.name))
    home.mkdir(parents=True, exist_ok=True)
    copy_lessons(home)


c.Spawner.pre_spawn_hook = copy_lessons

# A token for scripts (benchmarks/classroom.py) to create students and start their servers.
if os.environ.get("AGENTLAB_HUB_TOKEN"):
    c.JupyterHub.services = [{"name": "classroom", "api_token": os.environ["AGENTLAB_HUB_TOKEN"]}]
    c.JupyterHub.load_roles = [
        {
            "name": "classroom",
            "scopes": ["admin:users", "admin:servers", "access:servers"],
            "services": ["classroom"],
        }
    ]

# The students' servers run this Python's jupyterhub-singleuser (the hub's environment).
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
