# syntax=docker/dockerfile:1
# The service as a container: build stage compiles better-sqlite3 and bundles src/ with esbuild;
# the runtime stage is a slim Node LTS image running the bundle as a non-root user.
# Node 24 LTS, the recommended runtime (docs/node24.md). On it the store loads better-sqlite3 13
# (`better-sqlite3-napi`: Node-API, its add-on ships prebuilt in the npm package); better-sqlite3 12,
# which the same lock file installs for Node 20, is compiled by `npm ci` but never loaded here
# (12 aborts on Node 24). src/store/sqlite-driver.ts picks by the runtime's Node-API version.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 12's install script compiles it when no prebuilt binary can be fetched; better-sqlite3
# 13 and sharp ship their prebuilt add-ons inside their packages.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Manifests first: the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json ./
# The client workspace comes whole: npm ci's prepare step builds it (clients/typescript/dist).
COPY clients/typescript ./clients/typescript
RUN npm ci --omit=dev --no-audit --no-fund
COPY src ./src
COPY config ./config
COPY scripts/build.mjs ./scripts/build.mjs
# esbuild is a runtime dependency (npm start bundles), so it is present after --omit=dev.
RUN npm run -s build

FROM ${NODE_IMAGE} AS runtime
# MALLOC_ARENA_MAX: glibc gives every thread that allocates its own malloc arena, each keeping
# the memory it freed; two arenas hold the service's native memory (SQLite, V8's compiler, OpenSSL)
# with less waste. Only the environment can set it, so it lives here, not in npm start.
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/config ./config
# The code is root-owned and read-only to the service; only /data is writable by it.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# Liveness through the public health record; no curl in slim images, so node asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node runs directly (not through npm start), so SIGTERM reaches the service itself and it drains
# requests and the background workers before exiting. The flags are npm start's (why: the "npm start"
# entry of docs/decisions.md): a small young generation, old-generation growth in 20 % steps, one V8 worker thread.
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "--max-semi-space-size=2", "--heap-growing-percent=20", "--v8-pool-size=1", "dist/server.mjs"]
