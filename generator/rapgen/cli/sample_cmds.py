"""Commands of the sample stage (placeholder until the stage lands)."""

COMMANDS: list = []
