"""coders subpackage."""

__all__: list[str] = []
