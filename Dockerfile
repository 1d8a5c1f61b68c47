# One image for the hook server (default: `serve`) and the node agent (`agent`).
# Build stage: TypeScript and the N-API addon (cmake, g++; no vendor SDK is needed — the
# vendor libraries are dlopen()ed at run time from the host).
# The bases are build arguments only so that a machine without a registry can pass locally made
# ones (scripts/e2e/build-image.sh); users build with the defaults.
ARG BUILD_BASE=node:24-bookworm
ARG RUNTIME_BASE=node:24-bookworm-slim
FROM ${BUILD_BASE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake g++ make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY native ./native
RUN npm run build \
 && npm run build:native \
 && npm prune --omit=dev --omit=optional

# Runtime stage: Node, the compiled JavaScript, production dependencies and the addon.
FROM ${RUNTIME_BASE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# native/index.ts also looks for the addon next to itself.
COPY --from=build /src/native/build/Release/gpustack_native.node ./dist/native/gpustack_native.node
# package.json's two names for the one CLI on PATH: `kubectl gpustack cards` finds kubectl-gpustack
# (kubectl's plugin lookup) in a debug Pod or a toolbox image built from this one.
RUN chmod 0755 /app/dist/src/cli/main.js \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/gpustack-operator \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/kubectl-gpustack
USER 10001:10001
EXPOSE 8080 8081 8082
ENTRYPOINT ["node", "/app/dist/src/cli/main.js"]
CMD ["serve"]
