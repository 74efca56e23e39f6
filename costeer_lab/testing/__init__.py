"""testing subpackage."""

__all__: list[str] = []
