class SourceIdConverter:
    """Source IDs contain ":", "/", "." and spaces (percent-encoded): match the rest of the path."""

    regex = ".+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
