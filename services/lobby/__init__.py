"""The lobby service: matchmaking tickets, games against bots, a player's games
(`python -m services.lobby`). Matchmakers (services.matchmaker) form the games from the
tickets it queues."""
