"""The Ideas sample archive (IDEAS.md §8), built from the committed cs.CL papers only."""
