"""Allow ``python -m mnemara``."""
from mnemara.cli import main

main()
