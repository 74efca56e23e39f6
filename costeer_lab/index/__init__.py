"""index subpackage."""

__all__: list[str] = []
