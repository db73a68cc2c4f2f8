# Every tool version the install scripts pin, in one place. Sourced, not run.
#
# Go comes from the Go module proxy as the module golang.org/toolchain (the
# same archive `GOTOOLCHAIN=goX.Y.Z` downloads); Debian's golang-go (1.19) is
# older than grpcurl, kustomize and the Go stubs need. The checksums are the
# SHA-256 of the proxy's archive for each architecture.
GO_VERSION=1.25.14
GO_TOOLCHAIN_SHA256_amd64=1bb543a7745d4c6e045a1bfdb4c4d5a0b05b71ee8b8ff72c0a351598b26991a4
GO_TOOLCHAIN_SHA256_arm64=eee0803776a2a3d42f0620d7b0156277350debb5d39c99a9b61c8b12108fd92c

# Go programs, built with that Go through the module proxy.
GRPCURL_VERSION=v1.9.4                 # the reflection tests
KUSTOMIZE_VERSION=v5.5.0               # the deployment tests
PROTOC_GEN_GO_VERSION=v1.36.11         # the Go stubs
PROTOC_GEN_GO_GRPC_VERSION=v1.6.1      # the Go stubs
GHZ_VERSION=v0.120.0                   # the RPC benchmark
GRPC_HEALTH_PROBE_VERSION=v0.4.62      # the image test: probes the container as Kubernetes does
# grpc-health-probe's releases on the proxy need Go 1.26; the go command
# fetches this toolchain (module golang.org/toolchain) for that one build.
GRPC_HEALTH_PROBE_GO=go1.26.11

# Python code generator of the stubs (PyPI).
GRPCIO_TOOLS_VERSION=1.66.2
