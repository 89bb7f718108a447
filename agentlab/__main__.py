from agentlab.cli import main

raise SystemExit(main())
