from agentlab.testing.serve import main

raise SystemExit(main())
