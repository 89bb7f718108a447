from agentlab.apps.cli import main

raise SystemExit(main())
