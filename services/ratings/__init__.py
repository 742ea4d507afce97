"""Ratings: the consumer of finished games (`python -m services.ratings`), the pure model
(`model.py`), PostgreSQL's rows and Redis's leaderboards (`store.py`)."""
