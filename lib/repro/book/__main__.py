"""`python -m repro.book …`: see `repro.book.cli`."""
import sys

from .cli import main

sys.exit(main())
