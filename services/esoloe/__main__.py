"""The e-SOLO-e game service: `python -m services.esoloe` (port 50051 unless LISTEN is set)."""

from services.esoloe.adapter import ADAPTER
from services.runtime.main import run_game_service
from tabletop.esoloe.v1 import esoloe_pb2_grpc

if __name__ == "__main__":
    run_game_service(ADAPTER, esoloe_pb2_grpc.add_EsoloeServiceServicer_to_server, 50051)
