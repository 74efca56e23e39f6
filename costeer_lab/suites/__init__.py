"""suites subpackage."""

__all__: list[str] = []
