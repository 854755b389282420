"""Commands of the search stage (placeholder until the stage lands)."""

COMMANDS: list = []
