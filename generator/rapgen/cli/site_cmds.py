"""Commands of the site stage (placeholder until the stage lands)."""

COMMANDS: list = []
