# toolkit-gen (the gateway: `toolkit-gen serve`) in a small image that runs as a non-root user.
#
#   docker build -t toolkit-gateway .
#   docker run --rm -p 8808:8808 -v "$PWD/gateway:/etc/toolkit:ro" -v toolkit-catalog:/var/lib/toolkit \
#     -e GATEWAY_TOKEN_CI -e PETSTORE_TOKEN toolkit-gateway
#
# The configuration is mounted at /etc/toolkit/toolkit.toml. It must say `transport = "http"`,
# an address of 0.0.0.0 (which `[serve.auth]` must then protect), and a catalog file in a
# writable directory, such as `file = "/var/lib/toolkit/catalog.json"`.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY . .
# The `dist` profile (Cargo.toml): whole-program LTO, a smaller binary and fewer resident pages.
RUN cargo build --profile dist --locked -p toolkit-cli --bin toolkit-gen \
    && strip target/dist/toolkit-gen

FROM debian:bookworm-slim
# The system's CA certificates: the sources' HTTPS and the issuer's JWKS are verified with them.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home toolkit \
    && mkdir -p /etc/toolkit /var/lib/toolkit \
    && chown toolkit:toolkit /var/lib/toolkit
COPY --from=build /src/target/dist/toolkit-gen /usr/local/bin/toolkit-gen
USER 10001:10001
VOLUME ["/var/lib/toolkit"]
EXPOSE 8808
# SIGTERM stops the gateway gracefully (calls in flight get `shutdown_grace_seconds`).
STOPSIGNAL SIGTERM
ENTRYPOINT ["toolkit-gen", "serve", "--log-format", "json", "--config", "/etc/toolkit/toolkit.toml"]
