"""The archive: every finished game kept in PostgreSQL (docs/archive.md)."""
