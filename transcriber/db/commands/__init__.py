"""Writer commands, by area. Each is a frozen dataclass run by the writer actor."""
