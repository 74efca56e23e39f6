"""knowledge subpackage."""

__all__: list[str] = []
