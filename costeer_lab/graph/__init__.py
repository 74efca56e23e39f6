"""graph subpackage."""

__all__: list[str] = []
