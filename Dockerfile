# Gantry: the image holds the gateway as its package installs it (no benchmark, terminal client or
# mock upstream inside), without node-llama-cpp unless asked for.
#   docker build -t gantry .
#   docker build -t gantry:llama --build-arg LLAMA=true .   # adds the llama engine (node-llama-cpp)
#   docker run -p 8000:8000 -v $PWD/gantry.yaml:/etc/gantry/gantry.yaml:ro gantry
# It is installed in /opt/gantry (its node_modules there): a plugin mounted under /opt/gantry/plugins
# imports `gantry` and Nest's packages from it, as one beside a local install does.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json README.md ./
COPY src ./src
COPY apps ./apps
COPY scripts ./scripts
COPY examples ./examples
RUN npm run build && npm pack --ignore-scripts --pack-destination /tmp && mv /tmp/gantry-*.tgz /tmp/gantry.tgz

FROM node:20-bookworm-slim
ARG LLAMA=false
ENV NODE_ENV=production \
    GANTRY_HOST=0.0.0.0 \
    GANTRY_PORT=8000 \
    GANTRY_CONFIG=/etc/gantry/gantry.yaml
ENV PATH=/opt/gantry/node_modules/.bin:$PATH
WORKDIR /opt/gantry
# The package stays beside its install: a derived image can add to it (npm install node-llama-cpp, a plugin's dependencies).
COPY --from=build /tmp/gantry.tgz /opt/gantry/gantry.tgz
RUN npm install --omit=dev $([ "$LLAMA" = true ] || echo --omit=optional) --no-audit --no-fund ./gantry.tgz \
 && npm cache clean --force
COPY deploy/gantry.yaml /etc/gantry/gantry.yaml
USER node
EXPOSE 8000
# SIGTERM drains: open streams get shutdown.drainMs to finish (docs/operations.md, Shutdown and readiness).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.GANTRY_PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["gantry"]
