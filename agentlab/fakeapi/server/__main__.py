from agentlab.fakeapi.server.serve import main

raise SystemExit(main())
