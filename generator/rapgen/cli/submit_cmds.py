"""Commands of the submit stage (placeholder until the stage lands)."""

COMMANDS: list = []
