"""problems package."""
