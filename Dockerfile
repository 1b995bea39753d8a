# tapedeck: record by default. Tapes live in /tapes (mount a volume there).
#   docker build -t tapedeck .
#   docker run --rm -p 8787:8787 -v "$PWD/tapes:/tapes" tapedeck
#   docker run --rm -p 8787:8787 -v "$PWD/tapes:/tapes" tapedeck replay --tape session --host 0.0.0.0
FROM node:22-alpine AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY config ./config
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-alpine
ENV NODE_ENV=production TAPEDECK_DIR=/tapes
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config
COPY side_effects.example.yaml ./
RUN mkdir -p /tapes && chown node:node /tapes
USER node
VOLUME ["/tapes"]
EXPOSE 8787
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["record", "--tape", "session", "--append", "--host", "0.0.0.0"]
