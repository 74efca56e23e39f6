"""experiment subpackage."""

__all__: list[str] = []
