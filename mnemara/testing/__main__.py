"""``python -m mnemara.testing``: the scripted Messages API for trying role docs offline."""
from mnemara.testing.serve import main

raise SystemExit(main())
