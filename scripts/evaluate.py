"""Evaluation alone: `python scripts/evaluate.py DUMP [flags]` (same flags as `toolemu evaluate`)."""

from __future__ import annotations

import sys

from toolemu.cli.app import main

if __name__ == "__main__":
    sys.argv = ["toolemu", "evaluate", *sys.argv[1:]]
    main()
