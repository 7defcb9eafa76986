from gymforge.cli import main

raise SystemExit(main())
