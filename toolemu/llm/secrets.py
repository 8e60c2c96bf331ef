"""Moved to `toolemu.secrets` (below toolemu.log, which scrubs what it writes); this old name is the same module."""

import sys

from toolemu import secrets

sys.modules[__name__] = secrets
