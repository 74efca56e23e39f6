"""evolve subpackage."""

__all__: list[str] = []
