# The bot in a container: slim Python, a non-root user, pinned dependencies (requirements.txt),
# the search index built at image build so a container starts serving at once.
# Build: docker build -t paperbot .    Run: docker compose up (see compose.yaml and README "Deploy").
FROM python:3.11-slim

# PAPERBOT_SERVICE: no terminal in a container, so without DISCORD_TOKEN the bot stops with one
# line instead of starting a console that ends at once (`docker run -it` still gets the console).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PAPERBOT_SERVICE=1

RUN groupadd --system --gid 10001 paperbot \
    && useradd --system --uid 10001 --gid paperbot --home-dir /app paperbot
WORKDIR /app

# Dependencies first: this layer is rebuilt only when the pinned set changes.
COPY requirements.txt ./
RUN pip install --requirement requirements.txt

COPY pyproject.toml setup.py README.md ./
COPY bot ./bot
COPY config ./config
COPY data ./data
# A C compiler only for this layer: the install builds the search kernels (bot/search/ranking/csrc/;
# without them queries take the slower numpy paths), then it goes.
RUN apt-get update \
    && apt-get install --yes --no-install-recommends gcc libc6-dev \
    && pip install --no-deps . \
    && apt-get purge --yes --auto-remove gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /app/state \
    && chown -R paperbot:paperbot /app/state /app/data

USER 10001:10001
# Loads settings and corpus and saves the index under data/.index (no token, no database).
RUN DATABASE_URL=sqlite:///:memory: python -m bot --check

# Healthy while the configured database answers (cheap: one connection, a count per table).
HEALTHCHECK --interval=60s --timeout=20s --start-period=30s --retries=3 \
    CMD ["python", "-m", "bot", "db", "check"]

CMD ["python", "-m", "bot"]
