"""The Gateway: HELLO, IDENTIFY -> READY + GUILD_CREATE, heartbeats, RESUME, dispatch, drops."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import zlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from .models import JSON
from .recorder import Recorder
from .world import World

log = logging.getLogger(__name__)

DISPATCH, HEARTBEAT, IDENTIFY, PRESENCE, VOICE, RESUME, RECONNECT = 0, 1, 2, 3, 4, 6, 7
REQUEST_MEMBERS, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 8, 9, 10, 11


class Connection:
    """One websocket. Sends JSON text frames, or a zlib stream when the URL asked for one."""

    def __init__(self, ws: web.WebSocketResponse, compress: str | None) -> None:
        self.ws = ws
        self.compress = compress
        self._zlib = zlib.compressobj() if compress == "zlib-stream" else None
        self._lock = asyncio.Lock()
        self.session: Session | None = None

    async def send(self, payload: JSON) -> None:
        text = json.dumps(payload, separators=(",", ":"))
        async with self._lock:
            if self.ws.closed:
                return
            if self._zlib is not None:
                data = self._zlib.compress(text.encode()) + self._zlib.flush(zlib.Z_SYNC_FLUSH)
                await self.ws.send_bytes(data)
            else:
                await self.ws.send_str(text)


@dataclass
class Session:
    id: str
    intents: int
    seq: int = 0
    events: list[JSON] = field(default_factory=list)
    connection: Connection | None = None
    resumable: bool = True

    def next_payload(self, event: str, data: Any) -> JSON:
        self.seq += 1
        payload = {"op": DISPATCH, "t": event, "s": self.seq, "d": data}
        self.events.append(payload)
        return payload


class Gateway:
    """Gateway state. ``identifies`` / ``resumes`` record the IDENTIFY / RESUME payloads received
    (tests count and wait on them); ``received`` records every frame from the client."""

    def __init__(self, world: World, *, heartbeat_interval_ms: int = 41_250) -> None:
        self.world = world
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.url = ""
        self.valid_tokens: set[str] | None = None
        self.sessions: dict[str, Session] = {}
        self.current: Session | None = None
        self.connections: list[Connection] = []
        self.identifies: Recorder[JSON] = Recorder("IDENTIFY")
        self.resumes: Recorder[JSON] = Recorder("RESUME")
        self.received: Recorder[JSON] = Recorder("gateway frame")
        self.dispatched: Recorder[JSON] = Recorder("dispatched event")
        self.connects: Recorder[str] = Recorder("gateway connection")

    # websocket endpoint ------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoclose=True, max_msg_size=0)
        await ws.prepare(request)
        connection = Connection(ws, request.query.get("compress"))
        self.connections.append(connection)
        self.connects.append(request.path_qs)
        await connection.send(
            {"op": HELLO, "d": {"heartbeat_interval": self.heartbeat_interval_ms}}
        )
        try:
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(connection, json.loads(msg.data))
                elif msg.type is WSMsgType.ERROR:
                    log.debug("gateway websocket error %s", ws.exception())
        finally:
            if connection.session is not None and connection.session.connection is connection:
                connection.session.connection = None
            self.connections.remove(connection)
        return ws

    async def _on_frame(self, connection: Connection, frame: JSON) -> None:
        self.received.append(frame)
        op, data = frame.get("op"), frame.get("d")
        if op == HEARTBEAT:
            await connection.send({"op": HEARTBEAT_ACK})
        elif op == IDENTIFY:
            await self._identify(connection, data)
        elif op == RESUME:
            await self._resume(connection, data)
        elif op == REQUEST_MEMBERS:
            await self._members_chunk(connection, data)
        elif op in (PRESENCE, VOICE):
            pass
        else:
            log.warning("fake gateway: unhandled op %s: %s", op, frame)

    async def _identify(self, connection: Connection, data: JSON) -> None:
        self.identifies.append(data)
        if self.valid_tokens is not None and data.get("token") not in self.valid_tokens:
            await connection.ws.close(code=4004, message=b"Authentication failed.")
            return
        if self.current is not None:
            self.current.resumable = False
        session = Session(secrets.token_hex(16), int(data.get("intents") or 0))
        self.sessions[session.id] = session
        self.current = session
        session.connection = connection
        connection.session = session
        world = self.world
        ready: JSON = {
            "v": 10,
            "user": {
                **world.bot_user.to_json(),
                "verified": True,
                "mfa_enabled": False,
                "flags": 0,
            },
            "guilds": [{"id": g.id, "unavailable": True} for g in world.guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.url,
            "application": {"id": world.application_id, "flags": 1 << 23},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
        }
        if "shard" in data:
            ready["shard"] = data["shard"]
        await self._send_event(session, "READY", ready)
        for guild in world.guilds:
            await self._send_event(session, "GUILD_CREATE", guild.create_json())

    async def _resume(self, connection: Connection, data: JSON) -> None:
        self.resumes.append(data)
        session = self.sessions.get(data.get("session_id", ""))
        if session is None or not session.resumable:
            await connection.send({"op": INVALID_SESSION, "d": False})
            return
        session.connection = connection
        connection.session = session
        since = int(data.get("seq") or 0)
        for payload in list(session.events):
            if payload["s"] > since:
                await connection.send(payload)
        await self._send_event(session, "RESUMED", {})

    async def _members_chunk(self, connection: Connection, data: JSON) -> None:
        guild = self.world.guild_by_id(str(data.get("guild_id")))
        if guild is None or connection.session is None:
            return
        chunk = {
            "guild_id": guild.id,
            "members": [m.to_json() for m in guild.members.values()],
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [],
            "presences": [],
        }
        if data.get("nonce"):
            chunk["nonce"] = data["nonce"]
        await self._send_event(connection.session, "GUILD_MEMBERS_CHUNK", chunk)

    async def _send_event(self, session: Session, event: str, data: Any) -> None:
        payload = session.next_payload(event, data)
        self.dispatched.append(payload)
        if session.connection is not None:
            await session.connection.send(payload)

    # test controls ----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.current is not None and self.current.connection is not None

    async def dispatch(self, event: str, data: Any) -> None:
        """Send a DISPATCH event to the bot; buffered for RESUME replay while disconnected."""
        if self.current is None:
            raise RuntimeError("no gateway session: connect the bot first")
        await self._send_event(self.current, event, data)

    async def drop(self, code: int = 4000, *, resumable: bool = True) -> None:
        """Close the bot's websocket with ``code``. discord.py RESUMEs after any code except
        1000 (ours) and 4004/4010-4014 (fatal). With ``resumable=False`` the session is forgotten,
        so the RESUME gets INVALID_SESSION(false) and discord.py re-IDENTIFYs."""
        session = self.current
        if session is None or session.connection is None:
            raise RuntimeError("the bot is not connected to the fake gateway")
        if not resumable:
            session.resumable = False
        connection, session.connection = session.connection, None
        await connection.ws.close(code=code, message=b"fake drop")

    async def invalidate_session(self, resumable: bool = False) -> None:
        """Send op 9 INVALID_SESSION on the live connection (``False`` forces a re-IDENTIFY)."""
        session = self.current
        if session is None or session.connection is None:
            raise RuntimeError("the bot is not connected to the fake gateway")
        if not resumable:
            session.resumable = False
        await session.connection.send({"op": INVALID_SESSION, "d": resumable})

    async def request_reconnect(self) -> None:
        """Send op 7 RECONNECT: discord.py closes and RESUMEs."""
        if self.current is None or self.current.connection is None:
            raise RuntimeError("the bot is not connected to the fake gateway")
        await self.current.connection.send({"op": RECONNECT, "d": None})

    async def close(self) -> None:
        for connection in list(self.connections):
            await connection.ws.close(code=1001, message=b"fake discord shutting down")
