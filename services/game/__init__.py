"""The game service: one generic service that serves any registered game (`python -m
services.game GAME`). `core` plays the game (transport-free), `servicer` and the relay answer
gRPC calls with it, `store` keeps games in Redis."""
