"""``python -m isr`` is ``isr``."""

from isr.cli.main import main

raise SystemExit(main())
