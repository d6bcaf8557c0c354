"""The Gateway: HELLO, IDENTIFY -> READY + GUILD_CREATE, heartbeats, RESUME, dispatch, drops.

Sharding as Discord does it: IDENTIFY's `shard: [id, count]` (absent: [0, 1]) decides which
servers a session hears about, `(guild_id >> 22) % count == id`, in READY, GUILD_CREATE and every
later event; DMs go to shard 0. An impossible shard closes with 4010 (Invalid shard); a shard
that would hold more than `max_guilds_per_shard` servers (Discord: 2,500) closes with 4011
(Sharding required). Sessions of the same shard may run side by side (two processes); each
receives its shard's events.
"""

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
INVALID_SHARD, SHARDING_REQUIRED = 4010, 4011
MAX_GUILDS_PER_SHARD = 2500  # Discord's limit; above it IDENTIFY is refused with 4011


def shard_of(guild_id: str | int, count: int) -> int:
    """Discord's routing formula (kept apart from the bot's copy: the stand-in is the spec)."""
    return (int(guild_id) >> 22) % count


def parse_shard(raw: Any) -> tuple[int, int] | None:
    """IDENTIFY's `shard` as (id, count), or None when Discord would refuse it (4010)."""
    if raw is None:
        return (0, 1)
    if not isinstance(raw, list) or len(raw) != 2:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in raw):
        return None
    shard_id, count = raw
    return (shard_id, count) if count >= 1 and 0 <= shard_id < count else None


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
    shard: tuple[int, int] = (0, 1)

    @property
    def active(self) -> bool:
        """Receives events: connected, or disconnected but resumable (they are replayed)."""
        return self.connection is not None or self.resumable

    def routes(self, guild_id: str | None) -> bool:
        """Whether this session's shard gets events of `guild_id` (None: a DM, shard 0)."""
        shard_id, count = self.shard
        return shard_id == (0 if guild_id is None else shard_of(guild_id, count))

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
        self.max_guilds_per_shard = MAX_GUILDS_PER_SHARD
        #: GET /gateway/bot's session_start_limit.max_concurrency (IDENTIFY buckets per 5 s)
        self.max_concurrency = 1
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
            session = connection.session
            if session is not None and session.connection is connection:
                session.connection = None
                if ws.close_code in (1000, 1001):  # a client's clean close ends its session
                    session.resumable = False
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
        shard = parse_shard(data.get("shard"))
        if shard is None:
            await connection.ws.close(code=INVALID_SHARD, message=b"Invalid shard.")
            return
        guilds = [g for g in self.world.guilds if shard_of(g.id, shard[1]) == shard[0]]
        if len(guilds) > self.max_guilds_per_shard:
            await connection.ws.close(code=SHARDING_REQUIRED, message=b"Sharding required.")
            return
        for earlier in self.sessions.values():
            if earlier.shard == shard:  # this shard's client started over: no RESUME for it
                earlier.resumable = False
        session = Session(secrets.token_hex(16), int(data.get("intents") or 0), shard=shard)
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
            "guilds": [{"id": g.id, "unavailable": True} for g in guilds],
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
        for guild in guilds:
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

    def sessions_for(self, guild_id: str | None) -> list[Session]:
        """The sessions that receive events of `guild_id` (None: DMs), as Discord routes them."""
        return [s for s in self.sessions.values() if s.active and s.routes(guild_id)]

    async def dispatch(self, event: str, data: Any) -> None:
        """Send a DISPATCH event to the sessions of its server's shard (DMs: shard 0); buffered
        for RESUME replay while disconnected. No session of that shard: nobody receives it."""
        if self.current is None:
            raise RuntimeError("no gateway session: connect the bot first")
        for session in self.sessions_for(event_guild_id(event, data)):
            await self._send_event(session, event, data)

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

    def shard_connections(self) -> dict[tuple[int, int], int]:
        """Live connections per identified shard (id, count): what each process opened."""
        live: dict[tuple[int, int], int] = {}
        for session in self.sessions.values():
            if session.connection is not None:
                live[session.shard] = live.get(session.shard, 0) + 1
        return live

    async def close(self) -> None:
        for connection in list(self.connections):
            await connection.ws.close(code=1001, message=b"fake discord shutting down")


def event_guild_id(event: str, data: Any) -> str | None:
    """The server an event belongs to: `guild_id`, or a GUILD_CREATE/UPDATE/DELETE's `id`."""
    if not isinstance(data, dict):
        return None
    if data.get("guild_id"):
        return str(data["guild_id"])
    if event in ("GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE") and data.get("id"):
        return str(data["id"])
    return None
