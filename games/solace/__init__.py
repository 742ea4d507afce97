"""Solace: a one-player patience with pyramids, where black pieces hide what is inside. Rules:
docs/rules/solace.md."""

from games import Game

GAME = Game(
    name="solace",
    title="Solace",
    package="games.solace",
    proto_package="tabletop.solace.v1",
    service="SolaceService",
    port=50053,
)
