"""evaluate subpackage."""

__all__: list[str] = []
