"""The package's version and the version of the record layout it writes (every record carries the latter)."""

__version__ = "0.1.0"

# Every record the project writes carries this, so readers can tell which layout wrote it.
SCHEMA_VERSION = "1"
