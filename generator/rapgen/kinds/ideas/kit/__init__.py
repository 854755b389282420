"""The Ideas evaluator: retrieval of each idea's nearest future papers and P/M/S judgments, cached by key."""
