from agentos.cli import main

raise SystemExit(main())
