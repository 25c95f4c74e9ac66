# Loyalty API: the production install of docs/operations.md, in stages. Each stage runs a step of
# scripts/production-install.sh, the script CI runs on a clean clone, so what is tested is what
# is built here; CI also copies what the runtime stage's COPY --from=prune lines name into a
# folder of its own and checks the server there (the script's `runtime` step).
#
#   docker build -t loyalty-api .
#   docker run -p 3000:3000 -v loyalty-data:/data loyalty-api

FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles its native module when no prebuilt binary fits.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN scripts/production-install.sh build

FROM build AS prune
RUN scripts/production-install.sh prune && scripts/production-install.sh check

FROM node:20-bookworm-slim AS runtime
ENV DATABASE_URL=sqlite:/data/loyalty.db \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=prune /app/package.json /app/package-lock.json ./
COPY --from=prune /app/node_modules ./node_modules
COPY --from=prune /app/dist/src ./dist/src
COPY --from=prune /app/dist/console ./dist/console
COPY --from=prune /app/dist/panel ./dist/panel
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The flags of `npm start` (see README, Operating it); WORKERS=auto uses every core.
CMD ["node", "--max-old-space-size=256", "--max-semi-space-size=8", "dist/src/main.js", "serve"]
