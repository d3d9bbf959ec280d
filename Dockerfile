# syntax=docker/dockerfile:1
# The worker image the Helm chart runs (helm/pyconnect: image.repository=pyconnect-mongodb, tag = appVersion):
#   docker build -t pyconnect-mongodb:0.1.0 .
# Stage 1 builds the project's wheel (with its compiled extension) and the wheels of its dependencies; stage 2
# installs them into a slim Python with no build tools, and runs as an unprivileged user with a read-only root
# filesystem in mind.

FROM python:3.11-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# A Rust toolchain (rustup's minimal profile) and a C linker for native/, the MongoDB connector's compiled
# Extended JSON writer; they stay in this stage, the runtime image gets only the built wheel.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/* \
 && curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain stable
ENV PATH=/root/.cargo/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY native ./native
COPY connect ./connect
COPY connectors ./connectors
COPY converters ./converters
COPY rest ./rest
COPY spark_jobs ./spark_jobs
RUN pip wheel --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN groupadd --system --gid 10001 connect \
 && useradd --system --uid 10001 --gid connect --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin connect
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links /wheels pyconnect-mongodb
USER 10001:10001
WORKDIR /tmp
EXPOSE 8083
# Configured as the Confluent and Debezium images are: CONNECT_* variables (CONNECT_BOOTSTRAP_SERVERS, CONNECT_GROUP_ID,
# ...) or BOOTSTRAP_SERVERS, GROUP_ID, CONFIG_STORAGE_TOPIC, OFFSET_STORAGE_TOPIC, STATUS_STORAGE_TOPIC; a properties
# file given as the argument is read first and overridden by them.
ENTRYPOINT ["connect-distributed"]
