# Gantry: build with the dev tools, run with production dependencies only.
#   docker build -t gantry .
#   docker run -p 8000:8000 -v $PWD/gantry.yaml:/etc/gantry/gantry.yaml:ro gantry

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY apps ./apps
COPY scripts ./scripts
COPY examples ./examples
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    GANTRY_HOST=0.0.0.0 \
    GANTRY_PORT=8000 \
    GANTRY_CONFIG=/etc/gantry/gantry.yaml
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY deploy/gantry.yaml /etc/gantry/gantry.yaml
USER node
EXPOSE 8000
# SIGTERM drains: open streams get shutdown.drainMs to finish (see README, Operations).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.GANTRY_PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js"]
