"""Commands of the score stage (placeholder until the stage lands)."""

COMMANDS: list = []
