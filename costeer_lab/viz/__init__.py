"""viz subpackage."""

__all__: list[str] = []
