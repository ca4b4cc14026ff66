# One image for the API (default command) and the Temporal worker (`node dist/src/worker.js`).
# Build: docker build -t insurance-coi-service .     Local stack: docker compose up --build

# The Node of package.json's exact `node` dev dependency (test/integration/node-runtime.test.ts
# keeps them equal). npm ci below also installs that package's binary of the same version, which
# `npm run build` runs on; `npm prune --omit=dev` drops it.
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
COPY scripts ./scripts
COPY clients ./clients
# dist/src/server.js, dist/src/worker.js, dist/scripts/migrate.js, dist/migrations/*.js
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24.21.0-bookworm-slim
# Debian's Chromium renders the certificate PDFs (new headless mode); fonts for the PDFs.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation fonts-dejavu-core ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# tini reaps Chromium's child processes and forwards SIGTERM for graceful shutdown.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/server.js"]
