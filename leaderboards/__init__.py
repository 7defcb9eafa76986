"""File-based leaderboards: protocols, evaluator, renderer; filled by later issues."""
