# tapedeck: record by default. Tapes live in /tapes (mount a volume there).
#   docker build -t tapedeck .
#   docker run --rm -p 8787:8787 -v "$PWD/tapes:/tapes" tapedeck
#   docker run --rm -p 8787:8787 -v "$PWD/tapes:/tapes" tapedeck replay --tape session --host 0.0.0.0
# The image holds tapedeck's single executable (npm run build:exe, built in the first stage from this checkout) on a
# slim Debian: no Node.js, no node_modules. The same Dockerfile builds linux/amd64 and linux/arm64.
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY config ./config
RUN npm run build:exe && cp release/tapedeck-linux-* /tapedeck && /tapedeck --version

FROM debian:bookworm-slim
ENV TAPEDECK_DIR=/tapes
COPY --from=build /tapedeck /usr/local/bin/tapedeck
COPY side_effects.example.yaml /usr/share/tapedeck/side_effects.example.yaml
RUN useradd --system --uid 1000 --home-dir /home/tapedeck --create-home tapedeck && mkdir -p /tapes && chown tapedeck:tapedeck /tapes
USER tapedeck
WORKDIR /home/tapedeck
VOLUME ["/tapes"]
EXPOSE 8787
ENTRYPOINT ["tapedeck"]
CMD ["record", "--tape", "session", "--append", "--host", "0.0.0.0"]
