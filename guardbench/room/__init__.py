"""Rooms: the sealed network and process space a system under test runs in (one per run)."""
from guardbench.room.room import Room, RoomError, unavailable

__all__ = ["Room", "RoomError", "unavailable"]
